"""The KV cache as servers hold it: a cache dtype of its own (fp8 with its scales, int8/int4 with group scales)
and paged allocation in blocks of tokens.

``kv_dtype`` is the type the cache stores, apart from the weights':

* ``fp32``, ``bf16``, ``fp16``: 4, 2, 2 bytes an element;
* ``fp8`` (e4m3): a byte an element, and one fp32 scale for the keys and one
  for the values of each attention layer, whatever the batch and length:
  transformers' ``Fp8QuantizedLayer`` (``QuantizedCache("fp8", config)``,
  ``cache_utils.py``) keeps a per-tensor scale frozen after the first update,
  as vLLM's ``kv_cache_dtype="fp8"`` keeps ``_k_scale`` and ``_v_scale``, one
  fp32 each per attention layer (``vllm/model_executor/layers/quantization/kv_cache.py``);
* ``int8``, ``int4``: transformers' ``QuantizedCache`` with the quanto (int4)
  or HQQ (int8, int4) backend, at its defaults (``QuantizedLayer``:
  ``q_group_size=64``, ``residual_length=128``): the quantized tokens packed
  at 8 or 4 bits an element, with a scale and a zero point in the compute dtype
  (the weights' cache dtype, 2 bytes) for every group of 64 elements
  (optimum-quanto's ``group()``, ``numel // group_size`` groups; HQQ's
  ``meta["scale"]`` and ``meta["zero"]``), and a residual of recent tokens kept
  unquantized: ``QuantizedLayer.update`` quantizes the whole prefill, then
  appends decoded tokens to the residual and requantizes everything once it
  would reach 128, so after ``s`` tokens it holds ``n mod 128`` of the ``n``
  decoded ones.  The figure is the most any prefill and decode of ``s``
  tokens leaves: ``min(s, 128) − 1`` tokens in the residual, the rest
  quantized.

``block_size`` pages the cache as vLLM allocates it: each sequence takes
``⌈s/B⌉`` blocks of ``B`` tokens in every attention layer
(``vllm/v1/core/kv_cache_utils.py``, ``cdiv(num_tokens, block_size)``; a block's
bytes ``AttentionSpec.page_size_bytes``, ``2·B·G·D`` elements, ``B·(R_kv + D_r)``
for MLA's latent), so a sequence holds ``B·⌈s/B⌉`` tokens' worth.

Both need a cache of full-attention layers only: transformers'
``QuantizedCache`` refuses sliding-window layers, and a paged sliding window,
a cross-attention cache or a state-space state are not modelled here; each is
refused in one line.

>>> from symparams import model
>>> kv = model("llama-3-8b").kv_cache("bf16", seq=1000, kv_dtype="fp8", block_size=16)
>>> kv.per_token, kv.total == 65536 * 1008 + 8 * 32
(65536, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..core.compute import BATCH, SEQ
from ..core.errors import SymparamsError
from ..core.values import parse_whole
from .dtypes import _shown

#: the cache's own types
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
_PLAIN = {"fp32": 4, "bf16": 2, "fp16": 2}
#: bits of a quantized element of the integer caches
_BITS = {"int8": 8, "int4": 4}
#: transformers' ``QuantizedLayer`` defaults: elements per scale group, tokens the residual holds at most + 1
GROUP, RESIDUAL = 64, 128
#: fp8: an fp32 scale for the keys and one for the values, per attention layer
FP8_SCALES = 2 * 4
#: the most tokens a block may hold (vLLM's own sizes are 1 to 256)
MAX_BLOCK = 1 << 20


def parse_kv_dtype(raw) -> str:
    """The cache's dtype: one of :data:`KV_DTYPES`.

    >>> parse_kv_dtype("FP8")
    'fp8'
    """
    name = raw.strip().lower() if isinstance(raw, str) else None
    if name not in KV_DTYPES:
        raise SymparamsError(f"unknown KV cache dtype {_shown(raw)}: use one of {', '.join(KV_DTYPES)}")
    return name


def parse_block_size(raw) -> int:
    """Tokens per paged block: a whole number from 1 to 2^20."""
    size = parse_whole("the KV cache's block size", raw)
    if size > MAX_BLOCK:
        raise SymparamsError(f"the KV cache's block size is at most {MAX_BLOCK:,} tokens, not {size:,}")
    return size


@dataclass(frozen=True)
class KVStorage:
    """How a server stores the cache: ``kind`` (a :data:`KV_DTYPES`), ``compute`` (the dtype keys and values are
    computed in: the unquantized residual's), ``block_size`` (None: not paged)."""

    kind: str
    compute: str
    block_size: int | None = None

    @property
    def served(self) -> bool:
        """Whether it differs from transformers' DynamicCache in the compute dtype (a quantized or paged cache)."""
        return self.kind in ("fp8", *_BITS) or self.block_size is not None

    @property
    def rate(self) -> Fraction:
        """Bytes of one stored element (int8/int4: its group's scale and zero point included)."""
        if self.kind in _BITS:
            return Fraction(_BITS[self.kind], 8) + Fraction(2 * _PLAIN[self.compute], GROUP)
        return Fraction(1) if self.kind == "fp8" else Fraction(_PLAIN[self.kind])

    def held(self, elements, layers) -> sp.Expr:
        """Bytes the cache of ``b`` sequences of ``s`` tokens holds, ``elements`` a token leaves over every
        layer, ``layers`` the attention layers (each with its fp8 scales)."""
        tokens = SEQ if self.block_size is None else self.block_size * sp.ceiling(SEQ / self.block_size)
        if self.kind in _BITS:
            residual = sp.Min(SEQ, RESIDUAL) - 1
            per_element = sp.Rational(self.rate) * (SEQ - residual) + _PLAIN[self.compute] * residual
            return elements * BATCH * per_element
        fixed = FP8_SCALES * layers if self.kind == "fp8" else 0
        return sp.Rational(self.rate) * elements * BATCH * tokens + fixed

    def convention(self) -> str:
        stored = {"fp8": "fp8 (e4m3): a byte an element, and one fp32 scale for the keys and one for the values "
                         "per attention layer (transformers' Fp8QuantizedLayer, vLLM's k_scale and v_scale)",
                  "int8": "int8 as transformers' QuantizedCache (HQQ) holds it",
                  "int4": "int4 as transformers' QuantizedCache (quanto, HQQ) holds it"}.get(self.kind, self.kind)
        if self.kind in _BITS:
            stored += (f": {_BITS[self.kind]} bits an element, a scale and a zero point in {self.compute} per group of "
                       f"{GROUP} elements, and at most the last min(s, {RESIDUAL}) − 1 tokens unquantized in "
                       f"{self.compute} (the residual, at its fullest)")
        paged = ("" if self.block_size is None else
                 f"; paged as vLLM allocates it: each sequence takes ⌈s/{self.block_size}⌉ blocks of "
                 f"{self.block_size} tokens in every attention layer")
        return f"KV cache: stored in {stored}{paged}"


def kv_storage(compute: str, kv_dtype=None, block_size=None) -> KVStorage:
    """The storage of a cache computed in ``compute``, in ``kv_dtype`` (None: ``compute``), paged in blocks
    of ``block_size`` tokens (None: not paged)."""
    kind = compute if kv_dtype is None else parse_kv_dtype(kv_dtype)
    block = None if block_size is None else parse_block_size(block_size)
    if kind in _BITS and block is not None:
        raise SymparamsError(f"an {kind} KV cache is transformers' QuantizedCache, which is not paged: leave out "
                             "the block size, or use fp8, bf16 or fp16")
    return KVStorage(kind, compute, block)


def check_servable(model, storage: KVStorage, cached) -> None:
    """Refuse, in one line, a model whose cache ``storage`` cannot hold as modelled: ``cached`` is every caching
    attention module, ``(runs, item)``."""
    what = f"a KV cache in {storage.kind}" if storage.kind in ("fp8", *_BITS) else "a paged KV cache"
    for runs, item in cached:
        if item.cross:
            raise SymparamsError(f"{model.name}: {what} of a cross-attention is not modelled here")
        if item.window is not None and model.evaluate(getattr(item, "windowed", runs)) != 0:
            raise SymparamsError(f"{model.name}: {what} of sliding-window layers is not modelled here "
                                 "(transformers' QuantizedCache refuses them; vLLM frees their blocks as the "
                                 "window moves)")
        if getattr(item, "state", 0) != 0:
            raise SymparamsError(f"{model.name}: {what} of state-space layers is not modelled here")
        if storage.kind in _BITS:
            half = model.evaluate(item.cache / 2)
            if not (half.is_Integer and half % GROUP == 0):
                raise SymparamsError(f"{model.name}: a token leaves {model.evaluate(item.cache)} elements in an "
                                     f"attention module, not keys and values of a multiple of {GROUP} each, so "
                                     f"the {storage.kind} cache's groups of {GROUP} do not fit them")
