"""The Block tree: a model as nested, named, symbolic parameter counts.

A :class:`Block` mirrors a PyTorch module.  A leaf owns parameters (``weight``,
``bias``, ...) whose sizes are SymPy expressions; a group holds children.  A
block may repeat (``L`` layers), may be tied to another block (it reuses that
block's weights and adds nothing) and may be non-trainable (a registered
sinusoidal table).  A repeated block may be *routed*: of its ``repeat``
copies (a mixture-of-experts layer's N_e experts) one token uses only ``used``
(its top-k), so the parameters *active* per token leave the others out.

Each block also keeps its count **as written** in the articles: the per-head
form ``A·(H·(H/A) + H/A)`` keeps ``A`` visible (``UnevaluatedExpr``), so a
document can show ``A`` and then show it cancel.  ``written.doit()`` always
equals the simplified count (the test-suite checks every block).

>>> from symparams.core.symbols import H, A
>>> q = per_head_linear("query", H, A, H / A)
>>> q.written
A*(H*(H/A) + H/A)
>>> q.count
H**2 + H
>>> layer = group("layer", [q, layer_norm("LayerNorm", H)], repeat=2, ref="layer.*")
>>> layer.total
2*H**2 + 6*H

Eight experts, two of them used by each token:

>>> from symparams.core.symbols import F
>>> moe = group("experts", [tensor("gate_up_proj", H, 2 * F), tensor("down_proj", F, H)], repeat=8, used=2)
>>> moe.total, moe.active_total
(24*F*H, 6*F*H)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterator, NamedTuple, TypeVar

import sympy as sp

from .symbols import ordered

ONE = sp.Integer(1)
ZERO = sp.Integer(0)


def product_as_written(*factors) -> sp.Expr:
    """A product kept as the articles write it (no reordering, no powers): ``2·H``, ``L·(…)``."""
    factors = [sp.sympify(f) for f in factors if f != 1]
    if not factors:
        return ONE
    return factors[0] if len(factors) == 1 else sp.Mul(*factors, evaluate=False)


def sum_as_written(*terms) -> sp.Expr:
    """A sum kept as the articles write it (nested sums are spliced: (a + b) + c = a + b + c)."""
    flat = []
    for t in map(sp.sympify, terms):
        flat.extend(t.args if t.is_Add else (t,))
    terms = [t for t in flat if t != 0]
    if not terms:
        return ZERO
    return terms[0] if len(terms) == 1 else sp.Add(*terms, evaluate=False)


class Deferred(NamedTuple):
    """A tree's costs, put on it when first asked for: ``attach(tree)`` gives the tree with its items (an inferred
    type's costs are SymPy work that ``count`` never needs, and a cold ``count`` stays quick)."""

    attach: Callable



@dataclass(frozen=True)
class Block:
    """One module of a model.

    Parameters
    ----------
    name : str
        Our path segment (``"attention"``); paths join names with dots.
    params : tuple of (str, Expr)
        This block's own parameters and their sizes (simplified).
    children : tuple of Block
        Sub-modules.
    repeat : Expr
        Number of distinct copies (``L`` for a layer stack).
    written : Expr or None
        The count of one copy as the articles write it; by default the sum of
        the parts as written.
    shape : tuple of Expr
        The shape a reader expects, ``(in, out)`` for a linear map.
    trainable : bool
        False for registered, frozen tables (sinusoidal positions).
    tied_to : str or None
        Path of the block whose weights this block reuses; it then adds 0.
    ref : str or None
        The path segment of the same module in the ``transformers``
        implementation (``""`` for a grouping it does not have); default
        ``name``.
    title : str or None
        Key of the block's title in the documents' string catalogs.
    used : Expr or None
        How many of the ``repeat`` copies one token passes through: the
        top-k of a mixture-of-experts layer's routed experts.  None: all of
        them (every block but routed experts).
    kind : str
        What PyTorch module a leaf is (``"linear"``, ``"embedding"``,
        ``"norm"``, ``"parameter"``, ``"tensor"``); ``"group"`` for a block
        with children.  FLOPs follow from it: a linear map or an expert
        tensor is multiplied, a table is looked up.
    computes : tuple
        What the block computes beyond its weights
        (:class:`~symparams.core.compute.Attention`,
        :class:`~symparams.core.compute.Rotary`).
    per_sequence : bool
        The block sees one position per sequence, not every one (a pooler,
        a classifier on the first token).
    calls : Expr
        How many times each copy runs in one forward pass (ALBERT runs its
        shared layers ``L`` times in all).
    steps : tuple of (str, tuple of str)
        How the documents walk this group when its article groups it
        differently from ``transformers``: steps of (title key, the paths of
        the modules it adds up, relative to this block).  BERT's article
        counts a layer as multi-head attention (Q, K, V and ``W^O``), Add &
        Norm, feed-forward (both linear layers), Add & Norm, where the module
        tree has ``attention``, ``intermediate``, ``output``.  Empty: walked
        as the module tree is.
    mean : bool or None
        Whether a norm subtracts the mean: True for a LayerNorm (with or
        without its shift), False for an RMSNorm, None where the tree does not
        know (a scale-only norm transformers' build showed only by its shape).
    """

    name: str
    params: tuple[tuple[str, sp.Expr], ...] = ()
    children: tuple["Block", ...] = ()
    repeat: sp.Expr = ONE
    written: sp.Expr | None = None
    shape: tuple[sp.Expr, ...] = ()
    trainable: bool = True
    tied_to: str | None = None
    ref: str | None = None
    title: str | None = None
    note: str | None = field(default=None, compare=False)
    used: sp.Expr | None = None
    kind: str = "group"
    computes: tuple = ()
    per_sequence: bool = False
    calls: sp.Expr = ONE
    steps: tuple[tuple[str, tuple[str, ...]], ...] = ()
    mean: bool | None = None

    # -- counts --------------------------------------------------------
    @cached_property
    def count(self) -> sp.Expr:
        """Parameters of one copy (0 when tied)."""
        if self.tied_to is not None:
            return ZERO
        return sp.expand(sp.Add(*(n for _, n in self.params), *(c.total for c in self.children)))

    @cached_property
    def total(self) -> sp.Expr:
        """Parameters of all copies."""
        return sp.expand(self.repeat * self.count)

    @cached_property
    def trainable_total(self) -> sp.Expr:
        if self.tied_to is not None or not self.trainable:
            return ZERO
        own = sp.Add(*(n for _, n in self.params))
        return sp.expand(self.repeat * (own + sp.Add(*(c.trainable_total for c in self.children))))

    @cached_property
    def active_count(self) -> sp.Expr:
        """Parameters of one copy that one token uses (0 when tied): the routed experts it is not sent to
        left out."""
        if self.tied_to is not None:
            return ZERO
        return sp.expand(sp.Add(*(n for _, n in self.params), *(c.active_total for c in self.children)))

    @cached_property
    def active_total(self) -> sp.Expr:
        """Parameters of all copies that one token uses: ``used`` copies of a routed block, else all."""
        return sp.expand(self.copies_used * self.active_count)

    @property
    def copies_used(self) -> sp.Expr:
        """How many of the ``repeat`` copies one token passes through."""
        return self.repeat if self.used is None else self.used

    @cached_property
    def routed(self) -> bool:
        """Whether the tree holds routed copies (experts), so that the active count may differ from the total."""
        return any(block.used is not None for _, block, _ in self.walk())

    @cached_property
    def as_written(self) -> sp.Expr:
        """One copy's count as the articles write it (A kept visible)."""
        if self.written is not None:
            return self.written
        if self.children:
            return sum_as_written(*(c.total_as_written for c in self.children if c.tied_to is None))
        return sum_as_written(*(n for _, n in self.params))

    @cached_property
    def total_as_written(self) -> sp.Expr:
        return product_as_written(self.repeat, self.as_written) if self.repeat != 1 else self.as_written

    @cached_property
    def symbols(self) -> tuple[sp.Symbol, ...]:
        """The symbols the tree is written in (A included, though it may cancel), in the house order."""
        found = set()
        for _, block, copies in self.walk():
            found |= copies.free_symbols | block.calls.free_symbols
            if block.used is not None:
                found |= block.used.free_symbols
            if block.is_leaf:
                found |= block.as_written.free_symbols
                for _, n in block.params:
                    found |= n.free_symbols
        return tuple(ordered(found))

    @cached_property
    def facts(self) -> dict:
        """What other layers derive from this tree alone, kept with it (see :func:`tree_fact`)."""
        return {}

    @property
    def title_key(self) -> str:
        return self.title or self.name

    @property
    def is_leaf(self) -> bool:
        return not self.children

    # -- navigation ----------------------------------------------------
    def walk(self, prefix: str = "", times: sp.Expr = ONE) -> Iterator[tuple[str, "Block", sp.Expr]]:
        """Yield ``(path, block, copies)`` for this block and every descendant.

        ``copies`` is how many copies of the block the model holds (the
        product of the repeats above and including it).
        """
        path = f"{prefix}.{self.name}" if prefix else self.name
        times = times * self.repeat
        yield path, self, times
        for child in self.children:
            yield from child.walk(path, times)

    def runs(self, prefix: str = "", times: sp.Expr = ONE, per_sequence: bool = False):
        """Yield ``(path, block, runs, per_sequence)`` for this block and every descendant.

        ``runs`` is how many times one position passes through the block in a
        forward pass: the copies it uses (its top-k of routed experts) times
        how often each runs (:attr:`calls`); ``per_sequence`` whether the block
        sees one position per sequence.
        """
        path = f"{prefix}.{self.name}" if prefix else self.name
        times = times * self.copies_used * self.calls
        per_sequence = per_sequence or self.per_sequence
        yield path, self, times, per_sequence
        for child in self.children:
            yield from child.runs(path, times, per_sequence)

    def find(self, path: str) -> "Block":
        """The descendant at dotted ``path`` (relative to this block)."""
        block = self
        for part in path.split("."):
            for child in block.children:
                if child.name == part:
                    block = child
                    break
            else:
                raise KeyError(path)
        return block

    def reference_paths(self, prefix: str = "") -> Iterator[tuple[str, "Block"]]:
        """Yield ``(reference path, block)`` for this block and every descendant: the module's path in the
        ``transformers`` implementation (``ref`` segments; a repeated layer's index as ``*``), as
        ``named_parameters()`` prints it (``layers.*.self_attn.q_proj``)."""
        seg = self.name if self.ref is None else self.ref
        path = ".".join(p for p in (prefix, seg) if p)
        yield path, self
        for child in self.children:
            yield from child.reference_paths(path)

    def reference_params(self, prefix: str = "") -> Iterator[tuple[str, sp.Expr, bool]]:
        """Yield ``(reference path, total size, trainable)`` per parameter.

        Paths follow the ``transformers`` module tree (``ref`` segments), with
        repeated layers written as ``*``, so they compare directly with
        ``named_parameters()`` once its layer indices are replaced by ``*``.
        Tied blocks yield nothing (PyTorch lists shared tensors once).
        """
        yield from self._reference_params(prefix, ONE, True)

    def _reference_params(self, prefix, times, trainable):
        if self.tied_to is not None:
            return
        seg = self.name if self.ref is None else self.ref
        path = ".".join(p for p in (prefix, seg) if p)
        times = times * self.repeat
        trainable = trainable and self.trainable
        for pname, size in self.params:
            yield ".".join(p for p in (path, pname) if p), sp.expand(times * size), trainable
        for child in self.children:
            yield from child._reference_params(path, times, trainable)


T = TypeVar("T")


def tree_fact(derive: Callable[[Block], T]) -> Callable[[Block], T]:
    """``derive(tree)`` computed once per tree and kept on it: it lives exactly as long as the tree.

    Models of one family with the same switches and head share one tree, so
    what depends on the tree only (a proof's symbolic part, a document's
    formulas) is worked out once for all of them.
    """
    @functools.wraps(derive)
    def once(tree: Block) -> T:
        facts = tree.facts
        if derive not in facts:
            facts[derive] = derive(tree)
        return facts[derive]

    return once


# -- leaf constructors (they mirror torch.nn modules) ----------------------

def embedding(name, num, dim, *, trainable=True, tied_to=None, ref=None, title=None) -> Block:
    """``nn.Embedding(num, dim)``: a ``num × dim`` table."""
    return Block(name, params=(("weight", sp.expand(num * dim)),), written=product_as_written(num, dim),
                 shape=(num, dim), trainable=trainable, tied_to=tied_to, ref=ref, title=title, kind="embedding")


def linear(name, n_in, n_out, *, bias=True, tied_to=None, ref=None, title=None, per_sequence=False) -> Block:
    """``nn.Linear(n_in, n_out, bias)``: weight ``n_in·n_out`` and bias ``n_out`` (``per_sequence``: applied to
    one position of each sequence)."""
    params = (("weight", sp.expand(n_in * n_out)),) + ((("bias", sp.expand(n_out)),) if bias else ())
    written = sum_as_written(product_as_written(n_in, n_out), n_out if bias else 0)
    return Block(name, params=params, written=written, shape=(n_in, n_out),
                 tied_to=tied_to, ref=ref, title=title, kind="linear", per_sequence=per_sequence)


def per_head_linear(name, n_in, heads, head_dim, *, bias=True, ref=None, title=None) -> Block:
    """A Q/K/V projection written per head: ``heads·(n_in·head_dim + head_dim)``.

    PyTorch holds it as one ``nn.Linear(n_in, heads·head_dim)``; the written
    form keeps ``heads`` and ``head_dim`` apart so documents can show how
    the head count cancels (when ``head_dim = H/A``).
    """
    hd = sp.UnevaluatedExpr(head_dim) if not head_dim.is_Atom else head_dim
    written = product_as_written(heads, sum_as_written(product_as_written(n_in, hd), hd if bias else 0))
    out = sp.expand(heads * head_dim)
    params = (("weight", sp.expand(n_in * out)),) + ((("bias", out),) if bias else ())
    return Block(name, params=params, written=written, shape=(n_in, product_as_written(heads, hd)), ref=ref,
                 title=title, kind="linear")


def layer_norm(name, dim, *, bias=True, ref=None, title=None) -> Block:
    """``nn.LayerNorm(dim)``: scale γ and shift β (not "mean and variance")."""
    params = (("weight", dim),) + ((("bias", dim),) if bias else ())
    return Block(name, params=params, written=product_as_written(2, dim) if bias else dim, shape=(dim,),
                 ref=ref, title=title or ("layer_norm" if bias else "layer_norm_no_shift"), kind="norm", mean=True)


def rms_norm(name, dim, *, ref=None, title=None) -> Block:
    """RMSNorm: a scale only."""
    return Block(name, params=(("weight", dim),), written=dim, shape=(dim,), ref=ref, title=title or "rms_norm",
                 kind="norm", mean=False)


def parameter(name, size, *, ref=None, title=None, pname="bias") -> Block:
    """A bare ``nn.Parameter`` of ``size`` elements (e.g. the MLM decoder bias)."""
    return Block(name, params=((pname, sp.sympify(size)),), written=sp.sympify(size), shape=(size,),
                 ref=ref if ref is not None else "", title=title, kind="parameter")


#: the titles of an expert's slices of a fused expert tensor: linear maps, written (in, out) as :func:`linear` is
EXPERT_SLICES = ("expert_gate_up", "expert_down")


def written_in_out(block: Block) -> bool:
    """Whether ``block``'s shape is written (in, out), the turn of PyTorch's stored [out, in]: a linear layer's
    weight, and an expert's slice of a fused tensor (transformers applies each with ``F.linear``)."""
    return block.kind == "linear" or (block.kind == "tensor" and block.title in EXPERT_SLICES)


def tensor(name, *dims, ref=None, title=None) -> Block:
    """A bare ``nn.Parameter`` of shape ``dims`` named ``name``: one expert's slice of a fused
    ``[N_e, 2F_e, H]`` expert tensor, the experts' group repeating it N_e times.  A slice used as a linear
    map is given ``(in, out)``, ``(H, 2F_e)``, as :func:`linear` is."""
    dims = tuple(map(sp.sympify, dims))
    return Block(name, params=(("", sp.expand(sp.Mul(*dims))),), written=product_as_written(*dims), shape=dims,
                 ref=ref, title=title, kind="tensor")


def group(name, children, *, repeat=ONE, written=None, ref=None, title=None, trainable=True, used=None,
          computes=(), per_sequence=False, calls=ONE, steps=()) -> Block:
    """A module holding ``children``, repeated ``repeat`` times; a token uses ``used`` of the copies
    (routed experts; None: all); ``computes`` declares its attention or rotary table; ``steps`` how the
    documents group its parts (see :class:`Block`)."""
    children = tuple(c for c in children if c is not None)
    return Block(name, children=children, repeat=sp.sympify(repeat), written=written, ref=ref,
                 title=title, trainable=trainable, used=None if used is None else sp.sympify(used),
                 computes=tuple(computes), per_sequence=per_sequence, calls=sp.sympify(calls),
                 steps=tuple((key, tuple(paths)) for key, paths in steps))
