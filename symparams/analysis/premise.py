"""The premise under which the head-count proof reads a formula inferred from transformers' builds.

An inferred formula writes a head's width as the modeling code computes it,
``floor(H/A)``, and a size the config.json leaves out (``num_key_value_heads``)
at the value transformers gave it for this config's head count.  Whether the
count depends on A is a question about the head counts a config may have, so
the proof reasons, as a hand-written family's does, under a premise:

- every whole-number division by A is exact (``A | H``, so
  ``floor(H/A) = H/A``): the head counts admitted are those that divide;
- a size transformers computes from A when the config leaves it out moves
  with A, as transformers moves it (``G = A``: multi-head attention);
- where the config gives the key/value heads, a head count is admissible
  only when they divide it (``G | A``), as grouped-query attention needs.

The model under the premise (:func:`premised`) is an ordinary
:class:`~symparams.core.model.Model` whose tree writes each part per head
(``A·(H·(H/A))``), so the proof of a hand-written family applies to it
unchanged; its count at admissible head counts is the inferred formula's.

>>> from symparams.families.inferred import model
>>> olmo = model({"model_type": "olmo", "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96,
...               "num_hidden_layers": 2, "vocab_size": 100})
>>> p = premised(olmo)
>>> [c[1] for c in p.conditions]
['`num_key_value_heads` is left out of the config, so transformers sets G = A']
>>> p.model.tree.find("layers.self_attn.k_proj").as_written, p.model.count == olmo.count
(A*(H*(H/A)), True)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.blocks import Block, product_as_written, sum_as_written
from ..core.errors import SymparamsError
from ..core.family import HEAD_DIM, Constraint, Family
from ..core.model import Model
from ..core.symbols import A, D, G, H
from ..families.inferred_data import CeilDiv, FloorDiv

#: a key/value head count that does not divide the head count leaves query heads without one
KEY_VALUE_GROUPS = Constraint(
    A / G, "A={A} is not a multiple of G={G} (each key/value head serves A/G query heads)",
    (r"G \mid A", "G divides A: each key/value head serves A/G query heads", "G 整除 A：每个键值头服务 A/G 个查询头"))


@dataclass(frozen=True)
class Premise:
    """An inferred model read under the premise: ``model`` (its tree per head, floors of A exact, the sizes that
    follow A replaced, the divisions and key/value groups among its constraints) and ``conditions``, the sizes
    replaced as (LaTeX, English, Chinese)."""

    model: Model
    conditions: tuple[tuple[str, str, str], ...]


def premised(m: Model) -> Premise | None:
    """``m`` under the premise, or None where there is nothing to assume (a hand-written family, or an inferred
    formula without a division by A, a size following A or key/value heads)."""
    if not m.family.inferred or A not in m.symbols:
        return None
    follows = _following_a(m)
    replaced = {s: _exact(f.expr) for s, f in follows.items()}
    tree = _per_head(m.tree, replaced)
    floors = _divisions_by_a(m.tree.total.xreplace({s: f.expr for s, f in follows.items()}))
    # a size that follows as a fraction of A (D_v = H/A) is a whole number only where A divides
    floors += [fraction for e in replaced.values() if A in (fraction := sp.fraction(sp.together(e)))[1].free_symbols
               and fraction not in floors]
    if not (follows or floors or G in tree.symbols):
        return None
    conditions = [(rf"{sp.latex(s)} = {sp.latex(replaced[s])}",
                   f"`{f.field}` is left out of the config, so transformers sets {s} = {sp.sstr(replaced[s])}",
                   f"配置未给出 `{f.field}`，transformers 便取 {s} = {sp.sstr(replaced[s])}")
                  for s, f in follows.items()]
    constraints = [_divides(top, bottom, D in tree.symbols) for top, bottom in floors]
    if G in tree.symbols:
        constraints.append(KEY_VALUE_GROUPS)
    family = Family(m.family.name, m.family.title, lambda switches, head: tree, inferred=True,
                    constraints=(*_kept(m.family.constraints, replaced), *constraints))
    return Premise(_model(family, m, set(replaced)), tuple(conditions))


def premised_expr(m: Model, expr: sp.Expr) -> tuple[sp.Expr, tuple[str, ...]]:
    """``expr`` (a figure of inferred model ``m``, its FLOPs) under the premise: the sizes following A replaced,
    every whole-number division by A exact; with the premise's conditions in words (none for a hand-written
    family, whose ``expr`` is returned as it is)."""
    if not m.family.inferred or A not in m.symbols:
        return expr, ()
    follows = {s: _exact(f.expr) for s, f in _following_a(m).items()}
    out = _exact(expr.xreplace(follows))
    words = [f"{s} = {sp.sstr(e)}" for s, e in follows.items()]
    words += [f"{sp.sstr(bottom)} divides {sp.sstr(top)}" for top, bottom in _divisions_by_a(expr.xreplace(follows))]
    return out, tuple(words)


def _following_a(m: Model) -> dict:
    """Each size of ``m`` that transformers computes from A when the config leaves it out → its ``Follows``."""
    return {f.symbol: f for f in m.family.follows if f.symbol in m.symbols and A in f.expr.free_symbols}


def _model(family: Family, m: Model, replaced: set) -> Model:
    """The model of ``family`` at ``m``'s values (those replaced left out); without its head count where the
    premise does not admit it (the config's A does not divide H): the proof then asks of the ones it admits."""
    values = {s.name: v for s, v in m.values.items() if s not in replaced}
    try:
        return Model(family, values, name=m.name)
    except SymparamsError:
        return Model(family, {k: v for k, v in values.items() if k != "A"}, name=m.name)


def _kept(constraints, replaced: dict) -> tuple[Constraint, ...]:
    """The family's constraints with the replaced sizes put in, those left with nothing to check dropped."""
    out = []
    for c in constraints:
        expr = c.expr.xreplace(replaced)
        if expr.free_symbols:
            out.append(Constraint(expr, c.message, c.condition) if expr != c.expr else c)
    return tuple(out)


def _divides(top: sp.Expr, bottom: sp.Expr, own_width: bool) -> Constraint:
    """``bottom | top`` as a condition of the premise (``A | H``: the head dimension H/A, where the heads have no
    width D of their own)."""
    if (top, bottom) == (H, A) and not own_width:
        return HEAD_DIM
    a, b = sp.sstr(bottom), sp.sstr(top)
    return Constraint(top / bottom, f"{b} = {{value}}·{a} is not a whole multiple of {a}",
                      (rf"{sp.latex(bottom)} \mid {sp.latex(top)}",
                       f"{a} divides {b}: the modeling code's whole-number division {b} // {a} leaves nothing over",
                       f"{a} 整除 {b}：建模代码中的整数除法 {b} // {a} 没有余数"))


def _divisions_by_a(expr: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    """The whole-number divisions of ``expr`` whose terms hold A, as (numerator, denominator), each once."""
    found = [f.args for f in sp.preorder_traversal(expr) if isinstance(f, (FloorDiv, CeilDiv)) and f.has(A)]
    return list(dict.fromkeys(found))


def _exact(expr: sp.Expr, written: bool = False) -> sp.Expr:
    """``expr`` with every whole-number division holding A exact (``floor(H/A)`` is H/A), kept as a head's width
    ``(H/A)`` where ``written``."""
    def exact(top, bottom):
        return sp.UnevaluatedExpr(top / bottom) if written else top / bottom

    return expr.replace(lambda e: isinstance(e, (FloorDiv, CeilDiv)) and e.has(A), lambda e: exact(*e.args))


def _per_head(block: Block, replaced: dict) -> Block:
    """``block`` with the sizes of ``replaced`` put in and every division by A exact, each leaf written per head:
    ``A·(H·(H/A) + H/A)``."""
    def put(e):
        return _exact(sp.sympify(e).xreplace(replaced))

    if block.is_leaf:
        sizes = [sp.sympify(n).xreplace(replaced) for _, n in block.params]
        params = tuple((name, sp.expand(_exact(n))) for (name, _), n in zip(block.params, sizes))
        # a size that follows A stays visible as written: o_proj's A·(H·(H/A)) with D = H/A
        shown = {s: e if e.is_Atom else sp.UnevaluatedExpr(e) for s, e in replaced.items()}
        written = _written([sp.expand(sp.sympify(n)).xreplace(shown) for _, n in block.params])
        return Block(block.name, params=params, repeat=put(block.repeat), written=written,
                     shape=tuple(put(d) for d in block.shape), trainable=block.trainable, tied_to=block.tied_to,
                     ref=block.ref, title=block.title, used=block.used, kind=block.kind)
    return Block(block.name, children=tuple(_per_head(c, replaced) for c in block.children), repeat=put(block.repeat),
                 trainable=block.trainable, tied_to=block.tied_to, ref=block.ref, title=block.title, used=block.used,
                 kind=block.kind)


def _written(sizes: list[sp.Expr]) -> sp.Expr:
    """A leaf's parameters as written: per head where every one of them is a multiple of the same head count
    (``A·(H·(H/A) + H/A)``), with each head's width ``(H/A)`` kept."""
    terms = [_exact(t, written=True) for n in sizes for t in sp.Add.make_args(sp.expand(n))]
    for heads in (A, G):
        if terms and all(t.is_Mul and heads in t.args for t in terms):
            return product_as_written(heads, sum_as_written(*(sp.Mul(*(a for a in t.args if a != heads))
                                                               for t in terms)))
    return sum_as_written(*terms)
