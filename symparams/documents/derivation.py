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
'\\\\left(V + P + S\\\\right) H + 2 H'
>>> d.sections[0].substituted
'\\\\left(30522 + 512 + 2\\\\right) \\\\times 768 + 2 \\\\times 768'
>>> from symparams.core.formatting import percent
>>> d.sections[0].count, percent(d.sections[0].share)
(23837184, '21.77%')
>>> sum(s.share for s in d.sections)
1
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..analysis.explain import OPTIONAL as LEFT_OUT
from ..analysis.flops import laws
from ..analysis.proof import HELD
from ..core.algebra import BlockCounts, closed_form, evaluated, whole
from ..core.blocks import Block, group, product_as_written, tree_fact
from ..core.compute import BATCH, SEQ, declares_attention, untraced
from ..core.errors import SymparamsError
from ..core.formatting import ratio, thousands
from ..core.model import Model
from ..core.symbols import SYMBOLS, A
from ..core.values import parse_value
from ..families.presets import all_presets
from .articles import notes_for, related_for

__all__ = ["Derivation", "Item", "SummaryRow", "ProofView", "derive", "latex", "latex_numbers",
           "math_count"]


# -- LaTeX of expressions ------------------------------------------------------

_HOLE = re.compile("\u27e6([^\u27e7]+)\u27e7")


def latex(expr: sp.Expr, *, written: bool = False) -> str:
    """``expr`` in LaTeX, products by juxtaposition as in print (``2 H``, ``H^{2} \\left(r + 1\\right)``);
    ``written`` keeps the order as written.  Memoized: presets of a family share their formulas.

    >>> import sympy as sp
    >>> H, r = sp.symbols("H r")
    >>> latex(2 * H + r * H**2)
    'H^{2} r + 2 H'
    """
    return _latex(expr, written)


#: a space between two letters (``H H``, ``H r``) or before a fraction, in a product as written
_SIDE_BY_SIDE = re.compile(r"(?<![\\A-Za-z])([A-Za-z](?:_\{\w+\})?) (?=(?:[A-Za-z](?:_\{\w+\})?|\\frac)(?![A-Za-z]))")


@lru_cache(maxsize=8192)
def _latex(expr: sp.Expr, written: bool) -> str:
    if not written:
        return sp.latex(expr)
    # sizes multiplied as written keep a dot between letters: H \cdot H, H \cdot r \cdot H, H \cdot \frac{H}{A}
    return _SIDE_BY_SIDE.sub(r"\1 \\cdot ", sp.latex(expr, order="none"))


def latex_numbers(expr: sp.Expr, values: dict, *, written: bool = False) -> str:
    """``expr`` with each symbol printed as its value, products as ``\\times``; not evaluated.

    Printed once per expression with placeholder names, which the values then
    fill in (the same text ``sympy.latex(..., symbol_names=values)`` gives).
    """
    by_name = {s.name: v for s, v in values.items()}
    return _HOLE.sub(lambda mo: _value_latex(by_name[mo.group(1)]), _numbers_pattern(expr, written))


@lru_cache(maxsize=8192)
def _numbers_pattern(expr: sp.Expr, written: bool) -> str:
    """:func:`latex_numbers`'s text with a hole ``⟦name⟧`` for each symbol, printed once per expression."""
    names = {s: f"\u27e6{s.name}\u27e7" for s in expr.free_symbols}
    return sp.latex(expr, mul_symbol="times", symbol_names=names, **({"order": "none"} if written else {}))


def _fill_numbers(expr: sp.Expr, texts: dict, *, written: bool = False) -> str:
    """:func:`latex_numbers` with the values already printed (``texts``: symbol name → LaTeX)."""
    return _HOLE.sub(lambda mo: texts[mo.group(1)], _numbers_pattern(expr, written))


def _value_latex(v) -> str:
    return str(v) if v.is_Integer else sp.latex(v)


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
    #: a component's running total: its contribution and those of the components before it
    running: int = 0
    #: the title key of what repeats (``encoder_layer``), "" when the item does not repeat
    unit: str = ""

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
    """The head-count proof (:class:`symparams.analysis.proof.Proof`) as LaTeX strings and numbers."""

    invariant: bool
    per_head: tuple[tuple[str, str, tuple[str, ...]], ...]   # (as written, evaluated, paths)
    written: str
    closed: str
    derivative: str
    dependence: str | None
    conditions: tuple[tuple[str, str, str], ...]             # (LaTeX, en, zh)
    heads: tuple[int, ...]
    totals: tuple[int, ...]
    witness: tuple[tuple[int, int], ...]                     # (A, its total), by A
    counterexample: tuple[tuple[int, int], tuple[int, int]] | None
    has_heads: bool
    counterexample_source: str = ""                          # "model", "preset NAME", "canonical"
    counterexample_values: tuple[tuple[str, str], ...] = ()  # (symbol LaTeX, value LaTeX)
    fixed_ratio: dict | None = None                          # G = ρA re-derived: LaTeX strings
    #: every part written with A (see :func:`_head_term`), N(A) with identical terms collected
    terms: tuple[dict, ...] = ()
    collected: str = ""
    #: each head has a width D of its own, so the premise is not A | H
    own_width: bool = False
    family: str = ""                                         # for the modules' titles
    #: N ≈ 12·L·H² + (V+P+S)·H: {"formula", "value", "total", "share"}; "applies", "other" or "" (no values)
    thumb: dict | None = None
    thumb_status: str = ""


@dataclass(frozen=True, eq=False)  # hashed by identity: the documents' data is cached per derivation
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
    trainable_share: Fraction
    closed_form: sp.Expr
    closed_formula: str
    closed_substituted: str
    proof: ProofView
    notes: tuple = ()
    related: tuple = ()
    largest: Item | None = None
    outline: tuple[dict, ...] = field(default=())
    #: the parameters one token uses (routed experts it is not sent to left out), its share and closed form
    active: int = 0
    active_share: Fraction = Fraction(1)
    active_formula: str = ""
    #: a base model's LM head (the one it was trained with) and the total with it: what a model card counts
    lm_head: str | None = None
    with_lm_head: int | None = None
    #: what a forward pass and a training step cost, and what they hold in memory
    costs: "CostsView | None" = None
    #: the counting rules this model needs (catalog keys ``intro.rule_*``), in the order the text states them
    rules: tuple[str, ...] = ()
    #: the preset's published size reconciled with the exact count (see :func:`_published`), or None
    published: dict | None = None
    #: the family was inferred from transformers' builds (no article tells its story)
    inferred: bool = False
    #: the closed form holds a whole-number division (a floor: an inferred head width ⌊H/A⌋)
    floors: bool = False

    @property
    def items(self):
        """Every item of every section, depth first."""
        for s in self.sections:
            yield from s.walk()


@dataclass(frozen=True)
class CostsView:
    """The compute-and-memory section: FLOPs of one sequence of ``seq`` tokens, bytes held.

    Every number comes from the model's :meth:`~symparams.core.model.Model.flops`,
    :meth:`~symparams.core.model.Model.memory` and
    :meth:`~symparams.core.model.Model.kv_cache`; ``*_expr`` are the same
    quantities in the symbols (``s`` and ``b`` substituted), for the live page.
    """

    seq: int
    formula: str                 # forward FLOPs in the symbols, s and b (LaTeX)
    formula_numbers: str         # the same with the model's values, s and b = 1 put in, not evaluated
    forward: int
    matmul: int
    attention: int
    product: int
    backward: int
    training: int
    heads_invariant: bool
    heads_derivative: str        # LaTeX
    held: tuple[str, ...]        # what, held fixed, makes the FLOPs independent of A (LaTeX: \frac{G}{A})
    kaplan: int | Fraction       # 2N + 2·n_layer·s·d_attn per token
    exact_per_token: int | Fraction
    kaplan_difference: str       # exact − Kaplan, LaTeX
    weights_fp32: int
    weights_bf16: int
    training_bytes: int          # bf16 weights and gradients, fp32 Adam state (mixed precision)
    kv_per_token: int            # bf16, 0 without a cache
    cross_kv_per_token: int
    #: the numbers above as expressions in the model's symbols (s and b substituted), for the live page
    exprs: dict
    #: the formulas above as expressions (the page prints them as MathML)
    formula_expr: sp.Expr
    heads_derivative_expr: sp.Expr
    kaplan_difference_expr: sp.Expr


#: each quantity the FLOPs proof may hold fixed, in LaTeX
LATEX_OF_HELD = {h.quantity: h.quantity_latex for h in HELD}

#: the sequence length a document's costs are worked out for when the model has no position table
DOCUMENT_SEQ = 2048


def _costs(m: Model) -> CostsView:
    """The compute-and-memory section of ``m``'s document (one sequence of P tokens, or 2,048)."""
    seq = int(m.values[SYMBOLS["P"].symbol]) if SYMBOLS["P"].symbol in m.values else DOCUMENT_SEQ
    f = m.flops(seq)
    kinds = f.by_kind
    held = f.held
    kaplan = next(law for law in f.laws if law["name"] == "kaplan_forward")
    kaplan_law = next(law for law in laws(m.tree) if law.name == "kaplan_forward")
    training_bytes = m.memory(dtype="bf16", optimizer="adam")
    cache = m.kv_cache(dtype="bf16")
    at = {SEQ: sp.Integer(seq), BATCH: sp.Integer(1)}
    kind = {what: sp.Add(*(t.forward for t in f.terms if t.what == what)) for what in ("matmul", "attention", "product")}
    forward = sp.Add(*kind.values())
    backward = sp.Add(*(t.backward for t in f.terms))
    parts = training_bytes.formulas
    exprs = {**kind, "forward": forward, "backward": backward, "training": forward + backward,
             "kaplan": kaplan_law.formula, "exact_per_token": kaplan_law.exact,
             "weights_fp32": 2 * parts["weights"], "weights_bf16": parts["weights"],
             "training_memory": parts["weights"] + parts["gradients"] + parts["optimizer"],
             "kv_per_token": cache.formulas["per_token"], "cross_kv_per_token": cache.formulas["cross_per_token"]}
    return CostsView(
        seq=seq, formula=latex(f.formula), formula_numbers=latex_numbers(f.formula, {**m.values, **at}),
        forward=f.forward, matmul=kinds["matmul"], attention=kinds["attention"],
        product=kinds["product"], backward=f.backward, training=f.training,
        heads_invariant=f.heads_derivative == 0, heads_derivative=latex(f.heads_derivative),
        held=tuple(LATEX_OF_HELD[q] for q in held[0]) if held is not None and held[1] == 0 else (),
        kaplan=_number(kaplan["law_value"]), exact_per_token=_number(kaplan["exact_value"]),
        kaplan_difference=latex(kaplan_law.difference),
        weights_fp32=m.memory(dtype="fp32", optimizer="none").weights, weights_bf16=training_bytes.weights,
        training_bytes=training_bytes.weights + training_bytes.gradients + training_bytes.optimizer,
        kv_per_token=cache.per_token, cross_kv_per_token=cache.cross_per_token,
        exprs={key: sp.expand(sp.sympify(e).xreplace(at)) for key, e in exprs.items()},
        formula_expr=f.formula, heads_derivative_expr=f.heads_derivative, kaplan_difference_expr=kaplan_law.difference)


def _published(m: Model, preset) -> dict | None:
    """How the preset's published size (``110M``, ``8B``) relates to the exact count: the ledger of
    :meth:`~symparams.core.model.Model.explain` for the model a card counts (a generative model with its LM
    head; an encoder as it is)."""
    if preset is None or not preset.published:
        return None
    counted = m.with_head(m.lm_head) if m.head is None and m.lm_head in ("causal-lm", "seq2seq-lm") else m
    ledger = counted.explain(preset.published)
    return {"claim": preset.published, "explained": ledger.explained, "equal": ledger.equal,
            "count": ledger.count, "digits": ledger.digits, "head": counted.head if counted is not m else None,
            "without": tuple(d for d in ledger.departures if d in LEFT_OUT),
            "adding": tuple(d for d in ledger.departures if d not in LEFT_OUT)}


def rules_of(tree: Block) -> tuple[str, ...]:
    """The counting rules ``tree`` needs: its linear layers' (with biases, some, none), embeddings', norms'
    (with a shift: LayerNorm; a scale only: RMSNorm), and the shape convention."""
    leaves = [block for _, block, _ in tree.walk() if block.is_leaf]
    linear = [block for block in leaves if block.kind == "linear"]
    biased = sum(any(name == "bias" for name, _ in block.params) for block in linear)
    norms = {len(block.params) for block in leaves if block.kind == "norm"}
    rules = []
    if linear:
        rules.append("rule_linear" if biased == len(linear) else "rule_linear_no_bias" if not biased
                     else "rule_linear_some_bias")
    if any(block.kind == "embedding" for block in leaves):
        rules.append("rule_embedding")
    rules += [rule for size, rule in ((2, "rule_layer_norm"), (1, "rule_rms_norm")) if size in norms]
    rules.append("rule_shapes")
    if any(block.kind == "tensor" for block in leaves):  # experts' fused tensors, shown as stored
        rules.append("rule_tensors")
    return tuple(rules)


def _number(value) -> int | Fraction:
    """A JSON-ready exact number (an int, or ``"p/q"``) as an int or a Fraction."""
    return Fraction(value) if isinstance(value, str) else value


# -- the article's walk -------------------------------------------------------------

@tree_fact
def presented(tree: Block) -> Block:
    """``tree`` as the documents walk it: each group with :attr:`~symparams.core.blocks.Block.steps`
    regrouped into its article's steps.  Every module is the tree's own block, so its exact numbers are
    the model's; a step adds up its parts'.

    >>> from symparams import model
    >>> layer = presented(model("bert-base").tree).find("encoder.layer")
    >>> [step.title for step in layer.children]
    ['attention_sublayer', 'add_norm', 'ffn_sublayer', 'add_norm']
    """
    return _present(tree)


def _present(block: Block) -> Block:
    if block.steps:
        return _regrouped(block)
    children = tuple(_present(c) for c in block.children)
    if all(new is old for new, old in zip(children, block.children)):
        return block
    return dataclasses.replace(block, children=children)


def _regrouped(block: Block) -> Block:
    """``block``'s children regrouped into its steps; a module a switch left out is left out of its step."""
    steps = []
    for number, (key, paths) in enumerate(block.steps, 1):
        parts = [_reached(block, path) for path in paths if _holds(block, path)]
        if parts:  # named by number too: a layer has two "Add & Norm" steps
            steps.append(group(f"{key}_{number}", parts, ref="", title=key))
    regrouped = dataclasses.replace(block, children=tuple(steps), steps=())
    if sorted(map(id, _leaves(regrouped))) != sorted(map(id, _leaves(block))):
        raise SymparamsError(f"{block.name}: the article's steps do not hold exactly the modules of the layer")
    return regrouped


def _holds(block: Block, path: str) -> bool:
    try:
        block.find(path)
    except KeyError:
        return False
    return True


def _reached(block: Block, path: str) -> Block:
    """The module at ``path`` below ``block``, in a wrapper whose module name is the path's beginning
    (``attention.output`` for ``attention.output.dense``), so the document names it as transformers does."""
    *outer, _ = path.split(".")
    target = block.find(path)
    if not outer:
        return target
    along, segments = block, []
    for name in outer:
        along = along.find(name)
        segments.append(along.name if along.ref is None else along.ref)
    # named with slashes: a dotted name would read as a path
    return group("/".join(outer), [target], ref=".".join(s for s in segments if s), title=target.title_key)


def _leaves(block: Block) -> list[Block]:
    return [b for _, b, _ in block.walk() if b.is_leaf]


# -- building ------------------------------------------------------------------------

def _unwrap(block: Block, path: str):
    """Follow single-child groups down.

    Returns (innermost block, its path, the blocks whose repeats multiply,
    run): ``run`` is the list of identical leaves when the innermost group
    holds nothing else (BERT's ``self``: query, key, value), else None.
    """
    chain = [block]
    while block.children and block.tied_to is None and block.written is None:
        runs = _runs(block.children)
        if len(runs) == 1 and len(runs[0]) > 1 and block.children[0].repeat == 1:
            return block, path, tuple(chain), runs[0]
        if len(block.children) != 1:
            break
        block = block.children[0]
        path = f"{path}.{block.name}"
        chain.append(block)
    return block, path, tuple(chain), None


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
    """``sympy.latex(sum_as_written(*parts), order="none")`` for whole numbers ``parts`` (none negative)."""
    terms = [math_count(p) for p in parts if p != 0]
    return " + ".join(terms) if terms else "0"


def _times_latex(a: int, b: int) -> str:
    """``sympy.latex(Mul(Integer(a), Integer(b), evaluate=False), mul_symbol="times")`` for whole a, b >= 0."""
    return f"{math_count(a)} \\times {math_count(b)}"


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
    tensors: int            # how many tensors of that shape the item holds
    shape_dims: tuple       # the shape's sizes, evaluated (doit), still in symbols
    expr: sp.Expr
    written: bool           # a group's form as written (else its simplified count)
    formula: str
    collapsed: str | None
    counted: tuple          # the blocks whose counts the item adds up (several: merged identical leaves)
    repeats: tuple          # the blocks whose repeats multiply into ``repeat``
    total_expr: sp.Expr
    total_formula: str
    tied: str | None
    trainable: bool
    per_head: bool
    cancels: bool
    row_repeat: str
    row_formula: str
    unit: str
    children: tuple["_Plan", ...] = ()


def _splits_into_heads(expr: sp.Expr) -> bool:
    """Whether ``expr`` divides by the head count somewhere (a head's width H/A, or G/A key/value groups)."""
    return any(p.base == A and p.exp.is_negative for p in sp.preorder_traversal(expr) if isinstance(p, sp.Pow))


def _plan(run: list[Block], path: str, depth: int, copies: sp.Expr, trainable: bool) -> _Plan:
    outer = run[0]
    inner, inner_path, chain, same = _unwrap(outer, path)
    repeat = sp.Mul(*(b.repeat for b in chain))
    names, keys = _names_and_keys(run, inner, chain, depth)
    trainable = trainable and outer.trainable and inner.trainable
    counted = tuple(run) if inner is outer else (inner,)
    if same is not None:  # a group of identical leaves only: one leaf item, several times
        inner_path = f"{inner_path}.{same[0].name}"
        inner, counted, names = same[0], tuple(same), tuple(b.name for b in same)
        trainable = trainable and inner.trainable
    mult = len(counted)
    children: tuple[_Plan, ...] = ()
    written = inner.is_leaf or inner.written is not None
    if inner.is_leaf:
        expr = product_as_written(mult, inner.as_written) if mult != 1 else inner.as_written
    else:
        children = tuple(_plan(r, f"{inner_path}.{r[0].name}", depth + 1, copies * repeat, trainable)
                         for r in _runs(inner.children))
        expr = inner.written if inner.written is not None else closed_form(inner.count)
    formula = latex(expr, written=written)
    size = evaluated(expr)
    # the per-head story is told where the form is as written (a group's simplified count has no story) and a
    # head's width H/A shows in it: B·A or A·D·H are counts in A, not a split into heads that could cancel
    per_head = written and A in expr.free_symbols and _splits_into_heads(expr)
    total_expr = product_as_written(repeat, expr) if repeat != 1 else expr
    # as many tensors of that shape as the item holds: Q, K and V (3 × [H, H]); a LayerNorm's γ and β (2 × [H])
    tensors = mult * (len(inner.params) if inner.kind == "norm" else 1)
    shape = "[" + ", ".join(latex(d, written=True) for d in inner.shape) + "]" if inner.is_leaf and inner.shape else ""
    shape = f"{tensors} \\times {shape}" if shape and tensors > 1 else shape
    summary_row = depth <= 1  # a component (depth 0) or one of its parts
    reps = sp.expand(copies * repeat)
    return _Plan(
        path=path, block_path=inner_path, names=names, keys=keys, depth=depth, leaf=inner.is_leaf,
        multiplicity=mult, repeat=repeat, repeated=repeat != 1, copies=copies, shape=shape, tensors=tensors,
        shape_dims=tuple(sp.sympify(d).doit() for d in inner.shape) if shape else (),
        expr=expr, written=inner.written is not None and not inner.is_leaf, formula=formula,
        collapsed=latex(size) if per_head else None, counted=counted, repeats=chain, total_expr=total_expr,
        total_formula=latex(total_expr, written=written) if repeat != 1 else formula, tied=inner.tied_to,
        trainable=trainable, per_head=per_head, cancels=per_head and A not in size.free_symbols,
        row_repeat="" if not summary_row or reps == 1 else latex(reps),
        row_formula="" if not summary_row else "0" if inner.tied_to else latex(closed_form(sp.expand(reps * size))),
        unit=inner.title_key if repeat != 1 else "", children=children)


def _module_name(chain) -> str:
    """The path transformers gives the blocks of ``chain`` (``ref`` segments; groupings it lacks left out)."""
    return ".".join(seg for seg in (b.name if b.ref is None else b.ref for b in chain) if seg)


def _names_and_keys(run: list[Block], inner: Block, chain: tuple, depth: int) -> tuple[tuple, tuple]:
    """The module names, as ``named_parameters()`` prints them (a chain of single children reads
    ``pooler.dense``; a grouping transformers does not have shows its modules), and title keys of an item."""
    outer = run[0]
    names = tuple(_module_name([b]) or b.name for b in run)
    keys = tuple(dict.fromkeys(b.title_key for b in run))
    if len(run) == 1 and not _module_name(chain) and inner.children:
        names = tuple(_module_name(_unwrap(c, c.name)[2]) or c.name for c in inner.children)
    if len(run) == 1 and inner is not outer:
        names = (_module_name(chain) or outer.name,) if _module_name(chain) or not inner.children else names
        if outer.title is None and inner.title is not None and depth > 0:
            keys = (inner.title,)  # an untitled wrapper (BERT's "intermediate") takes its part's title
        elif inner.is_leaf and inner.title is not None and inner.title != keys[0]:
            keys = (keys[0], inner.title)  # "Task head", then what it is: "Classifier"
    return names, keys


@tree_fact
def _plans(tree: Block) -> tuple[_Plan, ...]:
    """The plans of the tree's top-level components."""
    return tuple(_plan([child], child.name, 0, tree.repeat, tree.trainable) for child in tree.children)


class _Builder:
    """A model's numbers laid on the plans: every count from the model's one exact evaluation."""

    def __init__(self, m: Model, total: int):
        self.m = m
        self.values = dict(m.values)
        self.texts = {s.name: _value_latex(v) for s, v in self.values.items()}
        self.grand = total

    def counts(self, block: Block) -> BlockCounts:
        """The model's exact numbers of ``block``; a step of an article's walk (:func:`presented`) adds up
        its parts'."""
        try:
            return self.m.counts_of(block)
        except KeyError:
            pass
        parts = [self.counts(c) for c in block.children]
        repeat = whole(block.repeat, self.values)
        total = sum(c.repeat * c.total for c in parts)
        trainable = sum(c.repeat * c.trainable for c in parts) if block.trainable else 0
        return BlockCounts(repeat, total, trainable, total, repeat, sum(c.used * c.active for c in parts))

    def item(self, plan: "_Plan", copies_value: int) -> Item:
        """The item of ``plan`` at this model's values, held ``copies_value`` times in the model."""
        counts = [self.counts(b) for b in plan.counted]
        count, untied = sum(c.total for c in counts), sum(c.untied for c in counts)
        rep_value = math.prod(self.counts(b).repeat for b in plan.repeats)
        children: tuple[Item, ...] = ()
        if plan.leaf or plan.written:
            substituted = _fill_numbers(plan.expr, self.texts, written=True)
        if not plan.leaf:
            children = tuple(self.item(c, copies_value * rep_value) for c in plan.children)
        if not plan.leaf and not plan.written:
            parts = [c.total for c in children if not c.tied_to]
            # the sum of the parts' counts, as the articles write it; one part needs no sum
            substituted = _sum_latex(parts) if len(parts) > 1 else ""
        total = rep_value * count
        contribution = copies_value * total
        shape = ("[" + ", ".join(str(whole(d, self.values)) for d in plan.shape_dims) + "]") if plan.shape else ""
        shape = f"{plan.tensors} \\times {shape}" if shape and plan.tensors > 1 else shape
        item = Item(
            path=plan.path, block_path=plan.block_path, names=plan.names, keys=plan.keys, depth=plan.depth,
            leaf=plan.leaf, multiplicity=plan.multiplicity, repeat=plan.repeat, repeat_value=rep_value,
            copies=plan.copies, copies_value=copies_value, shape=plan.shape, shape_values=shape,
            expr=plan.expr, formula=plan.formula, collapsed=plan.collapsed, substituted=substituted, count=count,
            total_expr=plan.total_expr, total_formula=plan.total_formula,
            total_substituted=_times_latex(rep_value, count) if plan.repeated else substituted,
            total=total, contribution=contribution, share=sp.Rational(contribution, self.grand),
            tied_to=plan.tied, untied=untied * rep_value, trainable=plan.trainable, per_head=plan.per_head,
            cancels=plan.cancels, children=children, unit=plan.unit)
        self.plans[id(item)] = plan
        return item

    def sections(self) -> tuple[Item, ...]:
        self.plans: dict[int, _Plan] = {}
        tree = presented(self.m.tree)
        copies = self.counts(tree).repeat
        sections = [self.item(p, copies) for p in _plans(tree)]
        out = []
        for section, running in zip(sections, itertools.accumulate(s.contribution for s in sections)):
            out.append(dataclasses.replace(section, running=running))
            self.plans[id(out[-1])] = self.plans[id(section)]
        return tuple(out)

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
            repeat=plan.row_repeat, repeat_value=item.copies_value * item.repeat_value,
            shape=item.shape, shape_values=item.shape_values, formula=plan.row_formula, count=item.contribution,
            share=item.share, tied_to=item.tied_to, trainable=item.trainable)

    def proof(self) -> ProofView:
        p = self.m.prove()
        per_head, written, closed, derivative, dependence = [], "", "", "0", None
        for step in p.steps:
            if step.key == "per_head" and _splits_into_heads(step.lhs):  # B·A = A·B tells a reader nothing
                per_head.append((latex(step.lhs, written=True), latex(step.rhs), tuple(step.paths)))
            elif step.key == "total_as_written":
                written = latex(step.lhs, written=True)
            elif step.key == "simplified":
                closed = latex(step.rhs)
            elif step.key == "derivative":
                derivative = _derivative(step.rhs)
            elif step.key == "dependence":
                dependence = latex(step.rhs)
        heads = tuple(sorted(p.witness))
        totals = tuple(sorted(set(p.witness.values())))
        witness = tuple((a, p.witness[a]) for a in heads)  # each head count beside its own total
        fixed = p.fixed_ratio
        if fixed is not None and fixed.derivative.has(sp.Derivative):
            # a floor of A (a head width H // A): whether N moves with A at a fixed ratio is a question of which
            # A divide H, which a derivative cannot answer; the counterexample above stands alone
            fixed = None
        if fixed is not None:
            fixed = {"held": r",\; ".join(f"{h.quantity_latex} = {sp.latex(h.name)}" for h in fixed.held),
                     "substitution": r",\; ".join(f"{sp.latex(h.symbol)} = {latex(h.substitution)}"
                                                   for h in fixed.held),
                     "closed": latex(fixed.closed_form),
                     "derivative": _derivative(fixed.derivative), "invariant": bool(fixed.invariant),
                     "conditions": tuple((h.condition.latex, h.condition.en, h.condition.zh) for h in fixed.held),
                     "value": r",\; ".join(f"{sp.latex(k)} = {sp.latex(v)}" for k, v in fixed.values.items()),
                     "remaining": tuple(_remaining_term(t, held) for t, held in fixed.remaining)}
        thumb = p.rule_of_thumb
        return ProofView(
            invariant=bool(p.invariant), per_head=tuple(per_head), written=written, closed=closed,
            derivative=derivative, dependence=dependence,
            conditions=tuple((c.latex, _symbols_as_math(c.en), _symbols_as_math(c.zh)) for c in p.conditions),
            heads=heads, totals=totals, witness=witness,
            counterexample=p.counterexample, has_heads=A in self.m.symbols,
            counterexample_source=p.counterexample_source or "",
            counterexample_values=tuple((sp.latex(k), sp.latex(v)) for k, v in p.counterexample_values.items()),
            fixed_ratio=fixed, terms=tuple(_head_term(t) for t in p.terms),
            collected=latex(p.collected, written=True) if p.terms else "",
            own_width=SYMBOLS["D"].symbol in self.m.symbols, family=self.m.family.name,
            thumb=None if thumb is None else {"formula": latex(thumb.formula, written=True), "value": thumb.value,
                                              "total": thumb.total, "share": thumb.share},
            thumb_status="" if self.m.free else "applies" if thumb is not None else "other")


def _has_floor(expr: sp.Expr) -> bool:
    from ..families.inferred_data import CeilDiv, FloorDiv

    return expr.has(sp.floor, sp.ceiling, FloorDiv, CeilDiv)


def _derivative(expr: sp.Expr) -> str:
    """∂N/∂A in LaTeX; empty when the count holds a floor of A (a whole-number division has no derivative worth
    showing: the counterexample then makes the case)."""
    return "" if expr.has(sp.Derivative) else latex(expr)


#: a size symbol or a ratio of two in a side condition's text (``A``, ``2A``, ``H/A``), not inside a word
_SYMBOL_IN_TEXT = re.compile(r"(?<![\w$/])(\d*[A-Z](?:/[A-Z])?)(?![\w$/])", re.ASCII)


def _symbols_as_math(text: str) -> str:
    """A side condition's text with its symbols in the catalogs' math markup: "$A$ divides $H$: $H/A$ is …"."""
    return _SYMBOL_IN_TEXT.sub(r"$\1$", text)


def _times(copies: sp.Expr, count: sp.Expr) -> str:
    r"""``copies`` × ``count`` in LaTeX as a person writes it: ``3 L (H^{2} + H)``."""
    if copies == 1:
        return latex(count)
    shown = latex(count)
    return f"{latex(copies)} " + (rf"\left({shown}\right)" if count.is_Add else shown)


def _head_term(t) -> dict:
    """A part written with A (:class:`~symparams.analysis.proof.HeadTerm`) in LaTeX: one head, the heads
    side by side, multiplied out, and all its copies."""
    split = t.split
    return {"written": latex(t.written, written=True), "collapsed": latex(t.collapsed),
            "copies": "" if t.copies == 1 else latex(t.copies),
            "total_written": latex(t.total_written, written=True), "total": _times(t.copies, t.collapsed),
            # A·(H·D) = A·D·H is no step a reader needs: the form is multiplied out only where a head is H/A wide
            "multiplies_out": t.multiplies_out,
            "heads": "" if split is None else sp.latex(split[0]),
            "one_head": "" if split is None else latex(split[1], written=True),
            "cancels": t.cancels, "paths": t.paths, "titles": t.titles}


def _remaining_term(t, held: sp.Expr) -> dict:
    """A part that still holds A once G/A and A·D are held fixed: one copy's count then, all copies', and
    what it holds per head where it is a multiple of A (T5's relative bias: B per head)."""
    per_head = sp.cancel(held / A)
    return {"written": latex(t.written, written=True), "held": latex(held), "total": _times(t.copies, held),
            "copies": latex(t.copies), "several": t.copies != 1,
            "per_head": "" if A in per_head.free_symbols else latex(per_head),
            "paths": t.paths, "titles": t.titles}


def _preset_of(m: Model):
    """The preset ``m`` is named after (or None), and what ``m`` changes in it."""
    preset = all_presets().get(m.name)
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


def _with_lm_head(m: Model) -> dict:
    """The base model's LM head and its total with it; nothing for a model with a head, or without an LM head."""
    if m.head is not None or m.lm_head is None:
        return {}
    return {"lm_head": m.lm_head, "with_lm_head": m.with_head(m.lm_head).count}


def _outline(sections, notes, costs: bool = True) -> tuple[dict, ...]:
    ids = ["intro", "computation", "summary", "closed_form", "heads"] + (["costs"] if costs else [])
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


class _ByValue:
    """A model compared by what it is (name, family, head, values, switches): the key :func:`derive`
    caches on, so equal models share their derivation."""

    def __init__(self, m: Model):
        self.m = m
        self.key = (m.name, m.family.name, m.head, tuple(sorted((s.name, v) for s, v in m.values.items())),
                    tuple(sorted((k, str(v)) for k, v in m.switches.items())))

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ByValue) and self.key == other.key


def derive(m: Model) -> Derivation:
    """The derivation of ``m`` (all its symbols must have values)."""
    if m.free:
        raise SymparamsError(
            f"{m.name}: a derivation needs a value for every symbol; none for {', '.join(s.name for s in m.free)} "
            f"(give them with --set KEY=VALUE, or start from a preset)")
    return _derive(_ByValue(m))


@lru_cache(maxsize=16)  # a document is rendered in two formats and two languages
def _derive(key: _ByValue) -> Derivation:
    m = key.m
    b = _Builder(m, m.count)
    sections = b.sections()
    preset, changes = _preset_of(m)
    notes = notes_for(m)
    closed = m.closed_form
    leaves = [i for s in sections for i in s.walk() if i.leaf and not i.tied_to]
    largest = max(leaves, key=lambda i: i.count // i.multiplicity, default=None)  # one table or matrix
    return Derivation(
        name=m.name, family=m.family.name, family_title=dict(m.family.title),
        preset=preset.name if preset else None,
        preset_title={"en": preset.en, "zh": preset.zh} if preset else None,
        changes=changes, head=m.head, symbols=_symbols(m), switches=_switches(m), sections=sections,
        summary=b.summary(sections), total=m.count, trainable=m.trainable, trainable_share=m.trainable_share,
        closed_form=closed,
        closed_formula=latex(closed), closed_substituted=latex_numbers(closed, m.values),
        proof=b.proof(), notes=notes, related=related_for(m), largest=largest,
        outline=_outline(sections, notes, declares_attention(m.tree)), active=m.active, active_share=m.active_share,
        active_formula=latex(closed_form(m.tree.active_total)) if m.routed else "",
        inferred=m.family.inferred, floors=_has_floor(closed),
        costs=_costs(m) if declares_attention(m.tree) and not untraced(m.tree) else None, rules=rules_of(m.tree),
        published=_published(m, preset) if not changes else None,
        **_with_lm_head(m))
