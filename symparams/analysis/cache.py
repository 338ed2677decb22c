"""The key/value cache: what each token leaves in every attention module, in bytes.

>>> from symparams import model
>>> cache_per_token(model("llama-3-8b").tree)
(2*G*H*L/A, 0)
>>> model("llama-3-8b").kv_cache("bf16").per_token == 2 * 32 * 8 * 128 * 2
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import sympy as sp

from ..core.blocks import Block, tree_fact
from ..core.compute import (BATCH, SEQ, Attention, Cached, costed, declares_attention, self_attentions, traced,
                            untraced)
from ..core.errors import SymparamsError
from ..core.symbols import H
from ..core.values import parse_whole
from .dtypes import DTYPE_BYTES, cache_dtype, parse_dtype
from .traced import require


@tree_fact
def cache_per_token(tree: Block) -> tuple[sp.Expr, sp.Expr]:
    """Elements one token leaves in the cache: (self-attention, per token of context; cross-attention,
    per token of the encoder's input)."""
    own, cross = [], []
    for _, block, runs, _ in costed(tree).runs():
        for item in block.computes:
            if isinstance(item, (Attention, Cached)) and item.cache != 0:  # Cached: a traced model's cache layers
                (cross if item.cross else own).append(runs * item.cache)
    return sp.expand(sp.Add(*own)), sp.expand(sp.Add(*cross))


@tree_fact
def cache_state(tree: Block) -> sp.Expr:
    """Elements a sequence's cache holds whatever its length (a traced state-space layer's states; 0 else)."""
    return sp.expand(sp.Add(*(runs * item.state for _, block, runs, _ in costed(tree).runs()
                              for item in block.computes if isinstance(item, Cached))))


@tree_fact
def self_attention_layers(tree: Block) -> tuple[tuple[sp.Expr, sp.Expr], ...]:
    """``(runs, heads)`` of each self-attention module: one transformer layer per run for the activations.

    >>> from symparams import model
    >>> self_attention_layers(model("llama").tree)
    ((L, A),)
    """
    return tuple((runs, attention.heads) for runs, attention in self_attentions(tree))



# -- the model's sizes, evaluated once ----------------------------------------------------------

@dataclass(frozen=True)
class _Attention:
    """What the cache and the activations need from a model, as exact integers."""

    cache: int  # elements per token of context, over every self-attention module
    cross_cache: int  # elements per token of the encoder's input, over every cross-attention module
    layers: tuple[tuple[int, int], ...]  # (runs, heads) of each self-attention module
    hidden: int  # H (0 where the activations are not known)
    state: int = 0  # elements per sequence whatever its length (a traced state-space layer's states)
    windows: tuple[tuple[int, int], ...] = ()  # (tokens kept, elements per token of the layers keeping them)

    def held(self, seq: int) -> int:
        """Elements one sequence's cache holds after ``seq`` tokens (a windowed layer keeps its last tokens)."""
        windowed = sum(elements for _, elements in self.windows)
        return ((self.cache - windowed + self.cross_cache) * seq + self.state
                + sum(elements * min(seq, kept) for kept, elements in self.windows))


def _whole(model, expr, what: str) -> int:
    value = model.evaluate(expr)
    if value.free_symbols:  # a symbol the tree uses outside its counts (a repeat count in ``calls``)
        raise SymparamsError(f"{model.name}: no value for {', '.join(sorted(map(str, value.free_symbols)))}, "
                             f"so {what} is not a number")
    if not value.is_Integer:
        raise SymparamsError(f"{model.name}: {what} comes to {value}, not a whole number")
    return int(value)


def _windows(model) -> tuple[tuple[int, int], ...]:
    """(tokens kept, elements per token) of a traced model's cache layers that keep only a window."""
    elements: dict[int, int] = {}
    for _, block, runs, _ in costed(model.tree).runs():
        for item in block.computes:
            if isinstance(item, Cached) and item.window is not None and not item.cross:
                kept = _whole(model, item.window, "the tokens a sliding window keeps")
                elements[kept] = elements.get(kept, 0) + _whole(model, runs * item.cache, "the cache per token")
    return tuple(sorted(elements.items()))


def _attention(model) -> _Attention:
    """The model's cache per token and attention layers; refused for a family that does not declare them yet
    (a silent 0 would read as an encoder's)."""
    model._require_values("memory")
    require(model, "cache", what="the KV cache is")
    if not (declares_attention(model.tree) or traced(model.tree)):
        raise SymparamsError(f"{model.name}: the {model.family.name} family does not declare its attention "
                             f"modules yet, so its KV cache and activations are not known")
    own, cross = cache_per_token(model.tree)
    layers = tuple((_whole(model, runs, "a layer count"), _whole(model, heads, "a head count"))
                   for runs, heads in self_attention_layers(model.tree))
    hidden = 0 if "activations" in untraced(model.tree) else _whole(model, H, "H")
    return _Attention(_whole(model, own, "the cache per token"),
                      _whole(model, cross, "the cross-attention cache per token"), layers, hidden,
                      _whole(model, cache_state(model.tree), "the cache's state"), _windows(model))



# -- the KV cache ----------------------------------------------------------------------------------

class KVCache:
    """The key/value cache of ``model`` serving ``batch`` sequences of ``seq`` tokens in ``dtype``.

    ``per_token`` is the bytes one token of context leaves (every layer's keys
    and values, ``2·L·G·D`` elements for MHA/GQA/MQA); ``cross_per_token`` the
    bytes each token of an encoder's input leaves in the decoder's
    cross-attention; ``total`` both for ``batch × seq`` tokens (the encoder's
    input taken as long as the decoder's, ``seq``), None without ``seq``.
    Every token of context stays cached: a sliding-window layer that keeps only
    its last tokens holds less once the context is longer than its window.

    >>> from symparams import model
    >>> kv = model("llama-3-8b").kv_cache("bf16", seq=8192, batch=2)
    >>> kv.per_token, kv.total == 131072 * 8192 * 2
    (131072, True)
    >>> model("bert-base").kv_cache().per_token
    0
    """

    def __init__(self, model, dtype: str = "bf16", seq=None, batch=1):
        self.model = model
        self.dtype = parse_dtype(dtype)
        self.seq = None if seq is None else parse_whole("the sequence length s", seq)
        self.batch = parse_whole("the batch size b", batch)

    @cached_property
    def _sizes(self) -> _Attention:
        return _attention(self.model)

    @property
    def element_bytes(self) -> int:
        """Bytes of one cached element."""
        return int(DTYPE_BYTES[cache_dtype(self.dtype)])

    @property
    def per_token(self) -> int:
        return self._sizes.cache * self.element_bytes

    @property
    def cross_per_token(self) -> int:
        return self._sizes.cross_cache * self.element_bytes

    @property
    def state(self) -> int:
        """Bytes one sequence's cache holds whatever its length (a state-space layer's states)."""
        return self._sizes.state * self.element_bytes

    def at(self, seq: int, batch: int) -> int:
        """Bytes of the cache of ``batch`` sequences of ``seq`` tokens."""
        return self._sizes.held(seq) * batch * self.element_bytes

    @property
    def total(self) -> int | None:
        return None if self.seq is None else self.at(self.seq, self.batch)

    @cached_property
    def formulas(self) -> dict[str, sp.Expr]:
        """The bytes per token, and of ``b`` sequences of ``s`` tokens, in the model's symbols."""
        own, cross = cache_per_token(self.model.tree)
        per_token, cross_per_token = self.element_bytes * own, self.element_bytes * cross
        state = self.element_bytes * cache_state(self.model.tree)
        windowed = [(runs * item.cache, item.window) for _, block, runs, _ in costed(self.model.tree).runs()
                    for item in block.computes if isinstance(item, Cached) and item.window is not None
                    and not item.cross]
        kept = sp.Add(*(elements * (sp.Min(SEQ, window) - SEQ) for elements, window in windowed))
        return {"per_token": per_token, "cross_per_token": cross_per_token, "state": state,
                "total": sp.expand(((per_token + cross_per_token) * SEQ + state + self.element_bytes * kept) * BATCH)}

    @property
    def conventions(self) -> list[str]:
        return [_cache_convention(self.dtype, self.model.tree)]

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.name, "head": self.model.head, "dtype": self.dtype,
                "cache_dtype": cache_dtype(self.dtype), "seq": self.seq, "batch": self.batch,
                "per_token": self.per_token, "cross_per_token": self.cross_per_token, "state": self.state,
                "total": self.total,
                "formulas": {k: str(v) for k, v in self.formulas.items()}, "conventions": self.conventions}


def _cache_convention(dtype: str, tree: Block | None = None) -> str:
    kept = cache_dtype(dtype)
    why = f" ({dtype} quantizes the weights only)" if kept != dtype else ""
    traced_windows = tree is not None and any(isinstance(item, Cached) and item.window is not None
                                              for _, block, _ in costed(tree).walk() for item in block.computes)
    window = "a traced sliding-window layer keeps its last sliding_window − 1 tokens, as transformers' cache holds " \
        "them, every other token stays cached" if traced_windows else \
        "every token stays cached (a sliding window's bound is not applied)"
    return (f"KV cache: the keys and values (or compressed latents) each token leaves in every attention module, "
            f"in {kept}{why}; a cross-attention cache holds one entry per token of the encoder's input, taken "
            f"as long as the decoder's; {window}; an encoder caches nothing")
