"""A quantized checkpoint's bytes as symparams gives them, tensor by tensor, for the tests to compare with files
and libraries."""

from __future__ import annotations

from symparams.analysis.quantized import packed_tensors, quantization


def by_tensor(m, dtype: str, **options) -> dict[str, tuple[int, set]]:
    """Reference path (a layer's index as ``*``) → (bytes over every copy, the types it is stored in)."""
    out: dict[str, tuple[int, set]] = {}
    for packed in packed_tensors(m.tree, quantization(dtype, **options), m.values):
        n, kinds = out.get(packed.tensor.path, (0, set()))
        out[packed.tensor.path] = (n + int(m.evaluate(packed.bytes)), kinds | {packed.storage})
    return out
