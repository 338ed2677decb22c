"""Bytes per element of each dtype, and the weights' bytes in one (int4 in whole blocks).

>>> parse_dtype("BF16"), weight_bytes(100, "int4"), cache_dtype("int8")
('bf16', 72, 'fp16')
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.errors import SymparamsError

#: bytes per element of each dtype (int4: per weight, its block scale included)
DTYPE_BYTES = {"fp32": Fraction(4), "bf16": Fraction(2), "fp16": Fraction(2), "int8": Fraction(1),
               "int4": Fraction(18, 32)}
#: other names people give the same dtypes (PyTorch's)
DTYPE_ALIASES = {"float32": "fp32", "float": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16"}
#: int4: weights per block, and the block's bytes (32 half-bytes and one fp16 scale)
INT4_BLOCK, INT4_BLOCK_BYTES = 32, 18
#: the GGUF block types ``--dtype`` takes (their layouts: :mod:`.quantized`)
GGUF_TYPES = ("q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k")
#: every quantized checkpoint's format ``--dtype`` takes (nf4, fp4: bitsandbytes' 4-bit base, :mod:`.fourbit`)
FORMATS = GGUF_TYPES + ("gptq", "awq", "fp8", "fp8-block", "mxfp4", "nf4", "fp4")


def _shown(raw) -> str:
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."



def parse_dtype(dtype) -> str:
    """``dtype`` as one of fp32, bf16, fp16, int8, int4 (PyTorch's names ``bfloat16`` etc. accepted), or a
    quantized checkpoint's format (:mod:`.quantized`: ``q4_k``, ``gptq``, ``fp8``...).

    >>> parse_dtype("BF16"), parse_dtype("float16"), parse_dtype("Q4_K")
    ('bf16', 'fp16', 'q4_k')
    """
    name = dtype.strip().lower() if isinstance(dtype, str) else None
    name = DTYPE_ALIASES.get(name, name)
    if name not in DTYPE_BYTES and name not in FORMATS:
        raise SymparamsError(f"unknown dtype {_shown(dtype)}: use one of {', '.join((*DTYPE_BYTES, *FORMATS))}")
    return name



def weight_bytes(params, dtype: str):
    """Bytes of ``params`` weights in ``dtype``: int4 rounds the weights up to whole blocks of 32.

    >>> weight_bytes(100, "int4"), weight_bytes(100, "bf16")
    (72, 200)
    """
    if dtype == "int4":
        blocks = -(-params // INT4_BLOCK) if isinstance(params, int) else sp.ceiling(params / INT4_BLOCK)
        return INT4_BLOCK_BYTES * blocks
    return int(DTYPE_BYTES[dtype]) * params



def cache_dtype(dtype: str) -> str:
    """The dtype the KV cache is kept in: the weights' one, fp16 for int8/int4 and quantized checkpoints (they
    quantize weights only)."""
    return dtype if dtype in ("fp32", "bf16", "fp16") else "fp16"

