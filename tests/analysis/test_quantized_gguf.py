"""GGUF sizes against files the ``gguf`` package writes: every tensor's bytes, its type, and the total.

Each tiny model is built by transformers on the meta device for its tensors' names and shapes; random
arrays of those shapes go into a file as llama.cpp writes one type, the policy read from its sources:
``convert_hf_to_gguf.py`` (``prepare_tensors``: 1-D tensors, norms, the MoE router ``ffn_gate_inp`` and the
position table ``POS_EMBD`` in F32; a block type the row does not fit falls back to F16 on ``QuantError``;
GPT-2's ``Conv1D`` weights transposed to ``[out, in]``) and ``src/llama-quant.cpp``
(``llama_tensor_get_type``: a row that is not a whole number of 256-weight blocks takes q4_k → q5_0,
q5_k → q5_1, q6_k → q8_0, then F16 where 32 does not divide it).  The types ``gguf.quants`` quantizes
(q8_0, q4_0, q5_0, ...) are quantized by it; the k-quants, which it only reads, are written as raw blocks of
the size ``gguf.quants.quant_shape_to_byte_shape`` gives.  ``GGUFReader`` then reads every tensor's
``n_bytes`` and type back, to compare with :func:`~symparams.analysis.quantized.packed_tensors`.
"""

import re

import gguf
import numpy as np
import pytest

from symparams import model
from symparams.analysis.quantized import GGUF_BLOCKS
from tests.reference import decoders, moe
from tests.reference.hf import normalize
from tests.reference.packed import by_tensor

pytestmark = pytest.mark.crosscheck

Q = gguf.GGMLQuantizationType
FALLBACK = {Q.Q4_K: Q.Q5_0, Q.Q5_K: Q.Q5_1, Q.Q6_K: Q.Q8_0}
ALWAYS_F32 = re.compile(r"(norm|ln_\d|ln_f)\.weight$|\.bias$|mlp\.gate\.weight$|wpe\.weight$")

#: tiny models: rows that fit every block (H = 256), rows of 320 (q4_k falls back to q5_0), rows of 328 (F16),
#: GPT-2 (fused c_attn, biases, a position table, a tied output), Mixtral (a router, experts), T5 (relative
#: position buckets, which llama.cpp quantizes as any weight: rows of 4 heads, F16)
CASES = {
    "llama-256": model("llama", head="causal-lm", V=100, H=256, L=2, A=4, G=2, F=512, gqa=True),
    "llama-320": model("llama", head="causal-lm", V=100, H=256, L=2, A=4, G=2, F=320, gqa=True),
    "llama-328": model("llama", head="causal-lm", V=100, H=256, L=2, A=4, G=2, F=328, gqa=True),
    "gpt2": model("gpt2", head="causal-lm", V=100, P=16, H=64, L=2, A=4, r=4),
    "mixtral": model("mixtral", head="causal-lm", V=100, H=256, L=2, A=4, G=2, F_e=320, N_e=4, k_e=2, gqa=True),
    "t5": model("t5", head="seq2seq-lm", V=100, H=64, D=8, A=4, F=96, L=2, B=32),
}


def reference(m):
    """(module, the prefix its base model's names carry) as transformers builds ``m`` on the meta device."""
    if m.family.name == "mixtral":
        module, strip, _ = moe.reference(m)
        return module, strip
    module, strip = decoders.reference(m)
    return (decoders.untie(module) if not m.switches.get("tie", True) else module), strip


def gguf_type(name: str, shape: tuple, qtype):
    """The type llama.cpp stores a tensor in, for a file of ``qtype``."""
    if len(shape) == 1 or ALWAYS_F32.search(name):
        return Q.F32
    block = gguf.GGML_QUANT_SIZES[qtype][0]
    if shape[-1] % block and qtype in FALLBACK:
        qtype = FALLBACK[qtype]
        block = gguf.GGML_QUANT_SIZES[qtype][0]
    return Q.F16 if shape[-1] % block else qtype


def stored_shapes(module, strip):
    """Each parameter's name (``strip`` removed) and shape as the converter writes it (Conv1D turned round)."""
    conv1d = {name for name, sub in module.named_modules() if type(sub).__name__ == "Conv1D"}
    for name, p in module.named_parameters():
        shape = tuple(p.shape)
        if name.rsplit(".", 1)[0] in conv1d and name.endswith(".weight"):
            shape = shape[::-1]
        yield (name[len(strip):] if strip and name.startswith(strip) else name), shape


def write_file(path, module, strip, qtype) -> None:
    writer = gguf.GGUFWriter(path, "llama")
    rng = np.random.default_rng(0)
    for name, shape in stored_shapes(module, strip):
        data = rng.standard_normal(shape, dtype=np.float32)
        kind = gguf_type(name, shape, qtype)
        if kind == Q.F32:
            writer.add_tensor(name, data)
        elif kind == Q.F16:
            writer.add_tensor(name, data.astype(np.float16))
        elif kind in (Q.Q8_0, Q.Q4_0, Q.Q5_0, Q.Q5_1):
            writer.add_tensor(name, gguf.quants.quantize(data, kind), raw_dtype=kind)
        else:  # gguf.quants reads the k-quants but does not write them: their blocks, as raw bytes
            raw = np.zeros(gguf.quants.quant_shape_to_byte_shape(shape, kind), dtype=np.uint8)
            writer.add_tensor(name, raw, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def read_file(path) -> dict[str, tuple[int, set]]:
    """Normalized name → (bytes over its layers, the types it is stored in)."""
    out: dict[str, tuple[int, set]] = {}
    for t in gguf.GGUFReader(path).tensors:
        key = normalize(t.name)
        n, kinds = out.get(key, (0, set()))
        out[key] = (n + int(t.n_bytes), kinds | {t.tensor_type.name.lower()})
    return out


#: each case in the types that show what it tests: whole blocks, each k-quant's fallback, F16, F32 tables
PAIRS = [("llama-256", "q8_0"), ("llama-256", "q4_k"), ("llama-256", "q5_k"), ("llama-320", "q4_k"),
         ("llama-320", "q5_k"), ("llama-320", "q6_k"), ("llama-328", "q8_0"), ("llama-328", "q4_k"),
         ("gpt2", "q8_0"), ("gpt2", "q4_0"), ("gpt2", "q6_k"), ("mixtral", "q4_k"), ("mixtral", "q8_0"),
         ("t5", "q8_0"), ("t5", "q4_k")]


@pytest.mark.parametrize("case, qtype", PAIRS)
def test_gguf_bytes_match_a_file_the_gguf_package_writes(case, qtype, tmp_path):
    m = CASES[case]
    module, strip = reference(m)
    path = tmp_path / f"{case}.gguf"
    write_file(path, module, strip, getattr(Q, qtype.upper()))
    in_file = read_file(path)
    assert by_tensor(m, qtype) == in_file
    assert m.memory(qtype, optimizer="none").weights == sum(n for n, _ in in_file.values())


def test_block_table_is_the_gguf_packages():
    for name, (block, size) in GGUF_BLOCKS.items():
        assert gguf.GGML_QUANT_SIZES[getattr(Q, name.upper())] == (block, size), name
