"""The key/value cache: what each token leaves in every attention module, and what transformers keeps of it.

The cache after ``s`` tokens is what transformers' ``DynamicCache`` holds
then: every token's keys and values on a layer of full attention, at most
the last ``sliding_window − 1`` on a sliding-window (or chunked) layer
(``DynamicSlidingWindowLayer``), one entry per token of the encoder's input
in a cross-attention.

>>> from symparams import model
>>> cache_per_token(model("llama-3-8b").tree)
(2*G*H*L/A, 0)
>>> model("llama-3-8b").kv_cache("bf16").per_token == 2 * 32 * 8 * 128 * 2
True
>>> held_cache(model("mistral").tree)[0]
2*G*H*L*Min(4095, s)/A
>>> model("gemma-2-2b").kv_cache("bf16").formulas["total"]  # layers 1, 3, 5, ... slide
4*D*G*b*(s*floor(L/2) + (L - floor(L/2))*Min(4095, s))
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import sympy as sp

from ..core.blocks import Block, tree_fact
from ..core.compute import (BATCH, SEQ, Attention, Cached, costed, declares_attention, self_attentions, traced,
                            untraced)
from ..core.display import Reported
from ..core.errors import SymparamsError
from ..core.formatting import thousands
from ..core.symbols import H
from ..core.values import parse_whole
from .dtypes import cache_dtype, parse_dtype
from .kv_serving import FP8_SCALES, check_servable, kv_storage
from .traced import require


def _cached(tree: Block):
    """``(runs, item)`` of every attention module that caches something, and of a traced model's cache layers
    (a :class:`~symparams.core.compute.Cached` reads as an attention run once at the root)."""
    return tuple((runs, item) for _, block, runs, _ in costed(tree).runs() for item in block.computes
                 if isinstance(item, (Attention, Cached)) and item.cache != 0)


@tree_fact
def cache_per_token(tree: Block) -> tuple[sp.Expr, sp.Expr]:
    """Elements one token leaves in the cache, every token kept: (self-attention, per token of context;
    cross-attention, per token of the encoder's input)."""
    own = [runs * item.cache for runs, item in _cached(tree) if not item.cross]
    cross = [runs * item.cache for runs, item in _cached(tree) if item.cross]
    return sp.expand(sp.Add(*own)), sp.expand(sp.Add(*cross))


@tree_fact
def held_cache(tree: Block) -> tuple[sp.Expr, sp.Expr]:
    """Elements the cache of one sequence holds after ``s`` tokens: (self-attention; cross-attention, the
    encoder's input taken as ``s`` tokens long).  A windowed run keeps ``Min(s, window)`` tokens."""
    own, cross = [], []
    for runs, item in _cached(tree):
        if item.cross:
            cross.append(runs * item.cache * SEQ)
        else:
            kept = (runs - item.windowed) * SEQ
            if item.window is not None:
                kept += item.windowed * sp.Min(SEQ, item.window)
            own.append(item.cache * kept)
    return sp.Add(*own), sp.expand(sp.Add(*cross))


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

    cache: int  # elements per token of context, over every self-attention module, every token kept
    cross_cache: int  # elements per token of the encoder's input, over every cross-attention module
    layers: tuple[tuple[int, int], ...]  # (runs, heads) of each self-attention module
    hidden: int  # H (0 where the activations are not known)
    state: int = 0  # elements per sequence whatever its length (a traced state-space layer's states)
    windows: tuple[tuple[int, int], ...] = ()  # (tokens kept, elements per token of the runs keeping them)

    def held(self, seq: int) -> int:
        """Elements one sequence's cache holds after ``seq`` tokens (a windowed run keeps its last tokens)."""
        windowed = sum(elements for _, elements in self.windows)
        return ((self.cache - windowed + self.cross_cache) * seq + self.state
                + sum(elements * min(seq, kept) for kept, elements in self.windows))

    @property
    def stops_growing(self) -> int | None:
        """The length after which the held cache grows no more (every cached token windowed); else None."""
        if not self.windows or self.cross_cache or self.cache != sum(e for _, e in self.windows):
            return None
        return max(kept for kept, _ in self.windows)


def _whole(model, expr, what: str, least: int = 0) -> int:
    value = model.evaluate(expr)
    if value.free_symbols:  # a symbol the tree uses outside its counts (a repeat count in ``calls``)
        raise SymparamsError(f"{model.name}: no value for {', '.join(sorted(map(str, value.free_symbols)))}, "
                             f"so {what} is not a number")
    if not value.is_Integer or value < least:
        raise SymparamsError(f"{model.name}: {what} comes to {value}, not a whole number"
                             + (f" of at least {least}" if least else ""))
    return int(value)


def _windows(model) -> tuple[tuple[int, int], ...]:
    """(tokens kept, elements per token) of the windowed runs, one entry per window length."""
    elements: dict[int, int] = {}
    for runs, item in _cached(model.tree):
        if item.window is None or item.cross:
            continue
        windowed = _whole(model, item.windowed, "the number of sliding-window layers")
        if windowed > _whole(model, runs, "a layer count"):
            raise SymparamsError(f"{model.name}: {windowed} sliding-window layers, more than the "
                                 f"{_whole(model, runs, 'a layer count')} the model runs")
        if windowed:
            kept = _whole(model, item.window, "the tokens a sliding window keeps")
            elements[kept] = elements.get(kept, 0) + windowed * _whole(model, item.cache, "the cache per token")
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

class KVCache(Reported):
    """The key/value cache of ``model`` serving ``batch`` sequences of ``seq`` tokens in ``dtype``.

    ``per_token`` is the bytes one token of context leaves while every token
    stays (every layer's keys and values, ``2·L·G·D`` elements for
    MHA/GQA/MQA); ``cross_per_token`` the bytes each token of an encoder's
    input leaves in the decoder's cross-attention; ``total`` the bytes
    transformers' cache holds after ``seq`` tokens of each of ``batch``
    sequences (the encoder's input taken as long as the decoder's, ``seq``),
    None without ``seq``.  A sliding-window layer keeps at most its last
    ``sliding_window − 1`` tokens (``windows``: the tokens kept, and the
    bytes per token of the layers keeping them), so past its window the
    cache grows by less than ``per_token``.

    >>> from symparams import model
    >>> kv = model("llama-3-8b").kv_cache("bf16", seq=8192, batch=2)
    >>> kv.per_token, kv.total == 131072 * 8192 * 2
    (131072, True)
    >>> model("bert-base").kv_cache().per_token
    0

    Mistral 7B v0.1 keeps 4,095 tokens on each of its 32 layers:

    >>> kv = model("mistral-7b").kv_cache("bf16", seq=32768)
    >>> kv.windows, kv.total == 131072 * 4095
    (((4095, 131072),), True)
    """

    def __repr__(self) -> str:
        return (f"<KVCache {self.model.name}: {self.per_token:,} bytes per token ({self.dtype}, seq={self.seq}, "
                f"batch={self.batch})>")

    def __init__(self, model, dtype: str = "bf16", seq=None, batch=1, kv_dtype=None, block_size=None):
        self.model = model
        self.dtype = parse_dtype(dtype)
        self.seq = None if seq is None else parse_whole("the sequence length s", seq)
        self.batch = parse_whole("the batch size b", batch)
        # a server's storage (:mod:`.kv_serving`): its own dtype, fp8 or int scales, paged blocks
        self.storage = kv_storage(cache_dtype(self.dtype), kv_dtype, block_size)

    @cached_property
    def _sizes(self) -> _Attention:
        sizes = _attention(self.model)
        if self.storage.served:
            check_servable(self.model, self.storage, _cached(self.model.tree))
        return sizes

    @property
    def element_bytes(self):
        """Bytes of one cached element (an int8/int4 cache's: a Fraction, its group's scales included)."""
        rate = self.storage.rate
        return int(rate) if rate.denominator == 1 else rate

    def _bytes(self, elements: int) -> int:
        value = elements * self.storage.rate
        if value.denominator != 1:  # the groups are checked to fit every module's keys and values
            raise SymparamsError(f"{self.model.name}: {elements} cached elements are not whole groups")
        return int(value)

    @property
    def per_token(self) -> int:
        return self._bytes(self._sizes.cache)

    @property
    def cross_per_token(self) -> int:
        return self._bytes(self._sizes.cross_cache)

    @property
    def scales(self) -> int:
        """Bytes an fp8 cache keeps whatever the batch and length: the keys' and values' scales of each layer."""
        return 0 if self.storage.kind != "fp8" else FP8_SCALES * self._layers

    @cached_property
    def _layers(self) -> int:
        """The self-attention layers that cache something (each with its fp8 scales)."""
        return _whole(self.model, sp.Add(*(runs for runs, item in _cached(self.model.tree) if not item.cross)),
                      "the cached layers")

    @property
    def windows(self) -> tuple[tuple[int, int], ...]:
        """``(tokens kept, bytes per token)`` of the sliding-window layers, one entry per window length."""
        return tuple((kept, self._bytes(elements)) for kept, elements in self._sizes.windows)

    @property
    def stops_growing(self) -> int | None:
        """The context length past which the cache holds no more (every layer windowed); else None."""
        return self._sizes.stops_growing

    @property
    def state(self) -> int:
        """Bytes one sequence's cache holds whatever its length (a state-space layer's states)."""
        return self._bytes(self._sizes.state)

    def at(self, seq: int, batch: int) -> int:
        """Bytes the cache holds after ``seq`` tokens of each of ``batch`` sequences."""
        if self.storage.served:
            return int(self._served.xreplace({SEQ: seq, BATCH: batch}))
        return self._bytes(self._sizes.held(seq) * batch)

    @cached_property
    def _served(self) -> sp.Expr:
        """A server's held cache at the model's values, in ``s`` and ``b`` (the one formula both the figures
        and :attr:`formulas` come from)."""
        self._sizes  # refuses what it cannot hold first
        return self.model.evaluate(self.formulas["total"])

    @property
    def total(self) -> int | None:
        return None if self.seq is None else self.at(self.seq, self.batch)

    @cached_property
    def formulas(self) -> dict[str, sp.Expr]:
        """The bytes per token (every token kept), and held for ``b`` sequences of ``s`` tokens, in the
        model's symbols (``Min(s, window)`` on a sliding-window layer)."""
        own, cross = cache_per_token(self.model.tree)
        size = sp.Rational(self.storage.rate)
        if self.storage.served:
            layers = sp.Add(*(runs for runs, item in _cached(self.model.tree) if not item.cross))
            return {"per_token": size * own, "cross_per_token": sp.Integer(0), "state": sp.Integer(0),
                    "total": self.storage.held(own, layers)}
        held_own, held_cross = held_cache(self.model.tree)
        state = size * cache_state(self.model.tree)
        return {"per_token": size * own, "cross_per_token": size * cross, "state": state,
                "total": sp.factor_terms(size * (held_own + held_cross) * BATCH + state * BATCH)}

    @property
    def conventions(self) -> list[str]:
        served = [self.storage.convention()] if self.storage.served else []
        return [cache_convention(self.dtype, self.windows, self.per_token, self.state, self.storage.kind), *served]

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.name, "head": self.model.head, "dtype": self.dtype,
                "cache_dtype": self.storage.kind, "block_size": self.storage.block_size, "scales": self.scales,
                "seq": self.seq, "batch": self.batch,
                "per_token": self.per_token, "cross_per_token": self.cross_per_token, "state": self.state,
                "windows": [{"tokens": kept, "per_token": size} for kept, size in self.windows],
                "total": self.total, "formulas": {k: str(v) for k, v in self.formulas.items()},
                "conventions": self.conventions}


def cache_convention(dtype: str, windows=(), per_token: int = 0, state: int = 0, kept: str | None = None) -> str:
    """The KV cache's convention in one sentence; ``windows`` as :attr:`KVCache.windows`, ``per_token`` the
    bytes a token leaves in every self-attention module, ``state`` the bytes a sequence holds whatever its
    length, ``kept`` the cache's own dtype where one is given."""
    kept = kept or cache_dtype(dtype)
    why = f" ({dtype} quantizes the weights only)" if kept != dtype and cache_dtype(dtype) == kept else ""
    holder = "QuantizedCache" if kept in ("fp8", "int8", "int4") else "DynamicCache"
    if not windows:
        held = "every token stays cached"
    elif sum(size for _, size in windows) == per_token:
        held = " and ".join(f"every layer keeps at most its last {thousands(tokens)} tokens" for tokens, _ in windows)
    else:
        held = "; ".join(f"the sliding-window layers ({thousands(size)} of the {thousands(per_token)} bytes a token "
                         f"leaves) keep at most their last {thousands(tokens)} tokens" for tokens, size in windows)
        held += ", the other layers every token"
    states = (f"; the state-space layers hold {thousands(state)} bytes a sequence whatever its length"
              if state else "")
    return (f"KV cache: the keys and values (or compressed latents) each token leaves in every attention module, "
            f"in {kept}{why}, as transformers' {holder} holds them after s tokens: {held}"
            f"{' (a sliding window keeps its last sliding_window − 1)' if windows else ''}{states}; a "
            f"cross-attention cache holds one entry per token of the encoder's input, taken as long as the "
            f"decoder's; an encoder caches nothing")
