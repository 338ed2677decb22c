"""How a document walks a model's Block tree: the article's steps, and a plan of each component and part.

A plan (:class:`Plan`) is what an :class:`~symparams.documents.items.Item`
shows that depends on the tree only (names, title keys, formulas as written
and their LaTeX); it is built once per tree, and each model lays its numbers
on it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sympy as sp

from ..core.algebra import closed_form, evaluated
from ..core.blocks import Block, group, product_as_written, tree_fact
from ..core.errors import SymparamsError
from ..core.symbols import A
from .formulas import in_order_of, latex, product_latex

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


@dataclass(frozen=True)
class Plan:
    """What an :class:`Item` shows that depends on the Block tree only (symbols, formulas, LaTeX).

    Built once per tree; :meth:`~symparams.documents.items.Builder.item` adds a model's numbers.
    """

    path: str
    block_path: str
    names: tuple[tuple[tuple[Block, ...], str], ...]  # per name: the blocks whose segments join, and a fallback
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
    children: tuple["Plan", ...] = ()


def splits_into_heads(expr: sp.Expr) -> bool:
    """Whether ``expr`` divides by the head count somewhere (a head's width H/A, or G/A key/value groups)."""
    return any(p.base == A and p.exp.is_negative for p in sp.preorder_traversal(expr) if isinstance(p, sp.Pow))


def wrapped(block: Block) -> Block | None:
    """The module ``block`` only wraps with its norm (T5's ``layer.0``: ``SelfAttention`` and ``layer_norm``),
    else None.  A document shows such a wrapper as one level, "self-attention with its RMSNorm": shown as two,
    the wrapper and the module head two sums that differ by the norm alone under two near-identical titles."""
    if block.is_leaf or len(block.children) != 2 or block.written is not None:
        return None
    inner = [c for c in block.children if not c.is_leaf]
    norms = [c for c in block.children if c.is_leaf and c.kind == "norm" and c.repeat == 1]
    if len(inner) != 1 or len(norms) != 1 or inner[0].repeat != 1 or inner[0].written is not None \
            or inner[0].tied_to is not None or len(inner[0].children) < 2:
        return None
    return inner[0]


def _parts(block: Block, path: str):
    """The runs of ``block``'s children a document shows below it, each with its path and the blocks whose
    module names prefix its own: a wrapper's module (:func:`wrapped`) gives its parts, named below it."""
    inner = wrapped(block)
    for run in _runs(block.children):
        if run[0] is inner:
            yield from ((r, f"{path}.{inner.name}.{r[0].name}", (inner,)) for r in _runs(inner.children))
        else:
            yield run, f"{path}.{run[0].name}", ()


def _plan(run: list[Block], path: str, depth: int, copies: sp.Expr, trainable: bool, prefix: tuple = ()) -> Plan:
    outer = run[0]
    inner, inner_path, chain, same = _unwrap(outer, path)
    repeat = sp.Mul(*(b.repeat for b in chain))
    names, keys = _names_and_keys(run, inner, chain, depth, prefix)
    trainable = trainable and outer.trainable and inner.trainable
    counted = tuple(run) if inner is outer else (inner,)
    if same is not None:  # a group of identical leaves only: one leaf item, several times
        inner_path = f"{inner_path}.{same[0].name}"
        inner, counted = same[0], tuple(same)
        names = tuple(((*prefix, b) if prefix else (), b.name) for b in same)
        if all(b.ref == "" for b in same):  # parts of one fused tensor (GPT-2's c_attn): the group is the module
            names = (((*prefix, *chain), outer.name),)
        trainable = trainable and inner.trainable
    mult = len(counted)
    children: tuple[Plan, ...] = ()
    written = inner.is_leaf or inner.written is not None
    if inner.is_leaf:
        expr = product_as_written(mult, inner.as_written) if mult != 1 else inner.as_written
    else:
        children = tuple(_plan(r, p, depth + 1, copies * repeat, trainable, pre) for r, p, pre in
                         _parts(inner, inner_path))
        if (module := wrapped(inner)) is not None:  # one title for the two: "Masked self-attention with its RMSNorm"
            keys = ("+".join(b.title_key for b in inner.children if b is module or b.kind == "norm"),)
        expr = inner.written if inner.written is not None else closed_form(inner.count)
    # a simplified sum keeps the order of the parts it adds up, whose numbers follow it in that order
    shown = expr if written else in_order_of(expr, [sp.expand(sp.sympify(c.total_expr).doit()) for c in children])
    formula = latex(shown, written=written)
    size = evaluated(expr)
    # the per-head story is told where the form is as written (a group's simplified count has no story) and a
    # head's width H/A shows in it: B·A or A·D·H are counts in A, not a split into heads that could cancel
    per_head = written and A in expr.free_symbols and splits_into_heads(expr)
    total_expr = product_as_written(repeat, expr) if repeat != 1 else expr
    # as many tensors of that shape as the item holds: Q, K and V (3 × [H, H]); a LayerNorm's γ and β (2 × [H])
    tensors = mult * (len(inner.params) if inner.kind == "norm" else 1)
    shape = "[" + ", ".join(latex(d, written=True) for d in inner.shape) + "]" if inner.is_leaf and inner.shape else ""
    shape = f"{tensors} \\times {shape}" if shape and tensors > 1 else shape
    summary_row = depth <= 1  # a component (depth 0) or one of its parts
    reps = sp.expand(copies * repeat)
    return Plan(
        path=path, block_path=inner_path, names=names, keys=keys, depth=depth, leaf=inner.is_leaf,
        multiplicity=mult, repeat=repeat, repeated=repeat != 1, copies=copies, shape=shape, tensors=tensors,
        shape_dims=tuple(sp.sympify(d).doit() for d in inner.shape) if shape else (),
        expr=expr, written=inner.written is not None and not inner.is_leaf, formula=formula,
        collapsed=latex(size) if per_head else None, counted=counted, repeats=chain, total_expr=total_expr,
        total_formula=latex(total_expr, written=written) if repeat != 1 else formula, tied=inner.tied_to,
        trainable=trainable, per_head=per_head, cancels=per_head and A not in size.free_symbols,
        row_repeat="" if not summary_row or reps == 1 else rf"\left({latex(reps)}\right)" if reps.is_Add else latex(reps),
        row_formula="" if not summary_row else "0" if inner.tied_to else formula if shown is not expr and reps == 1
        else _row_formula(reps, size),
        unit=inner.title_key if repeat != 1 else "", children=children)


def _module_name(chain, printed=None) -> str:
    """The path transformers gives the blocks of ``chain`` (``ref`` segments, or their ``printed`` names (see
    :mod:`.module_names`); groupings it lacks left out)."""
    segments = (printed[id(b)] if printed is not None else b.name if b.ref is None else b.ref for b in chain)
    return ".".join(seg for seg in segments if seg)


def module_names(names, printed) -> tuple[str, ...]:
    """An item's module names as a document prints them: each chain's transformers path, else its fallback."""
    return tuple(_module_name(chain, printed) or fallback for chain, fallback in names)


def _names_and_keys(run: list[Block], inner: Block, chain: tuple, depth: int, prefix: tuple = ()) -> tuple[tuple, tuple]:
    """The module names, as ``named_parameters()`` prints them (a chain of single children reads
    ``pooler.dense``; a grouping transformers does not have shows its modules), and title keys of an item.
    A name is kept as the chain of blocks it joins (after ``prefix``, the module a shown wrapper holds it in),
    and our name where transformers has none."""
    outer = run[0]
    names = tuple(((*prefix, b), b.name) for b in run)
    keys = tuple(dict.fromkeys(b.title_key for b in run))
    if len(run) == 1 and not _module_name(chain) and inner.children:
        names = tuple((_unwrap(c, c.name)[2], c.name) for c in inner.children)
    if len(run) == 1 and inner is not outer:
        names = (((*prefix, *chain), outer.name),) if _module_name(chain) or not inner.children else names
        if outer.title is None and inner.title is not None and depth > 0:
            keys = (inner.title,)  # an untitled wrapper (BERT's "intermediate") takes its part's title
        elif inner.is_leaf and inner.title is not None and inner.title != keys[0]:
            keys = (keys[0], inner.title)  # "Task head", then what it is: "Classifier"
    return names, keys


@tree_fact
def plans(tree: Block) -> tuple[Plan, ...]:
    """The plans of the tree's top-level components."""
    return tuple(_plan([child], child.name, 0, tree.repeat, tree.trainable) for child in tree.children)


def _row_formula(copies: sp.Expr, size: sp.Expr) -> str:
    """A summary row's count in LaTeX: multiplied out over a number of copies written as one symbol (``4 H^{2} L``),
    kept as a product over a difference such as L - L_f, which multiplied out would read as negative terms."""
    if copies.is_Add:
        return product_latex(copies, closed_form(size))
    return latex(closed_form(sp.expand(copies * size)))
