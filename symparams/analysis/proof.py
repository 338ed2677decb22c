"""Does the parameter count depend on the number of attention heads A?

The proof is a derivation a student can follow, not a lookup of ``free_symbols``:

1. the premise: the side conditions (``A | H``: each head is ``H/A`` wide)
   under which the per-head form is valid;
2. every part of the model written with ``A`` (``terms``): one head's count,
   ``A`` heads side by side (``A·(H·(H/A) + H/A)``), multiplied out (for
   BERT ``H² + H``: ``A`` cancels), and how many such parts the model holds
   (BERT: ``3·L``, the query, key and value of every layer);
3. the total as written, identical terms holding A collected (``collected``):
   ``… + L·(3·A·(H·H/A + H/A) + …) + …``; no term but those of step 2
   holds ``A`` (``rest`` is free of it), so ``N`` does not depend on ``A``
   exactly when every one of them cancels it;
4. the formal check: ``N`` simplified to the closed form, read as an
   expression in the symbol ``A``, has ``∂N/∂A = 0``;
5. with values given, every admissible head count is substituted into the
   as-written total, exactly: the same number every time is the numeric
   witness; two different numbers are a counterexample;
6. when ``∂N/∂A ≠ 0`` the terms holding A are isolated (``dependence``), and
   a counterexample is found even for a symbolic model: at the model's own
   values, else at a preset's of the same family, else at small canonical
   sizes (``counterexample_values`` and ``counterexample_source`` say which),
   with head counts that satisfy every constraint (A | H, G | A, ...);
7. when the model has key/value heads G or heads of their own width D, the
   prover holds G/A and A·D fixed (``G = ρ·A``, ``D = W/A``), re-derives N
   and ∂N/∂A, says whether invariance is restored (``fixed_ratio``), and
   which parts still hold A (``fixed_ratio.remaining``).

Apart from the proof, ``rule_of_thumb`` is the common estimate
``N ≈ 12·L·H² + (V+P+S)·H`` and how close it comes, for the models it is
meant for (see :func:`rule_of_thumb`).

>>> from symparams import model
>>> p = model("bert-base").prove()
>>> p.invariant, p.derivative
(True, 0)
>>> sorted(set(p.witness.values()))
[109482240]
>>> len(p.witness)  # the divisors of 768
18
>>> [(t.copies, t.written, t.collapsed) for t in p.terms]  # query, key and value of each layer
[(3*L, A*(H*(H/A) + H/A), H**2 + H)]
>>> thumb = p.rule_of_thumb  # N ≈ 12·L·H² + (V+P+S)·H: 99.35% of the count
>>> sp.sstr(thumb.formula, order="none"), thumb.value, thumb.share
('12*L*H**2 + (V + P + S)*H', 108770304, 141628/142555)

Grouped-query attention (Llama 2 70B: A = 64 query heads, G = 8 key/value
heads) depends on A, and does not once G/A is held fixed:

>>> p = model("llama-2-70b").prove()
>>> p.invariant, p.dependence
(False, 2*G*H**2*L/A)
>>> p.counterexample
((64, 68714504192), (128, 68043415552))
>>> p.fixed_ratio.substitutions, p.fixed_ratio.derivative, p.fixed_ratio.values
({G: A*rho}, 0, {rho: 1/8})

T5's heads have their own width D, and a relative attention bias per stack:

>>> p = model("t5").prove()
>>> p.dependence
2*A*B + 12*A*D*H*L
>>> p.counterexample_source, p.counterexample
('preset t5-small', ((8, 60506624), (16, 79381504)))

With the heads' total width A·D = W held fixed, only the bias tables still hold A:

>>> p.fixed_ratio.substitutions, p.fixed_ratio.derivative
({D: W/A}, 2*B)
>>> [(t.copies, t.written) for t, _ in p.fixed_ratio.remaining]  # one bias table per stack
[(2, A*B)]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy as sp

from ..core.algebra import closed_form, small_divisors
from ..core.blocks import product_as_written, sum_as_written, tree_fact
from ..core.display import Displayable, presentation
from ..core.errors import SymparamsError
from ..core.family import HEAD_DIM
from ..core.formatting import json_number
from ..core.symbols import A, D, G, H
from ..core.values import parse_value
from ..families.presets import all_presets
from .premise import premised
from .thumb import RuleOfThumb, rule_of_thumb

#: the ratio G/A held fixed when the prover re-derives a grouped-query model
RHO = sp.Symbol("rho", positive=True, rational=True)
#: the heads' total width A·D held fixed when each head has its own width D
WIDTH = sp.Symbol("W", positive=True, integer=True)

#: small admissible sizes for a counterexample when neither the model nor a preset gives a value
CANONICAL = {"V": 1000, "V_d": 1000, "P": 128, "S": 2, "H": 64, "L": 2, "L_d": 2, "A": 8, "A_d": 8, "r": 4,
             "r_d": 4, "C": 2, "E": 32, "G": 2, "D": 16, "B": 32, "F": 256, "N_e": 8, "k_e": 2, "F_e": 64, "N_s": 1,
             "F_s": 64, "L_f": 1, "R_q": 32, "R_kv": 32, "D_n": 16, "D_r": 8, "D_v": 16, "R": 16}


@dataclass(frozen=True)
class Step:
    """One step of the derivation: a key for its prose, and expressions."""

    key: str
    lhs: sp.Expr | None = None
    rhs: sp.Expr | None = None
    paths: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.key}
        if self.lhs is not None:
            out["lhs"] = sp.sstr(self.lhs)
            out["lhs_latex"] = sp.latex(self.lhs, order="none")
        if self.rhs is not None:
            out["rhs"] = sp.sstr(self.rhs)
            out["rhs_latex"] = sp.latex(self.rhs)
        if self.paths:
            out["components"] = list(self.paths)
        return out


@dataclass(frozen=True)
class Condition:
    latex: str
    en: str
    zh: str


@dataclass(frozen=True)
class Held:
    """A quantity the re-derivation holds fixed: ``symbol`` becomes ``substitution`` in the held ``name``."""

    symbol: sp.Symbol        # G or D
    name: sp.Symbol          # ρ or W
    quantity: str            # G/A or A*D
    quantity_latex: str      # \frac{G}{A} or A D
    substitution: sp.Expr    # ρ·A or W/A
    condition: Condition



#: the quantities the re-derivation holds fixed when the count depends on A: the key/value heads in proportion
#: to A (G/A = ρ), and the heads' total width (A·D = W) where each head has its own width D
HELD = (
    Held(G, RHO, "G/A", r"\frac{G}{A}", RHO * A,
         Condition(r"G = \rho A", "G/A = ρ is held fixed: G = ρ·A key/value heads, a whole number dividing A",
                   "固定 G/A = ρ：键值头数 G = ρ·A，为整除 A 的整数")),
    Held(D, WIDTH, "A*D", r"A D", WIDTH / A,
         Condition(r"D = W / A", "A·D = W is held fixed: the heads' total width, each head W/A wide",
                   "固定 A·D = W：所有头的总宽度不变，每个头宽 W/A")),
)


@dataclass(frozen=True)
class HeadTerm:
    """The parts of the model written with A in one and the same form: ``copies`` of them in the model,
    each ``written`` per head (``A·(H·(H/A) + H/A)``) and ``collapsed``, multiplied out (``H² + H``).

    ``paths`` name the modules as ``named_parameters()`` does, ``titles`` are their title keys.
    """

    written: sp.Expr
    collapsed: sp.Expr
    copies: sp.Expr
    paths: tuple[str, ...]
    titles: tuple[str, ...]

    @property
    def split(self) -> tuple[sp.Symbol, sp.Expr] | None:
        """(head count, one head's count) when written as heads × one head: ``(A, H·(H/A) + H/A)``,
        ``(G, H·(H/A))`` for grouped key/value heads; an output projection read from the heads side by side,
        ``(A·D)·H``, is ``(A, D·H)`` (each head's D rows); None for any other form (``B·A``)."""
        args = self.written.args
        if not self.written.is_Mul or len(args) < 2:
            return None
        if args[0] in (A, G):
            return args[0], product_as_written(*args[1:])
        inner = args[0].args
        if args[0].is_Mul and len(inner) > 1 and inner[0] in (A, G):
            return inner[0], product_as_written(*inner[1:], *args[1:])
        return None

    @property
    def multiplies_out(self) -> bool:
        """Whether multiplying out is a step: the form divides by A somewhere (a head H/A wide); for
        ``A·(H·D)`` it would only reorder the factors."""
        return any(p.base == A and p.exp.is_negative for p in sp.preorder_traversal(self.written) if p.is_Pow)

    @property
    def total_written(self) -> sp.Expr:
        """All copies as written: ``3·L·A·(H·(H/A) + H/A)``."""
        return product_as_written(self.copies, self.written)

    @property
    def total(self) -> sp.Expr:
        """All copies multiplied out: ``3·H²·L + 3·H·L``."""
        return sp.expand(self.copies * self.collapsed)

    @property
    def cancels(self) -> bool:
        """Whether A is gone once the per-head form is multiplied out."""
        return A not in (self.copies * self.collapsed).free_symbols

    def to_dict(self) -> dict[str, Any]:
        return {"written": sp.sstr(self.written), "collapsed": sp.sstr(self.collapsed),
                "copies": sp.sstr(self.copies), "cancels": self.cancels, "components": list(self.paths)}


@dataclass(frozen=True)
class FixedRatio:
    """The model re-derived with the quantities of :data:`HELD` it has held fixed (G/A, A·D).

    ``held`` are those quantities; ``derivative`` is ∂N/∂A of the result,
    and ``invariant`` says whether it is 0.  ``values`` are the held
    quantities at the model's own values (ρ = G/A, W = A·D), where given.
    """

    held: tuple[Held, ...]
    written: sp.Expr
    closed_form: sp.Expr
    derivative: sp.Expr
    invariant: bool
    values: dict[sp.Symbol, sp.Rational] = field(default_factory=dict)
    #: every part written with A, G or D, and its count multiplied out once G and D are substituted
    terms: tuple[tuple[HeadTerm, sp.Expr], ...] = ()

    @property
    def substitutions(self) -> dict[sp.Symbol, sp.Expr]:
        return {h.symbol: h.substitution for h in self.held}

    @property
    def remaining(self) -> tuple[tuple[HeadTerm, sp.Expr], ...]:
        """The parts that still hold A with G/A and A·D held fixed (T5's relative bias tables), each with
        one copy's count then."""
        return tuple((t, c) for t, c in self.terms if A in (t.copies * c).free_symbols)

    def to_dict(self) -> dict[str, Any]:
        return {
            "held": [h.symbol.name for h in self.held],
            "substitutions": {h.symbol.name: sp.sstr(h.substitution) for h in self.held},
            "substitutions_latex": {h.symbol.name: sp.latex(h.substitution) for h in self.held},
            "closed_form": sp.sstr(self.closed_form),
            "closed_form_latex": sp.latex(self.closed_form),
            "derivative": sp.sstr(self.derivative),
            "invariant": self.invariant,
            "conditions": [h.condition.en for h in self.held],
            "conditions_latex": [h.condition.latex for h in self.held],
            "values": {k.name: sp.sstr(v) for k, v in self.values.items()},
            "remaining": [{**t.to_dict(), "held": sp.sstr(c)} for t, c in self.remaining],
        }


@dataclass(frozen=True)
class Proof(Displayable):
    """The verdict on head-count invariance and how it was reached."""

    model: str
    invariant: bool
    steps: tuple[Step, ...]
    conditions: tuple[Condition, ...]
    written: sp.Expr          # N as written (A visible)
    closed_form: sp.Expr      # N simplified
    derivative: sp.Expr       # ∂N/∂A, simplified
    dependence: sp.Expr       # the terms of N that hold A (0 when invariant)
    witness: dict[int, int] = field(default_factory=dict)   # admissible A → total (with values)
    counterexample: tuple[tuple[int, int], tuple[int, int]] | None = None
    #: G/A and A·D held fixed (G = ρ·A, D = W/A), re-derived; None for a model without G or D, or invariant anyway
    fixed_ratio: FixedRatio | None = None
    #: the values of the other symbols at which ``counterexample`` holds
    counterexample_values: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)
    #: where they come from: "model", "preset NAME" or "canonical" (small sizes picked by the prover)
    counterexample_source: str | None = None
    #: every part of the model written with A, identical forms together (BERT: Q, K, V of every layer)
    terms: tuple[HeadTerm, ...] = ()
    #: N(A) as written with identical terms holding A collected: ``L·(3·A·(H·(H/A) + H/A) + …)``
    collected: sp.Expr = sp.Integer(0)
    #: N ≈ 12·L·H² + (V+P+S)·H and how close it is, for a model of L layers of 12·H² weights; else None
    rule_of_thumb: RuleOfThumb | None = None

    @property
    def rest(self) -> sp.Expr:
        """N without the parts of :attr:`terms`: what holds no A (the proof's "no other term contains A")."""
        return sp.expand(self.closed_form - sum((t.total for t in self.terms), sp.Integer(0)))

    def __str__(self) -> str:
        """The proof in words, as ``symparams prove`` prints it."""
        return presentation().text(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "invariant": self.invariant,
            "conditions": [c.en for c in self.conditions],
            "conditions_latex": [c.latex for c in self.conditions],
            "closed_form": sp.sstr(self.closed_form),
            "derivative": sp.sstr(self.derivative),
            "dependence": sp.sstr(self.dependence),
            "steps": [s.to_dict() for s in self.steps],
            "witness": {str(a): n for a, n in self.witness.items()},
            "counterexample": (None if self.counterexample is None else
                               [{"A": a, "total": n} for a, n in self.counterexample]),
            "counterexample_values": {s.name: json_number(v) for s, v in self.counterexample_values.items()},
            "counterexample_source": self.counterexample_source,
            "fixed_ratio": None if self.fixed_ratio is None else self.fixed_ratio.to_dict(),
            "terms": [t.to_dict() for t in self.terms],
            "collected": sp.sstr(self.collected, order="none"),
            "rule_of_thumb": None if self.rule_of_thumb is None else self.rule_of_thumb.to_dict(),
        }


def _written_total(tree) -> sp.Expr:
    """N(A): the sum of every block as written, evaluated but not simplified."""
    terms = []
    for _, block, copies in tree.walk():
        if block.is_leaf and block.tied_to is None:
            terms.append(copies * block.as_written.doit())
    return sp.Add(*terms)


def _head_terms(tree, symbols=frozenset({A})) -> tuple[HeadTerm, ...]:
    """The parts of ``tree`` written with any of ``symbols``, identical forms together, in the tree's order;
    the modules named as ``named_parameters()`` names them."""
    groups: dict[sp.Expr, tuple[list, list, list]] = {}
    root = tree.name if tree.ref is None else tree.ref
    for (_, block, copies), (path, _) in zip(tree.walk(), tree.reference_paths()):
        if not block.is_leaf or block.tied_to is not None:
            continue
        if not (copies * block.as_written).free_symbols & symbols:
            continue
        relative = path[len(root) + 1:] if root and path.startswith(root + ".") else path
        if block.ref == "":  # a part of a fused tensor (GPT-2's c_attn): the tensor, and which part
            relative = f"{relative} ({block.name})"
        counts, paths, titles = groups.setdefault(block.as_written, ([], [], []))
        counts.append(copies)
        paths.append(relative)
        titles.append(block.title_key)
    # a module in two kinds of layer (DeepSeek's dense and MoE layers) is one path: named once
    return tuple(HeadTerm(w, sp.expand(w.doit()), sp.Add(*counts), tuple(dict.fromkeys(paths)),
                          tuple(dict.fromkeys(titles)))
                 for w, (counts, paths, titles) in groups.items())


def _collected(expr: sp.Expr) -> sp.Expr:
    """``expr`` as written, identical terms holding A in each sum gathered where the first stands:
    ``A·(…) + A·(…) + A·(…)`` becomes ``3·A·(…)``.  Terms without A stay apart: two ``2·H`` are two
    LayerNorms a reader finds in the text."""
    if not (expr.is_Add or expr.is_Mul):
        return expr
    args = [_collected(a) for a in expr.args]
    if expr.is_Mul:
        return sp.Mul(*args, evaluate=False)
    order: list = []
    counts: dict = {}
    for a in args:
        key = a if a.has(A) else object()  # an object() key is never met again
        if key not in counts:
            order.append((key, a))
            counts[key] = 0
        counts[key] += 1
    return sum_as_written(*(product_as_written(counts[key], a) for key, a in order))


def _admissible(values, constraints, a0=None) -> list[int] | None:
    """Head counts that satisfy every constraint at ``values``; None when H has too many divisors (or
    too large a factor) to list them in a moment, and so no witness is given.

    The candidates are the divisors of H (every head count a family with
    ``A | H`` admits; where H is not a symbol of the model, of what a
    constraint divides by A, RoFormer's E) and, for families whose heads have
    their own width (T5), also ``a0`` and ``2·a0``.  The answer depends only on
    the values of H and of the constraints' symbols, so presets share it.
    """
    if H not in values:
        divided = [n for n, d in (sp.fraction(c.expr) for c in constraints) if d == A and n in values]
        if not divided:
            return []
        values = {**values, H: values[divided[0]]}
    exprs = tuple(c.expr for c in constraints)
    given = tuple((s, values.get(s)) for s in _constraint_symbols(exprs))
    found = _admissible_cached(tuple(constraints), given, a0)
    return None if found is None else list(found)


@lru_cache(maxsize=256)
def _constraint_symbols(exprs) -> tuple:
    """H and the symbols of the constraints (but A, which the candidates replace), in a fixed order."""
    found = set().union(*(e.free_symbols for e in exprs)) | {H}
    return tuple(sorted(found - {A}, key=lambda s: s.name))


@lru_cache(maxsize=4096)
def _admissible_cached(constraints: tuple, given: tuple, a0) -> tuple[int, ...] | None:
    found = _admissible_uncached({s: v for s, v in given if v is not None}, constraints, a0)
    return None if found is None else tuple(found)


def _admissible_uncached(values, constraints, a0) -> list[int] | None:
    divisors = small_divisors(int(values[H]))
    if divisors is None:
        return None
    out = []
    extra = {a0, 2 * a0} if a0 else set()
    for a in sorted(set(divisors) | extra):
        trial = {**values, A: sp.Integer(a)}
        if all(not c.expr.free_symbols <= set(trial) or
               (lambda v: v.is_Integer and v > 0)(c.expr.xreplace(trial))
               for c in constraints):
            out.append(a)
    return out


def _admissible_heads(m) -> list[int] | None:
    """Head counts that satisfy every constraint at the model's other values."""
    return _admissible(m.values, m.family.constraints, int(m.values[A]) if A in m.values else None)


def _pair(totals: dict[int, int], a0) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Two head counts with different totals: ``a0`` and its nearest neighbour, else the extremes."""
    if a0 in totals:
        others = [a for a in totals if totals[a] != totals[a0]]
        if not others:
            return None
        b = min(others, key=lambda a: (max(Fraction(a, a0), Fraction(a0, a)), -a))
        return (a0, totals[a0]), (b, totals[b])
    distinct = sorted(set(totals.values()))
    if len(distinct) < 2:
        return None
    by_total = {n: a for a, n in sorted(totals.items())}
    return (by_total[distinct[0]], distinct[0]), (by_total[distinct[-1]], distinct[-1])


@lru_cache(maxsize=256)
def _expanded(written: sp.Expr) -> sp.Expr:
    """N(A) as written, expanded: once per tree, so each model only substitutes its values."""
    return sp.expand(written)


def _totals(written, values, heads) -> dict[int, int]:
    fixed = sp.expand(_expanded(written).xreplace(values))
    return {a: int(sp.expand(fixed.xreplace({A: sp.Integer(a)}))) for a in heads}


def _candidates(m):
    """For a model with free symbols: values for every symbol but A (the model's own, the rest from a
    preset of its family, else canonical sizes), a head count to start at, and where they come from."""
    need = [s for s in m.symbols if s != A]
    own = {s: v for s, v in m.values.items() if s != A}
    a_own = int(m.values[A]) if A in m.values else None
    for preset in all_presets().values():
        if preset.family != m.family.name:
            continue
        given = {s: parse_value(s.name, preset.values[s.name]) for s in need if s.name in preset.values}
        if all(s in given or s in own for s in need):
            a0 = a_own or (int(preset.values["A"]) if "A" in preset.values else None)
            yield {**given, **own}, a0, f"preset {preset.name}"
    picked = {s: parse_value(s.name, CANONICAL.get(s.name, 2)) for s in need if s not in own}
    yield {**picked, **own}, a_own or CANONICAL["A"], "canonical"


def _counterexample(m, written):
    for values, a0, source in _candidates(m):
        pair = _pair(_totals(written, values, _admissible(values, m.family.constraints, a0) or []), a0)
        if pair is not None:
            return pair, values, source
    return None, {}, None


def _fixed_ratio(m, written) -> FixedRatio | None:
    held = tuple(h for h in HELD if h.symbol in m.symbols)
    if not held:
        return None
    substitutions = {h.symbol: h.substitution for h in held}
    fixed = written.xreplace(substitutions)
    derivative = sp.cancel(sp.together(sp.diff(fixed, A)))
    values = {h.name: v for h in held if (v := _held_value(h, m.values)) is not None}
    # every part written with A, or with what now stands for ρ·A or W/A, multiplied out at G = ρ·A, D = W/A
    terms = tuple((t, sp.expand(t.collapsed.xreplace(substitutions)))
                  for t in _head_terms(m.tree, frozenset({A, *substitutions})))
    return FixedRatio(held, fixed, closed_form(fixed), derivative, derivative == 0, values, terms)


def _held_value(held: Held, values) -> sp.Rational | None:
    """G/A or A·D at the model's values; None unless both are given."""
    if held.symbol not in values or A not in values:
        return None
    if held.symbol == G:
        return sp.Rational(values[G], values[A])
    return sp.Integer(values[held.symbol] * values[A])


@tree_fact
def _symbolic(tree) -> tuple[sp.Expr, sp.Expr, tuple[HeadTerm, ...], sp.Expr]:
    """N(A) as written, ∂N/∂A, the parts written with A and N(A) collected: they depend on the tree only."""
    written = _written_total(tree)
    # ∂N/∂A of N(A) as written, expanded first: each per-head term is multiplied out (where A
    # cancels, it is gone), so the derivative is of a sum of monomials and cheap to simplify.
    derivative = sp.cancel(sp.together(sp.diff(_expanded(written), A)))
    return written, derivative, _head_terms(tree), _collected(tree.total_as_written)


def prove(m) -> "Proof":
    """Prove (or refute) that ``m``'s count does not depend on ``A``; an inferred formula under its premise
    (:mod:`.premise`: A | H, the sizes transformers computes from A moving with it)."""
    premise = premised(m)
    if premise is None:
        return _proved(m)
    p = _proved(premise.model)
    if p.derivative.has(sp.Derivative) or p.fixed_ratio is not None and p.fixed_ratio.derivative.has(sp.Derivative):
        raise SymparamsError(f"{m.name}: the count holds a division by A that the proof cannot make exact")
    return replace(p, conditions=tuple(Condition(*c) for c in premise.conditions) + p.conditions)


def _proved(m) -> "Proof":
    tree = m.tree
    written, derivative, terms, collected = _symbolic(tree)
    closed = m.closed_form
    invariant = derivative == 0
    dependence = sp.Add(*(t for t in sp.Add.make_args(sp.expand(closed)) if t.has(A)))
    used = set(m.symbols)
    # heads of a width D of their own: H/A is no head's dimension, and the proof does not rest on A | H
    stated = [c for c in m.family.constraints if not (c is HEAD_DIM and D in used)]
    conditions = tuple(Condition(*c.condition) for c in stated
                       if c.condition is not None and A in c.expr.free_symbols and c.expr.free_symbols <= used)
    steps = [Step("per_head", lhs=t.written, rhs=t.collapsed, paths=t.paths) for t in terms]
    steps += [
        Step("total_as_written", lhs=tree.total_as_written),
        Step("simplified", rhs=closed),
        Step("derivative", rhs=derivative),
    ]
    fixed = None
    if not invariant:
        steps.append(Step("dependence", rhs=dependence))
        fixed = _fixed_ratio(m, written)
        if fixed is not None:
            steps += [Step("fixed_ratio", lhs=sp.Tuple(*fixed.substitutions), rhs=sp.Tuple(*fixed.substitutions.values())),
                      Step("fixed_ratio_simplified", rhs=fixed.closed_form),
                      Step("fixed_ratio_derivative", rhs=fixed.derivative)]

    witness: dict[int, int] = {}
    counterexample, at, source = None, {}, None
    others = {s: v for s, v in m.values.items() if s != A}
    heads = _admissible_heads(m) if A in m.symbols and set(m.symbols) - {A} <= set(others) else None
    if heads is not None:
        witness = _totals(written, others, heads)
        counterexample = _pair(witness, int(m.values[A]) if A in m.values else None)
        if counterexample is not None:
            at, source = others, "model"
        steps.append(Step("witness"))
    elif not invariant and A in m.symbols:
        counterexample, at, source = _counterexample(m, written)
    if counterexample is not None:
        steps.append(Step("counterexample"))
    return Proof(m.name, invariant, tuple(steps), conditions, written, closed, derivative,
                 dependence, witness, counterexample, fixed, dict(at), source, terms, collected, rule_of_thumb(m))
