"""A quantized checkpoint's bytes as symparams gives them, tensor by tensor, for the tests to compare with files
and libraries."""

from __future__ import annotations

from symparams.analysis.quantized import packed_tensors, quantization

from .hf import normalize


def by_tensor(m, dtype: str, **options) -> dict[str, tuple[int, set]]:
    """Reference path (a layer's index as ``*``) → (bytes over every copy, the types it is stored in)."""
    out: dict[str, tuple[int, set]] = {}
    for packed in packed_tensors(m.tree, quantization(dtype, **options), m.values):
        path = normalize(packed.tensor.path)  # one layer's module (T5's block.0 bias) folded as the reference is
        n, kinds = out.get(path, (0, set()))
        out[path] = (n + int(m.evaluate(packed.bytes)), kinds | {packed.storage})
    return out
