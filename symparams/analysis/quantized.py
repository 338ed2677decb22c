"""The bytes of a quantized checkpoint, tensor by tensor: GGUF block types, GPTQ and AWQ, FP8, MXFP4.

Each format stores a tensor it quantizes in its own layout, scales and zero
points included, and keeps the others (:mod:`.stored` says which part of the
model each tensor is) in a plain type.  The bytes are a SymPy formula over the
stored tensors' shapes, evaluated exactly; where a row does not fit the
format's blocks, the choice is made at the model's values (the formula holds
wherever the same rows fit).

GGUF (the ``gguf`` package's ``GGML_QUANT_SIZES``: weights per block, bytes per
block), as llama.cpp writes a file of one type (``convert_hf_to_gguf.py
--outtype q8_0``, or ``llama-quantize --pure``): every 2-D weight in the type,
row by row; 1-D tensors, the routers and the position and token-type tables in
F32 (``convert_hf_to_gguf.py``, ``prepare_tensors``); a row that is not a whole
number of blocks falls back as ``llama-quantize`` does (``src/llama-quant.cpp``,
``llama_tensor_get_type``: q4_k to q5_0, q5_k to q5_1, q6_k to q8_0, q2_k and
q3_k to iq4_nl), and to F16 where not even 32 divides it (the converter's
``QuantError`` fallback); a kept tensor is F16.

GPTQ and AWQ, 4 bits, groups of ``group_size`` inputs (AutoGPTQ's
``QuantLinear``, AutoAWQ's ``WQLinear_GEMM``): of a linear weight ``[out, in]``,
``qweight`` packs 8 weights in an int32 (in·out/2 bytes), ``qzeros`` 8 zero points
in an int32 per group (in/g · out/8 · 4), ``scales`` one fp16 per output per group
(in/g · out · 2), and GPTQ's ``g_idx`` one int32 per input (in · 4); every other
tensor fp16.  The group size must divide each row, and 8 the rows and outputs.

FP8 e4m3 (transformers' ``FP8Linear``, ``integrations/finegrained_fp8.py``): a
byte a weight and an fp32 scale per tensor (``fp8``) or per block of 128×128
(``fp8-block``, as DeepSeek-V3's ``weight_scale_inv``:
⌈out/128⌉·⌈in/128⌉ scales); every other tensor bf16.

MXFP4 (gpt-oss's experts, ``integrations/mxfp4.py``): 4 bits a weight,
``_blocks`` of 16 bytes per 32 inputs and an E8M0 ``_scales`` byte per 32
inputs; every other tensor bf16.

>>> from symparams import model
>>> q = quantization("q4_k")
>>> q.keep, q.kept_as
(frozenset(), 'f16')
>>> m = model("llama-3-8b", head="causal-lm")
>>> norms = 32 * 2 * 4096 + 4096  # two per layer and the final one, in F32; the rest in 144 bytes per 256
>>> m.evaluate(weights_formula(packed_tensors(m.tree, q, m.values))) == (m.count - norms) * 144 // 256 + 4 * norms
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, NamedTuple

import sympy as sp

from ..core.errors import SymparamsError
from ..core.symbols import P, S
from ..core.values import parse_whole
from .dtypes import FORMATS, GGUF_TYPES, _shown
from .fourbit import FOURBIT, fourbit_bytes, fourbit_conventions, fourbit_quantized
from .stored import PARTS, Stored, stored_tensors

#: GGUF types: (weights per block, bytes per block), as ``gguf.constants.GGML_QUANT_SIZES`` defines them
GGUF_BLOCKS = {"f32": (1, 4), "f16": (1, 2), "q4_0": (32, 18), "q4_1": (32, 20), "q5_0": (32, 22),
               "q5_1": (32, 24), "q8_0": (32, 34), "iq4_nl": (32, 18), "q2_k": (256, 84), "q3_k": (256, 110),
               "q4_k": (256, 144), "q5_k": (256, 176), "q6_k": (256, 210)}
#: llama-quantize's type for a row that is not a whole number of 256-weight blocks
GGUF_FALLBACK = {"q2_k": "iq4_nl", "q3_k": "iq4_nl", "q4_k": "q5_0", "q5_k": "q5_1", "q6_k": "q8_0"}
#: the formats that take a group size, and its default
GROUPED, DEFAULT_GROUP = ("gptq", "awq"), 128
#: FP8's scale blocks (DeepSeek-V3's ``weight_block_size``) and MXFP4's
FP8_BLOCK, MX_BLOCK = 128, 32
#: bytes of an fp32 scale
SCALE_BYTES = 4

_TABLES = frozenset({"embeddings", "tables", "output", "routers"})
#: the parts each format keeps unquantized unless told otherwise
DEFAULT_KEEP = {**{name: frozenset() for name in GGUF_TYPES}, "gptq": _TABLES, "awq": _TABLES, "fp8": _TABLES,
                "fp8-block": _TABLES, "mxfp4": _TABLES | {"layers"},
                **{name: frozenset({"output"}) for name in FOURBIT}}
#: the keyword options of a quantized format
OPTIONS = ("group_size", "keep", "double_quant", "prepare_kbit")


@dataclass(frozen=True)
class Quantization:
    """A quantized format (one of :data:`FORMATS`), the parts it keeps unquantized, and its group size."""

    format: str
    keep: frozenset
    group_size: int | None = None
    double_quant: bool | None = None  # nf4, fp4: the absmax quantized again (QLoRA's recipe)
    prepare_kbit: bool | None = None  # nf4, fp4: peft's prepare_model_for_kbit_training casts the rest to fp32

    @property
    def gguf(self) -> bool:
        return self.format in GGUF_TYPES

    @property
    def kept_as(self) -> str:
        """The type of a tensor left unquantized (GGUF: F16, F32 for a 1-D one)."""
        if self.prepare_kbit:
            return "fp32"
        return "f16" if self.gguf else "fp16" if self.format in GROUPED else "bf16"

    def to_dict(self) -> dict:
        return {"format": self.format, "keep": [p for p in PARTS if p in self.keep], "group_size": self.group_size,
                **({"double_quant": self.double_quant, "prepare_kbit": self.prepare_kbit}
                   if self.format in FOURBIT else {})}


def quantization(dtype: str, group_size=None, keep=None, double_quant=None, prepare_kbit=None) -> Quantization | None:
    """The quantized format ``dtype`` names (None for fp32, bf16, fp16, int8, int4), with its options checked.

    >>> q = quantization("gptq", group_size="64", keep="output")
    >>> q.group_size, sorted(q.keep)  # GPTQ packs linear layers only: the tables stay
    (64, ['embeddings', 'output', 'tables'])
    >>> quantization("gptq", group_size=0)
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: the group size must be a positive whole number, not '0'
    """
    if dtype not in FORMATS:
        for name, given in (("group_size", group_size), ("keep", keep), ("double_quant", double_quant),
                            ("prepare_kbit", prepare_kbit)):
            if given is not None:
                raise SymparamsError(f"{name} applies to a quantized --dtype ({', '.join(FORMATS)}), not {dtype}")
        return None
    if group_size is not None and dtype not in GROUPED:
        raise SymparamsError(f"group_size applies to gptq and awq, not {dtype}")
    for name, given in (("double_quant", double_quant), ("prepare_kbit", prepare_kbit)):
        if given is not None and dtype not in FOURBIT:
            raise SymparamsError(f"{name} applies to {' and '.join(FOURBIT)}, not {dtype}")
        if given not in (None, True, False):
            raise SymparamsError(f"{name} is True or False, not {_shown(given)}")
    size = parse_whole("the group size", group_size) if dtype in GROUPED and group_size is not None else None
    kept = DEFAULT_KEEP[dtype] if keep is None else _parts(keep)
    if dtype in GROUPED:  # they pack linear layers, never an embedding table
        kept |= {"embeddings", "tables"}
    fourbit = dtype in FOURBIT  # double quantization by default, peft's cast to fp32 when asked
    return Quantization(dtype, kept, size or (DEFAULT_GROUP if dtype in GROUPED else None),
                        (double_quant is not False) if fourbit else None, bool(prepare_kbit) if fourbit else None)


def _parts(keep) -> frozenset:
    """The parts named by ``keep``: text (``"embeddings,output"``, ``"none"``) or names."""
    names = keep.split(",") if isinstance(keep, str) else list(keep) if isinstance(keep, (list, tuple, set,
                                                                                           frozenset)) else None
    if names is None or not all(isinstance(n, str) for n in names):
        raise SymparamsError(f"keep takes part names separated by commas, not {_shown(keep)}")
    names = [n.strip().lower() for n in names]
    if names == ["none"]:
        return frozenset()
    for name in names:
        if name not in PARTS:
            raise SymparamsError(f"unknown part {_shown(name)} to keep: use none or some of {', '.join(PARTS)}")
    return frozenset(names)


# -- the bytes, tensor by tensor -----------------------------------------------------------------------------

class Packed(NamedTuple):
    """A stored tensor, the type it is kept in (``q4_k``, ``q5_0``, ``f32``, ``gptq``, ``bf16``...) and its bytes
    (all copies) as a formula."""

    tensor: Stored
    storage: str
    bytes: sp.Expr


def packed_tensors(tree, q: Quantization, values) -> tuple[Packed, ...]:
    """Every stored tensor of ``tree`` in format ``q``, the fallbacks chosen at ``values``; refused where no tensor
    would be quantized (the policy keeps every part the model has)."""
    tensors = stored_tensors(tree)
    fourbit = q.format in FOURBIT
    quantized = fourbit_quantized(tensors, q.keep, values) if fourbit else [not _kept(t, q) for t in tensors]
    if not any(quantized):
        kept = ", ".join(p for p in PARTS if p in q.keep) or "none"
        raise SymparamsError(f"no tensor of this model is stored in {q.format} when keeping {kept}: "
                             f"change what --keep names")
    if fourbit:
        return tuple(_fourbit(t, q) if packed else Packed(t, q.kept_as, _plain(t, 4 if q.prepare_kbit else 2))
                     for t, packed in zip(tensors, quantized))
    return tuple(_packed(t, q, values) for t in tensors)


def _fourbit(t: Stored, q: Quantization) -> Packed:
    """bitsandbytes' 4-bit storage of each copy of ``t`` (:mod:`.fourbit`)."""
    return Packed(t, q.format, t.copies * fourbit_bytes(sp.Mul(*t.shape), q.double_quant))


def weights_formula(packed: Iterable[Packed]) -> sp.Expr:
    return sp.Add(*(p.bytes for p in packed))


def _kept(t: Stored, q: Quantization) -> str | None:
    """The plain type ``q`` keeps ``t`` in, or None where it quantizes it."""
    if q.gguf and (t.part in ("vectors", "routers") or _positions(t)):
        return "f32"
    return q.kept_as if t.part == "vectors" or t.part in q.keep else None


def _packed(t: Stored, q: Quantization, values) -> Packed:
    kept = _kept(t, q)
    if kept:
        return Packed(t, kept, _plain(t, 4 if kept == "f32" else 2))
    if q.gguf:
        return _gguf(t, q.format, values)
    return {"gptq": _grouped, "awq": _grouped, "fp8": _fp8, "fp8-block": _fp8, "mxfp4": _mxfp4}[q.format](t, q, values)


def _positions(t: Stored) -> bool:
    """A table of positions or token types (llama.cpp's POS_EMBD, TOKEN_TYPES), not of relative buckets."""
    return t.part == "tables" and bool(sp.sympify(t.shape[0]).free_symbols & {P, S})


def _plain(t: Stored, element: int) -> sp.Expr:
    return element * t.size


def _number(expr, values, t: Stored) -> int:
    value = sp.expand(sp.sympify(expr).xreplace(values))
    if not value.is_Integer:
        raise SymparamsError(f"the shape of {t.path} is not known at these values ({expr} = {value})")
    return int(value)


def _gguf(t: Stored, name: str, values) -> Packed:
    row = _number(t.shape[-1], values, t)
    if row % GGUF_BLOCKS[name][0]:
        name = GGUF_FALLBACK.get(name, "f16")
        if row % GGUF_BLOCKS[name][0]:
            name = "f16"
    block, size = GGUF_BLOCKS[name]
    return Packed(t, name, sp.Rational(size, block) * t.size)


def _rows(t: Stored, values) -> tuple[sp.Expr, sp.Expr, int, int]:
    """(outputs of one piece, inputs) as formulas and numbers."""
    outputs, inputs = sp.expand(sp.Mul(*t.shape[:-1]) / t.pieces), t.shape[-1]
    return outputs, inputs, _number(outputs, values, t), _number(inputs, values, t)


def _grouped(t: Stored, q: Quantization, values) -> Packed:
    outputs, inputs, n_out, n_in = _rows(t, values)
    g = q.group_size
    if n_in % g:
        raise SymparamsError(f"the group size {_shown(g)} does not divide the row length {n_in} of {t.path}")
    for what, n in (("rows", n_in), ("outputs", n_out)):
        if n % 8:
            raise SymparamsError(f"{q.format} packs 8 weights an int32: the {what} of {t.path} ({n}) are not a "
                                 f"multiple of 8")
    groups = inputs / g
    per_piece = inputs * outputs / 2 + groups * outputs / 2 + 2 * groups * outputs  # qweight, qzeros, fp16 scales
    if q.format == "gptq":
        per_piece += 4 * inputs  # g_idx: each input's group
    return Packed(t, q.format, sp.expand(t.copies * t.pieces * per_piece))


def _fp8(t: Stored, q: Quantization, values) -> Packed:
    outputs, inputs, _, _ = _rows(t, values)
    if q.format == "fp8":
        scales = sp.Integer(1)
    else:
        scales = sp.ceiling(outputs / FP8_BLOCK) * sp.ceiling(inputs / FP8_BLOCK)
    return Packed(t, q.format, t.size + t.copies * t.pieces * SCALE_BYTES * scales)


def _mxfp4(t: Stored, q: Quantization, values) -> Packed:
    row = _number(t.shape[-1], values, t)
    if row % MX_BLOCK:
        raise SymparamsError(f"mxfp4 stores blocks of {MX_BLOCK} inputs: the rows of {t.path} ({row}) are not a "
                             f"multiple of {MX_BLOCK}")
    return Packed(t, q.format, sp.Rational(17, 32) * t.size)  # 16 bytes of values and a scale byte per 32


# -- what the numbers follow ----------------------------------------------------------------------------------

_LAYOUTS = {
    "gptq": "4 bits a weight packed in int32 qweight, an int32 of 8 zero points (qzeros) and an fp16 scale per output "
            "per group of {g} inputs, an int32 g_idx per input (AutoGPTQ's QuantLinear)",
    "awq": "4 bits a weight packed in int32 qweight, an int32 of 8 zero points (qzeros) and an fp16 scale per output "
           "per group of {g} inputs (AutoAWQ's WQLinear_GEMM)",
    "fp8": "fp8 e4m3, a byte a weight, and one fp32 scale per tensor (transformers' FP8Linear)",
    "fp8-block": "fp8 e4m3, a byte a weight, and one fp32 scale per block of 128x128 weights, partial blocks at the "
                 "edges (DeepSeek-V3's weight_scale_inv, transformers' FP8Linear)",
    "mxfp4": "mxfp4, 4 bits a weight and one E8M0 scale byte per 32 inputs, 17 bytes per 32 weights (gpt-oss)",
}


def quantized_conventions(q: Quantization, packed: tuple[Packed, ...]) -> list[str]:
    """The conventions a quantized checkpoint's weights follow, one short sentence each."""
    kept = ", ".join(p for p in PARTS if p in q.keep)
    if q.format in FOURBIT:
        return fourbit_conventions(q.format, q.double_quant, q.keep, PARTS, q.kept_as)
    if q.gguf:
        block, size = GGUF_BLOCKS[q.format]
        out = [f"weights: a GGUF file of {q.format} as llama.cpp writes one type (llama-quantize --pure): every 2-D "
               f"weight in {q.format}, {size} bytes per block of {block} weights of a row, scales included; 1-D "
               f"tensors, routers, position and token-type tables in F32 (convert_hf_to_gguf.py)"
               + (f"; kept in F16: {kept}" if kept else "")]
        out += _fallbacks(q, packed)
    else:
        out = [f"weights: {_LAYOUTS[q.format].format(g=q.group_size)}; every other tensor in {q.kept_as}"
               + (f", the parts kept unquantized: {kept}" if kept else "")]
    if any(p.tensor.pieces > 1 and p.storage == q.format for p in packed) and not q.gguf:
        out.append("a routed expert's fused gate_up tensor is stored as its two halves, gate and up, as the "
                   "checkpoints hold them")
    return out


def _fallbacks(q: Quantization, packed: tuple[Packed, ...]) -> list[str]:
    """Which tensors a GGUF file keeps in another type, their rows not being whole blocks."""
    by_type: dict[str, list[str]] = {}
    for p in packed:
        if p.storage != q.format and not _kept(p.tensor, q):
            by_type.setdefault(p.storage, []).append(p.tensor.path)
    return [f"rows not a whole number of {q.format} blocks fall back (llama-quantize) to {name}: "
            f"{', '.join(paths[:3])}{f' and {len(paths) - 3} more' if len(paths) > 3 else ''}"
            for name, paths in by_type.items()]
