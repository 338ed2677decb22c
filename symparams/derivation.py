"""Model → the data a derivation document shows.

A :class:`Derivation` walks a model's Block tree top-down, like the articles:
one :class:`Item` per component and part, each with its formula as written
(``A`` kept visible in the per-head forms), the same formula with the
numbers substituted but not evaluated, the count, and its exact share of the
total.  Then the summary table, the closed form, the head-count proof and the
notes comparing with the source articles.

Every number and formula comes from the model tree; the templates only lay
them out (and look up prose by the items' title keys).  Nothing here knows
the path of a BERT module: it works for any family.

>>> from symparams import model
>>> d = derive(model("bert-base"))
>>> [s.path for s in d.sections]
['embeddings', 'encoder', 'pooler']
>>> d.sections[0].formula
'\\\\left(V + P + S\\\\right) \\\\cdot H + 2 \\\\cdot H'
>>> d.sections[0].substituted
'\\\\left(30522 + 512 + 2\\\\right) \\\\times 768 + 2 \\\\times 768'
>>> d.sections[0].count, percent(d.sections[0].share)
(23837184, '21.77%')
>>> sum(s.share for s in d.sections)
1
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .blocks import ONE, Block, _add, _mul
from .errors import SymparamsError
from .family import parse_value
from .format import percent, ratio, thousands
from .model import Model, closed_form
from .symbols import SYMBOLS, A

__all__ = ["Derivation", "Item", "SummaryRow", "ProofView", "derive", "latex", "latex_numbers",
           "math_count"]


# -- LaTeX of expressions ------------------------------------------------------

_LATEX: dict = {}
_NUMBERS: dict = {}
_CLOSED: dict = {}
_HOLE = re.compile("\u27e6([^\u27e7]+)\u27e7")


def latex(expr: sp.Expr, *, written: bool = False) -> str:
    """``expr`` in LaTeX with ``\\cdot`` products; ``written`` keeps the order as written.

    The explicit ``\\cdot`` keeps the formula readable and unambiguous for a
    LaTeX parser (``A \\left(…\\right)`` could be read as a function call).
    Memoized: presets of a family share their formulas.
    """
    key = (expr, written)
    text = _LATEX.get(key)
    if text is None:
        text = _LATEX[key] = sp.latex(expr, mul_symbol="dot", **({"order": "none"} if written else {}))
    return text


def latex_numbers(expr: sp.Expr, values: dict, *, written: bool = False) -> str:
    """``expr`` with each symbol printed as its value, products as ``\\times``; not evaluated.

    Printed once per expression with placeholder names, which the values then
    fill in (the same text ``sympy.latex(..., symbol_names=values)`` gives).
    """
    by_name = {s.name: v for s, v in values.items()}
    return _HOLE.sub(lambda mo: _value_latex(by_name[mo.group(1)]), _numbers_pattern(expr, written))


def _numbers_pattern(expr: sp.Expr, written: bool) -> str:
    """:func:`latex_numbers`'s text with a hole ``⟦name⟧`` for each symbol, printed once per expression."""
    key = (expr, written)
    pattern = _NUMBERS.get(key)
    if pattern is None:
        names = {s: f"\u27e6{s.name}\u27e7" for s in expr.free_symbols}
        pattern = _NUMBERS[key] = sp.latex(expr, mul_symbol="times", symbol_names=names,
                                           **({"order": "none"} if written else {}))
    return pattern


def _fill_numbers(expr: sp.Expr, texts: dict, *, written: bool = False) -> str:
    """:func:`latex_numbers` with the values already printed (``texts``: symbol name → LaTeX)."""
    return _HOLE.sub(lambda mo: texts[mo.group(1)], _numbers_pattern(expr, written))


def _value_latex(v) -> str:
    return str(v) if v.is_Integer else sp.latex(v)


_DONE: dict = {}


def _evaluated(expr: sp.Expr) -> sp.Expr:
    """``expand(expr.doit())``, memoized: the count an as-written form stands for."""
    out = _DONE.get(expr)
    if out is None:
        out = _DONE[expr] = sp.expand(expr.doit())
    return out


def simplified(expr: sp.Expr) -> sp.Expr:
    """:func:`symparams.model.closed_form`, memoized."""
    out = _CLOSED.get(expr)
    if out is None:
        out = _CLOSED[expr] = closed_form(expr)
    return out


def math_count(n) -> str:
    """A count for math mode, thousands grouped: ``23{,}837{,}184``."""
    return thousands(n, "{,}")


# -- the data ---------------------------------------------------------------------

@dataclass(frozen=True)
class Item:
    """One component or part of a model, as a document shows it.

    A group with a single child is shown as one item (``pooler`` → its
    ``dense``); identical consecutive siblings are merged into one item with
    a ``multiplicity`` (``query``, ``key``, ``value`` → ``3·A·(…)``).

    ``expr`` is one copy's count (times the multiplicity) as the document
    writes it: a leaf's count as written (``A`` visible), a group's given
    written form or else its simplified count.  ``formula`` is its LaTeX,
    ``substituted`` the same with numbers (for a group without a written
    form: the sum of its parts' counts, as the articles write
    ``12(2362368+1536+4722432+1536)``).  ``total_*`` is for all ``repeat``
    copies; ``contribution`` and ``share`` count every copy in the model.
    """

    path: str
    block_path: str
    names: tuple[str, ...]          # module names (a chain of single children: "pooler.dense")
    keys: tuple[str, ...]           # title keys; a chain's second key says what its leaf is
    depth: int
    leaf: bool
    multiplicity: int
    repeat: sp.Expr
    repeat_value: int
    copies: sp.Expr
    copies_value: int
    shape: str
    shape_values: str
    expr: sp.Expr
    formula: str
    collapsed: str | None
    substituted: str
    count: int
    total_expr: sp.Expr
    total_formula: str
    total_substituted: str
    total: int
    contribution: int
    share: sp.Rational
    tied_to: str | None
    untied: int
    trainable: bool
    per_head: bool
    cancels: bool
    children: tuple["Item", ...] = ()

    @property
    def key(self) -> str:
        return self.keys[0]

    def walk(self):
        """This item and every item below it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class SummaryRow:
    """A row of the summary table (a component, or one of its parts)."""

    level: int
    path: str
    names: tuple[str, ...]
    keys: tuple[str, ...]
    repeat: str          # "L" (LaTeX) when the part repeats, else ""
    repeat_value: int
    shape: str
    shape_values: str
    formula: str         # simplified, all copies
    count: int           # all copies
    share: sp.Rational
    tied_to: str | None
    trainable: bool


@dataclass(frozen=True)
class ProofView:
    """The head-count proof (:class:`symparams.proof.Proof`) as LaTeX strings and numbers."""

    invariant: bool
    per_head: tuple[tuple[str, str, tuple[str, ...]], ...]   # (as written, evaluated, paths)
    written: str
    closed: str
    derivative: str
    dependence: str | None
    conditions: tuple[tuple[str, str, str], ...]             # (LaTeX, en, zh)
    heads: tuple[int, ...]
    totals: tuple[int, ...]
    counterexample: tuple[tuple[int, int], tuple[int, int]] | None
    has_heads: bool
    counterexample_source: str = ""                          # "model", "preset NAME", "canonical"
    counterexample_values: tuple[tuple[str, str], ...] = ()  # (symbol LaTeX, value LaTeX)
    fixed_ratio: dict | None = None                          # G = ρA re-derived: LaTeX strings


@dataclass(frozen=True)
class Derivation:
    """Everything a derivation document shows, computed once per model."""

    name: str
    family: str
    family_title: dict
    preset: str | None
    preset_title: dict | None
    changes: tuple[tuple[str, str, str], ...]   # (symbol or switch, preset value, this value)
    head: str | None
    symbols: tuple[dict, ...]
    switches: tuple[dict, ...]
    sections: tuple[Item, ...]
    summary: tuple[SummaryRow, ...]
    total: int
    trainable: int
    closed_form: sp.Expr
    closed_formula: str
    closed_substituted: str
    proof: ProofView
    notes: tuple = ()
    related: tuple = ()
    largest: Item | None = None
    outline: tuple[dict, ...] = field(default=())

    @property
    def items(self):
        """Every item of every section, depth first."""
        for s in self.sections:
            yield from s.walk()


# -- building ------------------------------------------------------------------------

def _unwrap(block: Block, path: str, repeat: sp.Expr):
    """Follow single-child groups down.

    Returns (innermost block, its path, product of repeats, run): ``run`` is
    the list of identical leaves when the innermost group holds nothing else
    (BERT's ``self``: query, key, value), else None.
    """
    while block.children and block.tied_to is None and block.written is None:
        runs = _runs(block.children)
        if len(runs) == 1 and len(runs[0]) > 1 and block.children[0].repeat == 1:
            return block, path, repeat, runs[0]
        if len(block.children) != 1:
            break
        block = block.children[0]
        path = f"{path}.{block.name}"
        repeat = repeat * block.repeat
    return block, path, repeat, None


def _same(a: Block, b: Block) -> bool:
    return (a.is_leaf and b.is_leaf and a.as_written == b.as_written and a.shape == b.shape
            and a.repeat == b.repeat and a.tied_to == b.tied_to and a.trainable == b.trainable
            and bool(a.tied_to) == bool(b.tied_to))


def _runs(children):
    """Consecutive identical leaves grouped: [[query, key, value], [dense], ...]."""
    runs: list[list[Block]] = []
    for child in children:
        if runs and _same(runs[-1][-1], child) and _same(runs[-1][0], child):
            runs[-1].append(child)
        else:
            runs.append([child])
    return runs


def _sum_latex(parts) -> str:
    """``sympy.latex(_add(*parts), order="none")`` for whole numbers ``parts`` (none negative)."""
    terms = [str(int(p)) for p in parts if p != 0]
    return " + ".join(terms) if terms else "0"


def _times_latex(a: int, b: int) -> str:
    """``sympy.latex(Mul(Integer(a), Integer(b), evaluate=False), mul_symbol="times")`` for whole a, b >= 0."""
    return f"{int(a)} \\times {int(b)}"


@dataclass(frozen=True)
class _Plan:
    """What an :class:`Item` shows that depends on the Block tree only (symbols, formulas, LaTeX).

    Built once per tree; :meth:`_Builder.item` adds a model's numbers.
    """

    path: str
    block_path: str
    names: tuple[str, ...]
    keys: tuple[str, ...]
    depth: int
    leaf: bool
    multiplicity: int
    repeat: sp.Expr
    repeated: bool          # repeat != 1
    copies: sp.Expr
    shape: str
    shape_dims: tuple       # the shape's sizes, evaluated (doit), still in symbols
    expr: sp.Expr
    written: bool           # a group's form as written (else its simplified count)
    formula: str
    collapsed: str | None
    count: sp.Expr          # a group's count in symbols (unused for a leaf)
    size: sp.Expr
    total_expr: sp.Expr
    total_formula: str
    tied: str | None
    trainable: bool
    per_head: bool
    cancels: bool
    reps: sp.Expr | None    # copies × repeat, expanded: for a summary row (depth 0 or 1), else None
    row_repeat: str
    row_formula: str
    children: tuple["_Plan", ...] = ()


def _plan(run: list[Block], path: str, depth: int, copies: sp.Expr, trainable: bool) -> _Plan:
    outer = run[0]
    mult = len(run)
    inner, inner_path, repeat, same = _unwrap(outer, path, outer.repeat)
    trainable = trainable and outer.trainable and inner.trainable
    names = tuple(b.name for b in run)
    keys = tuple(dict.fromkeys(b.title_key for b in run))
    if mult == 1 and inner is not outer:
        names = (outer.name + inner_path[len(path):],)  # the module path down the chain: pooler.dense
        if outer.title is None and inner.title is not None and depth > 0:
            keys = (inner.title,)  # an untitled wrapper (BERT's "intermediate") takes its part's title
        elif inner.is_leaf and inner.title is not None and inner.title != keys[0]:
            keys = (keys[0], inner.title)  # "Task head", then what it is: "Classifier"
    if same is not None:  # a group of identical leaves only: one leaf item, several times
        inner_path = f"{inner_path}.{same[0].name}"
        inner, mult, names = same[0], len(same), tuple(b.name for b in same)
        trainable = trainable and inner.trainable
    tied = inner.tied_to
    children: tuple[_Plan, ...] = ()
    written = False
    count = ONE
    if inner.is_leaf:
        one = inner.as_written
        expr = _mul(mult, one) if mult != 1 else one
        formula = latex(expr, written=True)
    else:
        inner_copies = copies * repeat
        children = tuple(
            _plan(r, f"{inner_path}.{r[0].name}", depth + 1, inner_copies, trainable)
            for r in _runs(inner.children))
        if inner.written is not None:
            expr = inner.written
            formula = latex(expr, written=True)
            written = True
        else:
            expr = simplified(inner.count)
            formula = latex(expr)
        count = inner.count
    size = _evaluated(expr)
    # the per-head story is told where the form is as written (a group's simplified count has no story)
    per_head = A in expr.free_symbols and (inner.is_leaf or inner.written is not None)
    cancels = per_head and A not in size.free_symbols
    collapsed = latex(size) if per_head else None
    if repeat != 1:
        total_expr = _mul(repeat, expr)
        total_formula = latex(total_expr, written=inner.is_leaf or inner.written is not None)
    else:
        total_expr, total_formula = expr, formula
    if inner.is_leaf and inner.shape:
        shape = "[" + ", ".join(latex(d, written=True) for d in inner.shape) + "]"
        dims = tuple(sp.sympify(d).doit() for d in inner.shape)
    else:
        shape, dims = "", ()
    if depth <= 1:  # a row of the summary table: a component (depth 0) or one of its parts
        reps = sp.expand(copies * repeat)
        row_repeat = "" if reps == 1 else latex(reps)
        row_formula = "0" if tied else latex(simplified(sp.expand(copies * repeat * size)))
    else:
        reps, row_repeat, row_formula = None, "", ""
    return _Plan(
        path=path, block_path=inner_path, names=names, keys=keys, depth=depth, leaf=inner.is_leaf,
        multiplicity=mult, repeat=repeat, repeated=repeat != 1, copies=copies, shape=shape, shape_dims=dims,
        expr=expr, written=written, formula=formula, collapsed=collapsed, count=count, size=size,
        total_expr=total_expr, total_formula=total_formula, tied=tied, trainable=trainable, per_head=per_head,
        cancels=cancels, reps=reps, row_repeat=row_repeat, row_formula=row_formula, children=children)


_PLANS: dict[int, tuple[Block, tuple[_Plan, ...]]] = {}


def _plans(tree: Block) -> tuple[_Plan, ...]:
    """The plans of the tree's top-level components, built once per tree."""
    hit = _PLANS.get(id(tree))
    if hit is None or hit[0] is not tree:
        if len(_PLANS) > 256:
            _PLANS.clear()
        hit = _PLANS[id(tree)] = (tree, tuple(_plan([child], child.name, 0, tree.repeat, tree.trainable)
                                              for child in tree.children))
    return hit[1]


class _Builder:
    def __init__(self, m: Model, total: int):
        self.m = m
        self.values = dict(m.values)
        self.texts = {s.name: _value_latex(v) for s, v in self.values.items()}
        self.grand = total

    def number(self, expr) -> int:
        """``expr`` at the model's values: an exact whole number."""
        value = sp.sympify(expr).xreplace(self.values)
        if not value.is_Integer:
            value = sp.expand(value.doit())
        if not value.is_Integer:
            raise SymparamsError(f"{self.m.name}: a part's count is not a whole number ({value})")
        return int(value)

    def item(self, plan: "_Plan") -> Item:
        """The item of ``plan`` at this model's values (the numbers in the order they always were)."""
        children: tuple[Item, ...] = ()
        if plan.leaf:
            substituted = _fill_numbers(plan.expr, self.texts, written=True)
            count = 0 if plan.tied else self.number(plan.size)
        else:
            children = tuple(self.item(c) for c in plan.children)
            if plan.written:
                substituted = _fill_numbers(plan.expr, self.texts, written=True)
            else:
                parts = [c.total for c in children if not c.tied_to]
                # the sum of the parts' counts, as the articles write it; one part needs no sum
                substituted = _sum_latex(parts) if len(parts) > 1 else ""
            count = self.number(plan.count)
        untied = self.number(plan.size) if plan.tied else count
        rep_value = self.number(plan.repeat)
        if plan.repeated:
            total_substituted = _times_latex(rep_value, count)
        else:
            total_substituted = substituted
        total = rep_value * count
        copies_value = self.number(plan.copies)
        contribution = copies_value * total
        num_shape = ("[" + ", ".join(str(self.number(d)) for d in plan.shape_dims) + "]") if plan.shape else ""
        item = Item(
            path=plan.path, block_path=plan.block_path, names=plan.names, keys=plan.keys, depth=plan.depth,
            leaf=plan.leaf, multiplicity=plan.multiplicity, repeat=plan.repeat, repeat_value=rep_value,
            copies=plan.copies, copies_value=copies_value, shape=plan.shape, shape_values=num_shape,
            expr=plan.expr, formula=plan.formula, collapsed=plan.collapsed, substituted=substituted, count=count,
            total_expr=plan.total_expr, total_formula=plan.total_formula, total_substituted=total_substituted,
            total=total, contribution=contribution, share=sp.Rational(contribution, self.grand),
            tied_to=plan.tied, untied=untied * rep_value, trainable=plan.trainable, per_head=plan.per_head,
            cancels=plan.cancels, children=children)
        self.plans[id(item)] = plan
        return item

    def sections(self) -> tuple[Item, ...]:
        self.plans: dict[int, _Plan] = {}
        return tuple(self.item(p) for p in _plans(self.m.tree))

    def summary(self, sections) -> tuple[SummaryRow, ...]:
        rows = []
        for s in sections:
            rows.append(self.row(s, 1))
            if not s.leaf:
                rows.extend(self.row(c, 2) for c in s.children)
        return tuple(rows)

    def row(self, item: Item, level: int) -> SummaryRow:
        plan = self.plans[id(item)]
        return SummaryRow(
            level=level, path=item.path, names=item.names, keys=item.keys,
            repeat=plan.row_repeat, repeat_value=self.number(plan.reps),
            shape=item.shape, shape_values=item.shape_values, formula=plan.row_formula, count=item.contribution,
            share=item.share, tied_to=item.tied_to, trainable=item.trainable)

    def proof(self) -> ProofView:
        p = self.m.prove()
        per_head, written, closed, derivative, dependence = [], "", "", "0", None
        for step in p.steps:
            if step.key == "per_head":
                per_head.append((latex(step.lhs, written=True), latex(step.rhs), tuple(step.paths)))
            elif step.key == "total_as_written":
                written = latex(step.lhs, written=True)
            elif step.key == "simplified":
                closed = latex(step.rhs)
            elif step.key == "derivative":
                derivative = latex(step.rhs)
            elif step.key == "dependence":
                dependence = latex(step.rhs)
        heads = tuple(sorted(p.witness))
        totals = tuple(sorted(set(p.witness.values())))
        fixed = getattr(p, "fixed_ratio", None)
        if fixed is not None:
            fixed = {"symbol": sp.latex(fixed.symbol), "ratio": sp.latex(fixed.ratio),
                     "substitution": latex(fixed.substitution), "closed": latex(fixed.closed_form),
                     "derivative": latex(fixed.derivative), "invariant": bool(fixed.invariant),
                     "condition": (fixed.condition.latex, fixed.condition.en, fixed.condition.zh),
                     "value": "" if fixed.value is None else sp.latex(fixed.value)}
        values = getattr(p, "counterexample_values", None) or {}
        return ProofView(
            invariant=bool(p.invariant), per_head=tuple(per_head), written=written, closed=closed,
            derivative=derivative, dependence=dependence,
            conditions=tuple((c.latex, c.en, c.zh) for c in p.conditions), heads=heads, totals=totals,
            counterexample=p.counterexample, has_heads=A in self.m.symbols,
            counterexample_source=getattr(p, "counterexample_source", None) or "",
            counterexample_values=tuple((sp.latex(k), sp.latex(v)) for k, v in values.items()),
            fixed_ratio=fixed)


def _preset_of(m: Model):
    """The preset ``m`` is named after (or None), and what ``m`` changes in it."""
    from .presets import PRESETS

    preset = PRESETS.get(m.name)
    if preset is None or preset.family != m.family.name:
        return None, ()
    changes = []
    for key, raw in preset.values.items():
        sym = SYMBOLS[key].symbol
        if sym in m.values and m.values[sym] != parse_value(key, raw):
            changes.append((key, ratio(parse_value(key, raw)), ratio(m.values[sym])))
    resolved = m.family.resolve(dict(preset.switches), m.head)
    for key, value in m.switches.items():
        if resolved.get(key) != value:
            changes.append((key, _switch_text(resolved.get(key)), _switch_text(value)))
    return preset, tuple(changes)


def _switch_text(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _symbols(m: Model) -> tuple[dict, ...]:
    rows = []
    for s in m.symbols:
        info = SYMBOLS.get(s.name)
        value = m.values.get(s)
        rows.append({
            "name": s.name, "latex": sp.latex(s),
            "en": info.en if info else s.name, "zh": info.zh if info else s.name,
            "value": ratio(value) if value is not None else "",
            "value_latex": sp.latex(value) if value is not None else "",
        })
    return tuple(rows)


def _switches(m: Model) -> tuple[dict, ...]:
    out = []
    for sw in m.family.switches:
        out.append({"name": sw.name, "value": _switch_text(m.switches.get(sw.name)), "en": sw.en, "zh": sw.zh})
    return tuple(out)


def _outline(sections, notes) -> tuple[dict, ...]:
    ids = ["intro", "computation", "summary", "closed_form", "heads"]
    if notes:
        ids.append("articles")
    ids.append("conclusion")
    out = []
    for i, ident in enumerate(ids, 1):
        entry = {"id": ident, "number": str(i), "children": []}
        if ident == "computation":
            entry["children"] = [{"id": f"c-{s.path}", "number": f"{i}.{j}", "path": s.path, "keys": list(s.keys),
                                  "names": list(s.names)} for j, s in enumerate(sections, 1)]
        out.append(entry)
    return tuple(out)


def _whole(m: Model, expr: sp.Expr) -> int:
    """``expr`` at ``m``'s values, exactly (what ``m.count`` gives, without expanding a number)."""
    value = expr.xreplace(m.values)
    return int(value if value.is_Integer else sp.expand(value))


_CACHE: dict[Any, Derivation] = {}
#: how many derivations :func:`derive` keeps (a document is rendered in two formats and two languages)
_KEEP = 16


def _cache_key(m: Model):
    return (m.name, m.family.name, m.head, tuple(sorted((s.name, v) for s, v in m.values.items())),
            tuple(sorted((k, str(v)) for k, v in m.switches.items())))


def derive(m: Model) -> Derivation:
    """The derivation of ``m`` (all its symbols must have values); cached per model."""
    if m.free:
        raise SymparamsError(
            f"{m.name}: a derivation needs a value for every symbol; none for {', '.join(s.name for s in m.free)} "
            f"(give them with --set KEY=VALUE, or start from a preset)")
    key = _cache_key(m)
    if key in _CACHE:
        return _CACHE[key]
    from .articles import notes_for, related_for

    total = _whole(m, m.tree.total)
    b = _Builder(m, total)
    sections = b.sections()
    preset, changes = _preset_of(m)
    notes = notes_for(m)
    closed = m.closed_form
    leaves = [i for s in sections for i in s.walk() if i.leaf and not i.tied_to]
    largest = max(leaves, key=lambda i: i.count // i.multiplicity, default=None)  # one table or matrix
    d = Derivation(
        name=m.name, family=m.family.name, family_title=dict(m.family.title),
        preset=preset.name if preset else None,
        preset_title={"en": preset.en, "zh": preset.zh} if preset else None,
        changes=changes, head=m.head, symbols=_symbols(m), switches=_switches(m), sections=sections,
        summary=b.summary(sections), total=total, trainable=_whole(m, m.tree.trainable_total), closed_form=closed,
        closed_formula=latex(closed), closed_substituted=latex_numbers(closed, m.values),
        proof=b.proof(), notes=notes, related=related_for(m), largest=largest,
        outline=_outline(sections, notes))
    while len(_CACHE) >= _KEEP:  # the oldest go: a run over many models need not keep them all
        del _CACHE[next(iter(_CACHE))]
    _CACHE[key] = d
    return d
