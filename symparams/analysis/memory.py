"""Memory in bytes, from the same Block tree: weights, gradients, optimizer state, activations, KV cache.

Every number is an exact integer of bytes.  Each part is a formula in the
model's symbols, the sequence length ``s`` and the batch ``b``
(:attr:`Memory.formulas`), evaluated exactly at the model's values and
rounded **up** to a whole byte (the only rounding; an int4 model's blocks are
rounded up inside its formula, as ``ceiling``); the total is the sum of the
rounded parts.

Conventions (each :class:`Memory` lists the ones it uses in ``conventions``):

* bytes per element: fp32 4, bf16 2, fp16 2, int8 1; int4 is 4 bits a
  weight plus one fp16 scale per block of 32 weights, 18 bytes per 32
  weights, the model's N weights taken as ``ceil(N/32)`` blocks;
* the weights are the model's count (PyTorch lists a tied tensor once);
* training (``optimizer`` adam or sgd): gradients of the trainable
  parameters in the training dtype (fp32: 4 bytes; bf16/fp16 mixed precision:
  2); Adam keeps two fp32 moments (8 bytes a parameter), plus an fp32 master
  copy in mixed precision (12), so that weights, gradients and Adam come to
  16 bytes a parameter as in the ZeRO paper; SGD with momentum keeps one
  moment (4; mixed: 8); int8/int4 weights are not trained;
* ZeRO (Rajbhandari et al. 2020) over ``ranks`` data-parallel ranks, per
  rank: stage 1 partitions the optimizer state, 2 also the gradients, 3 also
  the weights;
* activations (training only, with ``seq``): Korthikanti et al. 2022 per
  transformer layer, per rank (see :func:`activation_bytes_per_layer`);
* the KV cache (serving only, ``optimizer="none"``): what transformers'
  cache holds after ``s`` tokens (:func:`held_cache`): the elements each
  token leaves in every attention module, a sliding-window layer keeping at
  most its last ``sliding_window − 1`` tokens, in the dtype (int8/int4
  weights: an fp16 cache); an encoder caches nothing.

>>> from symparams import model
>>> mem = model("bert-base").memory(dtype="fp32", optimizer="adam")
>>> mem.weights, mem.gradients, mem.optimizer, mem.total == 16 * 109482240
(437928960, 437928960, 875857920, True)
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import cached_property
from typing import Any

import sympy as sp

from ..core.algebra import closed_form
from ..core.compute import BATCH, SEQ, untraced
from ..core.display import Reported
from ..core.errors import SymparamsError
from ..core.symbols import H
from ..core.values import parse_whole
from .cache import KVCache, _Attention, self_attention_layers
from .dtypes import DTYPE_BYTES, _shown, parse_dtype, weight_bytes
from .quantized import OPTIONS as QUANTIZED_OPTIONS
from .quantized import packed_tensors, quantization, quantized_conventions, weights_formula
from .fourbit import FOURBIT, refuse_unplaced
from .fsdp import FSDP_OPTIONS, parse_fsdp
from .parallel import parse_bool as _parse_bool, parse_layout

#: a server's cache (:mod:`.kv_serving`): its own dtype, and paged blocks of tokens
KV_OPTIONS = ("kv_dtype", "block_size")
from .traced import require

#: the dtypes a model is trained in: the gradient's bytes per parameter
GRADIENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
#: optimizer state per trainable parameter: (plain fp32 training, mixed precision with an fp32 master copy)
OPTIMIZER_BYTES = {"adam": (8, 12), "sgd": (4, 8), "none": (0, 0)}
ZERO_STAGES = (0, 1, 2, 3)
RECOMPUTE = ("none", "selective", "full")
#: the keyword options of :class:`Memory` (the parallelism of the activations; a quantized format's)
OPTIONS = ("tensor_parallel", "sequence_parallel", "recompute", *QUANTIZED_OPTIONS, *KV_OPTIONS, *FSDP_OPTIONS)


# -- parsing the settings -------------------------------------------------------------------

def _choice(raw, choices, what: str) -> str:
    name = raw.strip().lower() if isinstance(raw, str) else None
    if name not in choices:
        raise SymparamsError(f"unknown {what} {_shown(raw)}: use one of {', '.join(choices)}")
    return name


def parse_zero(stage) -> int:
    """The ZeRO stage 0, 1, 2 or 3, given as a number or text.

    >>> parse_zero("3")
    3
    """
    if isinstance(stage, str) and re.fullmatch(r"\s*[0-9]\s*", stage):
        stage = int(stage)
    if type(stage) is not int or stage not in ZERO_STAGES:  # not 1.0 nor True, which compare equal to 1
        raise SymparamsError(f"the ZeRO stage must be 0, 1, 2 or 3, not {_shown(stage)}")
    return int(stage)


def parse_options(options: dict) -> tuple[int, bool, str]:
    """(tensor_parallel, sequence_parallel, recompute) from :class:`Memory`'s keyword options (the layout's others
    are :mod:`.parallel`'s)."""
    from .parallel import LAYOUT_OPTIONS

    unknown = sorted(set(options) - set(OPTIONS) - set(LAYOUT_OPTIONS))
    if unknown:
        raise SymparamsError(f"unknown memory option {unknown[0]!r}: the options are "
                             f"{', '.join(OPTIONS + LAYOUT_OPTIONS)}")
    t = parse_whole("the tensor-parallel ranks t", options.get("tensor_parallel", 1))
    sequence_parallel = _parse_bool(options.get("sequence_parallel", False), "sequence_parallel")
    return t, sequence_parallel, _choice(options.get("recompute", "none"), RECOMPUTE, "recompute")


# -- the formulas, for numbers or symbols -----------------------------------------------------

def training_bytes(dtype: str, optimizer: str) -> tuple[int, int]:
    """(gradient, optimizer state) bytes per trainable parameter; (0, 0) for ``optimizer="none"``.

    >>> training_bytes("bf16", "adam"), training_bytes("fp32", "adam"), training_bytes("fp16", "sgd")
    ((2, 12), (4, 8), (2, 8))
    """
    if optimizer == "none":
        return 0, 0
    if dtype not in GRADIENT_BYTES:
        raise SymparamsError(f"{dtype} weights are not trained here: use fp32, bf16 or fp16 with "
                             f"--optimizer {optimizer}, or --optimizer none to serve the model")
    plain, mixed = OPTIMIZER_BYTES[optimizer]
    return GRADIENT_BYTES[dtype], plain if dtype == "fp32" else mixed


def zero_per_rank(weights, gradients, optimizer, stage: int, ranks: int):
    """(weights, gradients, optimizer state) one of ``ranks`` data-parallel ranks holds under ZeRO ``stage``.

    Stage 1 partitions the optimizer state, 2 also the gradients, 3 also the
    weights: a partitioned part is divided by ``ranks`` (exactly: integers
    give a Fraction; the caller rounds up).  The ZeRO paper's example
    (Ψ = 7.5B parameters, 64 ranks, Adam in mixed precision, K = 12):

    >>> psi = 7_500_000_000
    >>> [math.ceil(sum(zero_per_rank(2 * psi, 2 * psi, 12 * psi, k, 64))) for k in (0, 1, 2, 3)]
    [120000000000, 31406250000, 16640625000, 1875000000]
    """
    def share(part, partitioned):
        if not partitioned:
            return part
        return Fraction(part, ranks) if isinstance(part, int) else part / ranks

    return share(weights, stage >= 3), share(gradients, stage >= 2), share(optimizer, stage >= 1)


def activation_bytes_per_layer(s, b, h, a, tensor_parallel: int = 1, sequence_parallel: bool = False,
                               recompute: str = "none"):
    """Activation bytes one transformer layer keeps for the backward pass, per tensor-parallel rank.

    Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
    Transformer Models", Table 2, for the GPT layer they derive (multi-head
    attention of ``a`` heads, a 4h MLP, 16-bit activations, 1-byte dropout
    masks), with ``t`` = ``tensor_parallel``:

    ============================================  =========================
    no parallelism (t = 1)                        s·b·h·(34 + 5·a·s/h)
    tensor parallel                               s·b·h·(10 + 24/t + 5·a·s/(h·t))
    tensor + sequence parallel                    s·b·h/t·(34 + 5·a·s/h)
    selective recomputation                       s·b·h·(10 + 24/t)
    selective recomputation, sequence parallel    s·b·h·34/t
    full recomputation                            2·s·b·h (the layer's input)
    ============================================  =========================

    Arguments may be integers (the result is then an exact Fraction) or SymPy
    expressions.  GPT-3 175B's layer (s = 2048, b = 1, h = 12288, a = 96,
    t = 8, sequence parallel):

    >>> activation_bytes_per_layer(2048, 1, 12288, 96, 8, True) == 2048 * 12288 // 8 * 114
    True
    """
    t = tensor_parallel
    if recompute == "full":
        return 2 * s * b * h
    linear = Fraction(34, t) if sequence_parallel else 10 + Fraction(24, t)  # the s·b·h part
    scores = 0 if recompute == "selective" else 5 * a * s * s * b * Fraction(1, t)  # softmax, its dropout
    return s * b * h * linear + scores


def _ceil(value) -> int:
    """A byte count rounded up: the one rounding of this module."""
    return math.ceil(Fraction(value)) if not isinstance(value, int) else value



# -- the memory of training or serving -----------------------------------------------------------

class Memory(Reported):
    """Bytes one rank holds to train (``optimizer`` adam or sgd) or serve (``optimizer="none"``) ``model``.

    Parameters
    ----------
    model : Model
        Every symbol with a value.
    dtype : str
        fp32, bf16, fp16 (training in bf16/fp16 is mixed precision), int8 or
        int4 (serving only), or a quantized checkpoint's format (serving only;
        :mod:`~symparams.analysis.quantized`: ``q4_k``, ``gptq``, ``fp8``...;
        bitsandbytes' ``nf4``, ``fp4``, :mod:`~symparams.analysis.fourbit`).
    optimizer : str
        adam, sgd (with momentum) or none (serving: no gradients, no optimizer
        state, no activations kept; the KV cache instead).
    zero : int
        ZeRO stage 0–3 over ``ranks`` data-parallel ranks.
    seq, batch : int
        Tokens per sequence (None: no activations, no cache) and sequences per
        rank.
    **options
        ``tensor_parallel`` (t, default 1), ``sequence_parallel`` (default
        False), ``recompute`` (``"none"``, ``"selective"`` or ``"full"``): the
        activations' parallelism (Korthikanti et al.); ``group_size`` (gptq,
        awq), ``keep`` (the parts a quantized format leaves unquantized),
        ``double_quant`` (nf4, fp4: False keeps bitsandbytes' absmax in fp32)
        and ``prepare_kbit`` (nf4, fp4: the unquantized tensors in fp32).  Tensor parallelism
        divides only the activations here; only ZeRO divides the weights,
        gradients and optimizer state.

    The parts (``weights``, ``gradients``, ``optimizer``, ``activations``,
    ``kv_cache``) and ``total`` are exact integers of bytes per rank;
    :attr:`formulas` gives each in the model's symbols, ``s`` and ``b``.

    Llama-3-8B, trained in bf16 with Adam on 4,096 tokens, ZeRO-3 over 8 ranks,
    tensor parallel 2 with sequence parallelism and selective recomputation:

    >>> from symparams import model
    >>> m = model("llama-3-8b", head="causal-lm")
    >>> mem = m.memory("bf16", "adam", zero=3, ranks=8, seq=4096, tensor_parallel=2, sequence_parallel=True,
    ...                recompute="selective")
    >>> mem.weights == 2 * m.count // 8 and mem.optimizer == 12 * m.count // 8
    True
    >>> mem.activations == 32 * 4096 * 4096 * 34 // 2
    True
    """

    def __repr__(self) -> str:
        return (f"<Memory {self.model.name}: {self.total:,} bytes ({self.dtype}, {self.optimizer_name}, "
                f"seq={self.seq}, batch={self.batch})>")

    def __init__(self, model, dtype: str = "bf16", optimizer: str = "adam", zero=0, ranks=1, seq=None, batch=1,
                 **options):
        self.model = model
        self.dtype = parse_dtype(dtype)
        self.optimizer_name = _choice(optimizer, tuple(OPTIMIZER_BYTES), "optimizer")
        self.zero = parse_zero(zero)
        self.ranks = parse_whole("the data-parallel ranks N_d", ranks)
        self.seq = None if seq is None else parse_whole("the sequence length s", seq)
        self.batch = parse_whole("the batch size b", batch)
        self.tensor_parallel, self.sequence_parallel, self.recompute = parse_options(options)
        self.quantization = quantization(self.dtype, **{key: options.get(key) for key in QUANTIZED_OPTIONS})
        if self.dtype in FOURBIT:
            refuse_unplaced(model, self.dtype, self.zero)
        self.gradient_bytes, self.optimizer_bytes = self._training_bytes()
        # the rest of a parallel layout: its most loaded rank is :func:`symparams.analysis.ranks.per_rank`'s
        self.layout = parse_layout(options, self.tensor_parallel, self.sequence_parallel, self.ranks, self.zero)
        self.fsdp = parse_fsdp(options, self)  # PyTorch FSDP over the data-parallel ranks: :mod:`.fsdp`'s rank
        self._kv_options = {k: options[k] for k in KV_OPTIONS if options.get(k) is not None}
        if self._kv_options and self.training:
            raise SymparamsError("a KV cache dtype or block size is a server's cache: serve the model (optimizer "
                                 "none); training keeps keys and values among its activations")
        if self._kv_options and self.layout.splits:
            raise SymparamsError("a server's KV cache (its own dtype, paged blocks) is not split over ranks here: its "
                                 "scales and blocks are not placed as a parallel layout places the layers")
        if self.quantization is not None and self.layout.splits:
            raise SymparamsError(f"a checkpoint quantized as {self.dtype} is not split over ranks here: its packed tensors and "
                                 "scales are not placed as a parallel layout places the weights")

    def _training_bytes(self) -> tuple[int, int]:
        """(gradient, optimizer state) bytes per trainable parameter."""
        return training_bytes(self.dtype, self.optimizer_name)

    @property
    def training(self) -> bool:
        return self.optimizer_name != "none"

    @property
    def _sizes(self) -> _Attention:
        return self._cache._sizes

    @cached_property
    def _cache(self) -> KVCache:
        return KVCache(self.model, self.dtype, self.seq, self.batch, **self._kv_options)

    # -- the parts that do not depend on s and b
    @cached_property
    def _packed(self):
        """A quantized checkpoint's tensors, each with its storage and bytes (None for a plain dtype)."""
        return None if self.quantization is None else packed_tensors(self.model.tree, self.quantization,
                                                                     self.model.values)

    @cached_property
    def _weight_bytes(self) -> int:
        """The weights' bytes, before ZeRO: a quantized checkpoint's, tensor by tensor."""
        if self._packed is None:
            return weight_bytes(self.model.count, self.dtype)
        return int(self.model.evaluate(weights_formula(self._packed)))

    @cached_property
    def _states(self) -> tuple[int, int, int]:
        """(weights, gradients, optimizer state) per rank, each rounded up."""
        trainable = self.model.trainable
        parts = zero_per_rank(self._weight_bytes, self.gradient_bytes * trainable,
                              self.optimizer_bytes * trainable, self.zero, self.ranks)
        return tuple(_ceil(p) for p in parts)

    @property
    def weights(self) -> int:
        return self._states[0]

    @property
    def gradients(self) -> int:
        return self._states[1]

    @property
    def optimizer(self) -> int:
        return self._states[2]

    # -- the parts that do
    def activations_at(self, seq: int | None, batch: int) -> int:
        """Activation bytes per rank for ``batch`` sequences of ``seq`` tokens (0 serving, or without ``seq``)."""
        if not self.training or seq is None:
            return 0
        require(self.model, "activations", what="the activations are")
        per_layer = [runs * activation_bytes_per_layer(seq, batch, self._sizes.hidden, heads, self.tensor_parallel,
                                                        self.sequence_parallel, self.recompute)
                     for runs, heads in self._sizes.layers]
        return _ceil(sum(per_layer))

    def kv_cache_at(self, seq: int | None, batch: int) -> int:
        """KV cache bytes per rank after ``seq`` tokens of each of ``batch`` sequences, as transformers holds it
        (serving only: training keeps keys and values among its activations)."""
        return 0 if self.training or seq is None else self._cache.at(seq, batch)

    def total_at(self, seq: int | None, batch: int) -> int:
        """The total per rank for ``batch`` sequences of ``seq`` tokens, the other settings kept."""
        return sum(self._states) + self.activations_at(seq, batch) + self.kv_cache_at(seq, batch)

    @property
    def activations(self) -> int:
        return self.activations_at(self.seq, self.batch)

    @property
    def kv_cache(self) -> int:
        return self.kv_cache_at(self.seq, self.batch)

    @property
    def kv_cache_per_token(self) -> int:
        return self._cache.per_token

    @property
    def cross_kv_cache_per_token(self) -> int:
        return self._cache.cross_per_token

    @property
    def total(self) -> int:
        return self.total_at(self.seq, self.batch)

    @property
    def layers(self) -> int:
        """The transformer layers the activations count: the self-attention modules one pass runs."""
        return sum(runs for runs, _ in self._sizes.layers)

    def grows(self) -> bool:
        """Whether the total grows with ``s`` and with ``b`` (activations or a cache to keep); a cache whose
        every layer is windowed grows with ``s`` only up to :attr:`cache_stops_growing`."""
        if self.training:
            return self.layers > 0
        return self.kv_cache_per_token + self.cross_kv_cache_per_token > 0

    @property
    def cache_stops_growing(self) -> int | None:
        """Serving, the context length past which the total grows no more (every cached layer keeps only its
        window); None where it grows with every token, or while training."""
        return None if self.training else self._cache.stops_growing

    # -- symbolic
    @cached_property
    def formulas(self) -> dict[str, sp.Expr]:
        """Each part in the model's symbols, ``s`` and ``b`` (bytes per parameter as numbers); the exact
        part is its formula at the model's values, rounded up ("total" is the parts' formulas added: the
        exact total adds the rounded parts, so it may exceed that formula's value by up to 4 bytes)."""
        tree = self.model.tree
        n, trainable = closed_form(tree.total), closed_form(tree.trainable_total)
        weights = weight_bytes(n, self.dtype) if self._packed is None else weights_formula(self._packed)
        states = zero_per_rank(weights, self.gradient_bytes * trainable,
                               self.optimizer_bytes * trainable, self.zero, sp.Integer(self.ranks))
        parts = dict(zip(("weights", "gradients", "optimizer"), states))
        unknown = untraced(tree)
        if "activations" not in unknown and "costs" not in unknown:
            parts["activations"] = sp.Add(*(runs * activation_bytes_per_layer(
                SEQ, BATCH, H, heads, self.tensor_parallel, self.sequence_parallel, self.recompute)
                for runs, heads in self_attention_layers(tree))) if self.training else sp.Integer(0)
        if "cache" not in unknown and "costs" not in unknown:
            cache = self._cache.formulas
            parts["kv_cache"] = sp.Integer(0) if self.training else cache["total"]
        parts["total"] = sp.Add(*parts.values())  # without what is not known
        if "kv_cache" in parts:
            parts.update(kv_cache_per_token=cache["per_token"], cross_kv_cache_per_token=cache["cross_per_token"])
        # the held cache keeps its factored form: expanded, Min(s, window) would repeat in every term
        return {k: v if k == "kv_cache" else closed_form(sp.sympify(v)) for k, v in parts.items()}

    def _known(self, figure):
        """``figure()``, or None where the inferred data does not hold what it needs (the weights' bytes stand)."""
        if untraced(self.model.tree).keys() & {"costs", "cache", "activations"}:
            try:
                return figure()
            except SymparamsError:
                return None
        return figure()

    @property
    def bytes_per_parameter(self) -> dict[str, Fraction]:
        """Bytes per parameter of the weights (int4: 18/32; a quantized checkpoint: its bytes over the count) and
        per trainable parameter of the rest, before ZeRO."""
        weights = DTYPE_BYTES[self.dtype] if self._packed is None else Fraction(self._weight_bytes, self.model.count)
        return {"weights": weights, "gradients": Fraction(self.gradient_bytes),
                "optimizer": Fraction(self.optimizer_bytes)}

    @property
    def conventions(self) -> list[str]:
        """The conventions these numbers follow, one short sentence each."""
        unknown = untraced(self.model.tree)
        missing = [f"{reason} (so {what} not known)" for cost, what in (("costs", "the KV cache and activations are"),
                                                                      ("cache", "the KV cache is"),
                                                                      ("activations", "the activations are"))
                   for reason in [unknown.get(cost)] if reason]
        activation = [] if {"costs", "activations"} & set(unknown) else [_activation_convention(self)]
        cache = [] if {"costs", "cache"} & set(unknown) else self._cache.conventions
        return [*_state_conventions(self), _zero_convention(self), *activation, *cache, *missing,
                "each part is rounded up to a whole byte, per rank"]

    @cached_property
    def _laws(self) -> tuple:
        from .memory_laws import memory_laws  # Megatron-LM's theoretical memory, Korthikanti et al.'s forms

        return memory_laws(self, activation_bytes_per_layer)

    @cached_property
    def laws(self) -> list[dict[str, Any]]:
        """Each published memory law in bytes per rank beside the exact figure (see :mod:`.memory_laws`)."""
        from .memory_laws import SourcedLaw, evaluated

        return [evaluated(law, self) for law in self._laws if isinstance(law, SourcedLaw)]

    @property
    def laws_refused(self) -> list[dict[str, str]]:
        """The published memory laws not set beside this setting, each with the reason."""
        return [{"name": law.name, "reason": law.reason} for law in self._laws if not hasattr(law, "parts")]

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.name, "head": self.model.head, "dtype": self.dtype,
                "optimizer_name": self.optimizer_name, "training": self.training, "zero": self.zero,
                "ranks": self.ranks, "seq": self.seq, "batch": self.batch, "tensor_parallel": self.tensor_parallel,
                "sequence_parallel": self.sequence_parallel, "recompute": self.recompute,
                "parameters": self.model.count, "trainable": self.model.trainable,
                "layers": self._known(lambda: self.layers),
                "bytes_per_parameter": {k: _json(v) for k, v in self.bytes_per_parameter.items()},
                "weights": self.weights, "gradients": self.gradients, "optimizer": self.optimizer,
                "activations": self.activations, "kv_cache_per_token": self._known(lambda: self.kv_cache_per_token),
                "cross_kv_cache_per_token": self._known(lambda: self.cross_kv_cache_per_token),
                "kv_cache_state": self._known(lambda: self._cache.state),
                "kv_cache_windows": self._known(lambda: [{"tokens": kept, "per_token": size}
                                                         for kept, size in self._cache.windows]),
                "kv_cache": self.kv_cache, "kv_dtype": self._cache.storage.kind,
                "kv_block_size": self._cache.storage.block_size,
                "kv_cache_scales": self._known(lambda: self._cache.scales),
                "total": self.total, "formulas": {k: str(v) for k, v in self.formulas.items()},
                "conventions": self.conventions,
                **({} if self._packed is None else {"quantization": {**self.quantization.to_dict(),
                                                                    "by_storage": self._by_storage()}}),
                "laws": [{**law, "formula": str(law["formula"]), "difference": str(law["difference"]),
                          "terms": [{**t, "difference": str(t["difference"])} for t in law["terms"]]}
                         for law in self._known(lambda: self.laws) or ()],
                "laws_refused": self._known(lambda: self.laws_refused) or []}

    def _by_storage(self) -> dict[str, int]:
        """A quantized checkpoint's bytes by the type they are stored in (q4_k, f32...), before ZeRO."""
        out: dict[str, int] = {}
        for packed in self._packed:
            out[packed.storage] = out.get(packed.storage, 0) + int(self.model.evaluate(packed.bytes))
        return out


def _json(value: Fraction):
    return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _state_conventions(mem: Memory) -> list[str]:
    if mem._packed is not None:
        out = quantized_conventions(mem.quantization, mem._packed)
    else:
        out = [f"weights: every parameter once (a tied tensor once, as PyTorch lists it), "
               f"{_json(DTYPE_BYTES[mem.dtype])} bytes each in {mem.dtype}"]
    if mem.dtype == "int4":
        out.append("int4: 4 bits a weight and one fp16 scale per block of 32 weights (18 bytes per block), "
                   "the model's weights taken as whole blocks, rounded up")
    if not mem.training:
        out.append("serving (no optimizer): no gradients, no optimizer state, no activations kept")
    elif mem.dtype == "fp32":
        out.append(f"fp32 training: fp32 gradients (4 bytes) and {mem.optimizer_name} state "
                   f"({mem.optimizer_bytes} bytes) per trainable parameter")
    else:
        out.append(f"{mem.dtype} mixed precision: {mem.dtype} gradients (2 bytes), and an fp32 master copy with "
                   f"the {mem.optimizer_name} moments ({mem.optimizer_bytes} bytes) per trainable parameter")
    return out


def _zero_convention(mem: Memory) -> str:
    parts = ("nothing", "the optimizer state", "the optimizer state and gradients",
             "the optimizer state, gradients and weights")[mem.zero]
    return (f"ZeRO stage {mem.zero} over {mem.ranks} data-parallel rank(s): {parts} divided among them, "
            f"per rank")


def _activation_convention(mem: Memory) -> str:
    if not mem.training:
        return "activations: not kept when serving"
    if mem.seq is None:
        return "activations: not counted without a sequence length"
    return (f"activations: Korthikanti et al. 2022's GPT-layer formula (16-bit activations, a 4H MLP, multi-head "
            f"attention) with h = H and a = each layer's query heads, for each of the {mem.layers} self-attention "
            f"layers, tensor parallel {mem.tensor_parallel}, sequence parallel "
            f"{'on' if mem.sequence_parallel else 'off'}, recomputation {mem.recompute}; embedding, output layer "
            f"and cross-attention terms left out; per rank; tensor parallelism divides the activations only (the "
            f"per-rank figures of a layout split the weights too)")
