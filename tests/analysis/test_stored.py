"""The tensors a checkpoint stores, as the tree gives them, against transformers' ``named_parameters()``.

Each stored tensor's shape (a linear weight ``[out, in]``, a fused expert tensor one expert's slice) and its
copies must be the module's: the row a quantized format packs is its last dimension.  GPT-2's ``Conv1D`` holds
its weights ``[in, out]``; a checkpoint converter turns them round (llama.cpp's ``convert_hf_to_gguf.py``), and
the tree's tensor is the turned one.
"""

import pytest

from symparams import model
from symparams.analysis.stored import stored_tensors
from tests.reference import decoders, moe
from tests.reference.hf import normalize

pytestmark = pytest.mark.crosscheck

CASES = {
    "llama-gqa": model("llama", head="causal-lm", V=100, H=64, L=2, A=4, G=2, F=96, gqa=True),
    "gpt2-tied": model("gpt2", head="causal-lm", V=100, P=16, H=32, L=2, A=4, r=4),
    "t5": model("t5", head="seq2seq-lm", V=100, H=32, D=8, A=4, F=48, L=2, B=32),
    "mixtral": model("mixtral", head="causal-lm", V=100, H=64, L=2, A=4, G=2, F_e=48, N_e=4, k_e=2, gqa=True),
    "deepseek-v3": model("deepseek-v3", head="causal-lm").subs(V=100, H=64, L=3, L_f=1, A=4, F=96, F_e=32, N_e=4,
                                                                  k_e=2, N_s=1, R_q=48, R_kv=32, D_n=16, D_r=8,
                                                                  D_v=16),
}

def reference(m):
    """{normalized name: (shape of one layer's tensor, tensors over the layers)} of transformers' module."""
    if m.family.name in moe.CONFIGS:
        module, strip, _ = moe.reference(m)
    else:
        module, strip = decoders.reference(m)
    conv1d = {name for name, sub in module.named_modules() if type(sub).__name__ == "Conv1D"}
    out: dict[str, tuple[tuple, int]] = {}
    for name, p in module.named_parameters():
        shape = tuple(p.shape)[::-1] if name.rsplit(".", 1)[0] in conv1d and p.dim() == 2 else tuple(p.shape)
        key = normalize(name[len(strip):] if strip and name.startswith(strip) else name)
        out[key] = (shape, out.get(key, (shape, 0))[1] + 1)
    return out

@pytest.mark.parametrize("case", list(CASES))
def test_stored_shapes_are_transformers_parameters(case):
    m = CASES[case]
    theirs = reference(m)
    ours = {}
    for t in stored_tensors(m.tree):
        shape = tuple(int(m.evaluate(d)) for d in t.shape)
        copies = int(m.evaluate(t.copies))
        ours.setdefault(normalize(t.path), []).append((shape, copies))  # T5's block.0 bias folded alike
    assert set(ours) == set(theirs)
    for path, found in ours.items():
        shape, layers = theirs[path]
        if len(shape) == len(found[0][0]) + 1:  # a fused experts tensor [N_e, ...]: one copy per expert
            assert found == [(shape[1:], layers * shape[0])], path
        else:  # one copy per layer (dense and MoE layers may list the same name, each with its copies)
            assert {s for s, _ in found} == {shape} and sum(c for _, c in found) == layers, path
