"""What a block computes beyond multiplying its weights: attention's two matmuls and its cache.

A Block tree knows each parameter's size; the FLOPs of a linear layer follow
from its weight's shape alone (2·in·out per position).  What does not follow
from a parameter is declared on the block that does it: :class:`Attention`,
the score matmul ``Q·Kᵀ`` and the weighted sum ``softmax(·)·V`` of one
attention module, and what one token leaves in the key/value cache.

>>> from symparams.core.symbols import A, H, G, D
>>> Attention(heads=A, key_width=H / A, value_width=H / A, cache=2 * G * D).cache
2*D*G
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import sympy as sp

from .blocks import Deferred, tree_fact

ZERO = sp.Integer(0)

#: the positions of one sequence, and the sequences of one batch, in a forward pass
SEQ = sp.Symbol("s", positive=True, integer=True)
BATCH = sp.Symbol("b", positive=True, integer=True)


@dataclass(frozen=True)
class Attention:
    """One attention module's score and weighted-sum matmuls, per copy of the block holding it.

    Parameters
    ----------
    heads : Expr
        Query heads (``A``): every query head computes its own scores, even
        when key/value heads are shared (grouped-query attention repeats them).
    key_width : Expr
        One head's query·key width (``H/A`` or ``D``; MLA: ``D_n + D_r``).
    value_width : Expr
        One head's value width (MLA: ``D_v``).
    cache : Expr
        Elements one token of context leaves in the cache in this module
        (keys and values: ``2·G·D``; MLA's compressed latent: ``R_kv + D_r``);
        0 where nothing is cached (an encoder).
    causal : bool
        Whether a token attends only to earlier ones (a decoder's self-attention).
    cross : bool
        Keys and values come from the encoder's positions.
    window : Expr or None
        Tokens a windowed copy's cache keeps at most: transformers'
        ``DynamicSlidingWindowLayer`` keeps the last ``sliding_window − 1``
        (a chunked layer the same with ``attention_chunk_size``).  None: no
        copy is windowed.
    windowed : Expr
        How many of the module's runs keep only that window (an expression in
        the model's symbols: ``L``, ``L - floor(L/6)``); the others keep every
        token.

    A windowed declaration needs both: ``windowed`` without a ``window`` is refused.

    >>> from symparams.core.symbols import A, D, G, L
    >>> Attention(A, D, D, cache=2 * G * D, causal=True, window=sp.Integer(4095), windowed=L).windowed
    L
    >>> Attention(A, D, D, windowed=L)
    Traceback (most recent call last):
    ...
    ValueError: an attention module with windowed runs needs the window they keep
    """

    heads: sp.Expr
    key_width: sp.Expr
    value_width: sp.Expr
    cache: sp.Expr = ZERO
    causal: bool = False
    cross: bool = False
    window: sp.Expr | None = None
    windowed: sp.Expr = ZERO

    def __post_init__(self):
        object.__setattr__(self, "windowed", sp.sympify(self.windowed))
        if self.window is not None:
            object.__setattr__(self, "window", sp.sympify(self.window))
        elif self.windowed != 0:
            raise ValueError("an attention module with windowed runs needs the window they keep")


class Product(NamedTuple):
    """A matrix product of activations no weight shows, per copy of the block holding it.

    ``forward`` is its FLOPs (``2·m·n·k``) in the model's symbols, :data:`SEQ`
    and :data:`BATCH`; ``backward`` how many times that again the backward
    pass costs (2: both factors need a gradient; 1: one does; 0: neither).
    """

    forward: sp.Expr
    backward: int = 2


class Traced(NamedTuple):
    """FLOPs PyTorch's counter traced in one module of a transformers model (inferred data), every run of the
    module together, in the model's symbols, :data:`SEQ` and :data:`BATCH`.

    ``what`` is the kind of products: ``"matmul"`` (one factor a weight), ``"attention"`` (the score matmul and
    the weighted sum) or ``"product"`` (any other).  A tree that holds these is *traced*: its FLOPs are these
    items alone, never worked out again from its weights or its attention declarations.
    """

    forward: sp.Expr
    backward: sp.Expr
    what: str = "matmul"


class Cached(NamedTuple):
    """What one kind of a traced model's cache layers holds, every layer of the kind together (inferred data).

    ``cache`` elements per token of context (per token of the encoder's input when ``cross``), of which a
    windowed kind keeps at most ``window`` tokens (``sliding_window − 1``; ``windowed`` is then 1: the kind is
    held at the root, one run), and ``state`` elements whatever the length (a state-space layer's states), per
    sequence.  The fields read as :class:`Attention`'s do, so the cache is worked out by one code path.
    """

    cache: sp.Expr
    window: sp.Expr | None = None
    cross: bool = False
    state: sp.Expr = ZERO

    @property
    def windowed(self) -> sp.Expr:
        return sp.Integer(0 if self.window is None else 1)


class Untraced(NamedTuple):
    """A cost the inferred data does not hold for this model (``what``: ``"costs"``, ``"cache"``,
    ``"activations"``, ``"attention"``), and why, in one line."""

    what: str
    reason: str


@tree_fact
def costed(tree):
    """``tree`` with the items a :class:`Deferred` on its root puts on it (the tree itself when there is none)."""
    deferred = [item for item in tree.computes if isinstance(item, Deferred)]
    return deferred[0].attach(tree) if deferred else tree


@tree_fact
def traced(tree) -> bool:
    """Whether the tree's FLOPs were traced (inferred data): its :class:`Traced` items are its FLOPs."""
    return any(isinstance(item, Traced) for _, block, _ in costed(tree).walk() for item in block.computes)


@tree_fact
def untraced(tree) -> dict:
    """What the inferred data leaves unknown for this tree, each with its reason (empty for a hand family)."""
    return {item.what: item.reason for _, block, _ in costed(tree).walk() for item in block.computes
            if isinstance(item, Untraced)}


@tree_fact
def declares_attention(tree) -> bool:
    """Whether the tree declares its attention modules (a model inferred from transformers' builds does not:
    its FLOPs, cache and activations are unknown, where a silent 0 would read as an encoder's)."""
    return any(isinstance(item, Attention) for _, block, _ in costed(tree).walk() for item in block.computes)


def self_attentions(tree) -> tuple[tuple[sp.Expr, Attention], ...]:
    """``(runs, attention)`` of every self-attention module of ``tree`` (a Block), cross-attention left out:
    one transformer layer per run, for the FLOPs laws and the activations."""
    return tuple((runs, item) for _, block, runs, _ in costed(tree).runs() for item in block.computes
                 if isinstance(item, Attention) and not item.cross)
