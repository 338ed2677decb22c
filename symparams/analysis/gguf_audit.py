"""What a GGUF file of a model holds, for the audit: llama.cpp's tensor names, and each tensor's type and bytes
in a file of one type (:mod:`.quantized`'s policy, as ``convert_hf_to_gguf.py --outtype`` or
``llama-quantize --pure`` write it).

llama.cpp names a tensor for its architecture (``blk.0.attn_q.weight`` for ``layers.0.self_attn.q_proj.weight``):
the ``gguf`` package's ``TensorNameMap``, which its converter uses, translates each of the model's names.  A
name it does not translate (an architecture it does not know, a pattern of two repeated indices such as T5's
``block.*.layer.*``) is compared as transformers writes it.  Without a type (``--dtype``), the names and shapes
are checked and the types only listed: a file of mixed types (``Q4_K_M``) follows no one policy.
"""

from __future__ import annotations

import sympy as sp

from ..core.errors import SymparamsError
from .checkpoint import Checkpoint
from .dtypes import GGUF_TYPES
from .quantized import packed_tensors, quantization, weights_formula
from .expected_tensors import Expected, evaluated_shape, model_tensors, tied_names


def gguf_expected(m, checkpoint: Checkpoint, dtype: str | None) -> tuple[list, sp.Expr | None, dict]:
    """The model's tensors as a GGUF file of type ``dtype`` (None: types not checked) holds them, the file's bytes
    as a formula (None without a type), and each llama.cpp name of the file → the model's name."""
    if dtype is not None and dtype not in GGUF_TYPES:
        raise SymparamsError(f"a GGUF file's type is one of {', '.join(GGUF_TYPES)}, not {dtype}")
    tensors = model_tensors(m)
    packed = packed_tensors(m.tree, quantization(dtype), m.values) if dtype else None
    groups: dict[str, Expected] = {}
    for i, t in enumerate(tensors):
        shape = evaluated_shape(m, t)  # [out, in]: llama.cpp's converter turns GPT-2's Conv1D weights round
        copies = int(m.evaluate(t.copies))
        group = groups.setdefault(t.path, Expected(t.path))
        group.shapes[shape] += copies
        group.kinds[shape] = (None, None) if packed is None else \
            (packed[i].storage.upper(), int(m.evaluate(packed[i].bytes)) // copies)
    expected = list(groups.values())
    formula = None if packed is None else m.evaluate(weights_formula(packed))
    return expected, formula, _llama_cpp_names(checkpoint, expected, tied_names(m.tree))


def _llama_cpp_names(checkpoint: Checkpoint, expected: list, aliases: dict) -> dict:
    """Each llama.cpp name the file's architecture gives one of the model's names → that name."""
    import gguf

    arch = {name: key for key, name in gguf.MODEL_ARCH_NAMES.items()}.get(checkpoint.architecture)
    if arch is None:
        return {}
    layers = max([e.copies for e in expected if e.pattern.count("*") == 1] + [1])
    names = gguf.get_tensor_name_map(arch, layers)
    out = {}
    for pattern, copies in [(e.pattern, e.copies) for e in expected] + [(a, 1) for a in aliases]:
        if pattern.count("*") > 1:
            continue
        for name in [pattern.replace("*", str(i)) for i in range(copies)] if "*" in pattern else [pattern]:
            translated = names.get_name(name, try_suffixes=(".weight", ".bias"))
            if translated and translated != name:
                out[translated] = name
    return out
