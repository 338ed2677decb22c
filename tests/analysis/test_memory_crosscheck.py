"""Memory against real tensors: tiny transformers models built on the CPU with random weights.

* weights: ``sum(p.nbytes for p in module.parameters())`` (PyTorch lists a tied tensor once) in fp32, bf16
  and fp16 against ``Memory(dtype).weights``;
* gradients and optimizer state: the ``.grad`` of every parameter after a backward pass, and the state
  ``torch.optim.Adam`` (``exp_avg``, ``exp_avg_sq``; its scalar ``step`` counter left out) and ``SGD`` with
  momentum (``momentum_buffer``) keep after one step, in fp32 training;
* the KV cache: the key and value tensors a forward pass with ``use_cache=True`` leaves
  (:func:`tests.reference.flops.cache_bytes`), in fp32 and bf16, against ``KVCache(...).total``: LLaMA with
  grouped-query and multi-head attention, GPT-2 (multi-head), T5 (self- and cross-attention), BERT as a
  decoder (its causal-lm head); an encoder (BERT) leaves none.

int8 and int4 are conventions (no PyTorch tensor type to compare with): see tests/analysis/test_memory.py.
"""

import pytest
import torch
import transformers

from symparams import model
from symparams.families import bert, gpt2, llama, t5
from tests.reference import flops as ref
from tests.reference.decoders import gpt2_config, llama_config, t5_config, untie
from tests.reference.more_families import config as encoder_config

pytestmark = pytest.mark.crosscheck

SEQ, BATCH, V = 7, 2, 100
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}

#: tiny models: (case, symparams model); the real module is built from each one's config
CASES = {
    "bert": model("bert", V=V, P=16, S=2, H=32, L=2, A=4, r=2),
    "bert-masked-lm": model("bert", head="masked-lm", V=V, P=16, S=2, H=32, L=2, A=4, r=2),
    "bert-causal-lm": model("bert", head="causal-lm", V=V, P=16, S=2, H=32, L=2, A=2, r=2),
    "llama-gqa": model("llama", head="causal-lm", V=V, H=32, L=2, A=4, G=2, F=48, gqa=True),
    "llama-mha-tied": model("llama", head="causal-lm", V=V, H=32, L=2, A=4, F=48, gqa=False, tie=True),
    "llama-base": model("llama", V=V, H=32, L=2, A=4, G=1, F=48, gqa=True),
    "gpt2": model("gpt2", head="causal-lm", V=V, P=16, H=32, L=2, A=4, r=2),
    "gpt2-base": model("gpt2", V=V, P=16, H=32, L=3, A=2, r=2),
    "t5-tied": model("t5", head="seq2seq-lm", V=V, H=32, L=2, A=4, D=8, F=48, B=8),
    "t5-untied": model("t5", head="seq2seq-lm", V=V, H=32, L=2, A=2, D=12, F=48, B=8, tie=False,
                       split_layers=True, L_d=3),
}


def real(m):
    """The transformers module for ``m``: CPU, eager attention, random weights (float32)."""
    fam = m.family.name
    if fam == "bert":
        data = dict(encoder_config(m), is_decoder=m.head == "causal-lm")  # BertLMHeadModel wants a decoder
        return ref.real(bert.CLASSES[m.head][0], transformers.CONFIG_MAPPING["bert"].from_dict(dict(data)))
    if fam == "llama":
        return ref.real(llama.CLASSES[m.head][0], llama_config(m))
    if fam == "gpt2":
        return ref.real(gpt2.CLASSES[m.head], gpt2_config(m))
    module = ref.real(t5.CLASSES[m.head][0], t5_config(m))
    return untie(module) if m.head == "seq2seq-lm" and not m.switches["tie"] else module


def inputs(m) -> dict:
    ids = ref.token_ids(V, SEQ, BATCH)
    return dict(input_ids=ids, decoder_input_ids=ids) if m.family.name == "t5" else dict(input_ids=ids)


def parameter_bytes(module) -> int:
    return sum(p.nbytes for p in module.parameters())


# -- weights ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_weights_are_the_real_tensors_bytes(case, dtype):
    m = CASES[case]
    module = real(m).to(DTYPES[dtype])
    assert m.memory(dtype, optimizer="none").weights == parameter_bytes(module)


# -- gradients and optimizer state in fp32 ---------------------------------------------------------------

@pytest.mark.parametrize("case", ["llama-gqa", "llama-mha-tied", "gpt2"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_gradients_are_the_real_gradients_bytes(case, dtype):
    m = CASES[case]
    module = real(m).to(DTYPES[dtype])
    output = module(**inputs(m), use_cache=False)
    output.logits.float().sum().backward()
    grads = [p.grad for p in module.parameters()]
    assert all(g is not None for g in grads)  # a language model uses every parameter
    assert m.memory(dtype, "adam").gradients == sum(g.nbytes for g in grads)


@pytest.mark.parametrize("case", ["llama-gqa", "t5-untied", "bert-masked-lm"])
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_optimizer_state_is_the_real_state_bytes_in_fp32(case, optimizer):
    m = CASES[case]
    module = real(m)
    params = list(module.parameters())
    step = torch.optim.Adam(params) if optimizer == "adam" else torch.optim.SGD(params, lr=0.1, momentum=0.9)
    for p in params:
        p.grad = torch.zeros_like(p)  # every parameter gets its state on the first step
    step.step()
    kept = sum(value.nbytes for state in step.state.values() for key, value in state.items() if key != "step")
    assert m.memory("fp32", optimizer).optimizer == kept


# -- KV cache -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["llama-gqa", "llama-mha-tied", "llama-base", "gpt2", "gpt2-base", "t5-tied",
                                  "t5-untied", "bert-causal-lm"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_kv_cache_is_the_real_cache_bytes(case, dtype):
    m = CASES[case]
    module = real(m).to(DTYPES[dtype])
    own, cross = ref.cache_bytes(module, inputs(m))
    kv = m.kv_cache(dtype, seq=SEQ, batch=BATCH)
    assert (kv.per_token * SEQ * BATCH, kv.cross_per_token * SEQ * BATCH) == (own, cross)
    assert kv.total == own + cross
    assert m.memory(dtype, "none", seq=SEQ, batch=BATCH).kv_cache == own + cross


def test_llama_gqa_cache_by_hand():
    # 2 (K, V) · L = 2 · G = 2 · D = 32/4 = 8 elements per token, 4 bytes in fp32
    own, _ = ref.cache_bytes(real(CASES["llama-gqa"]), inputs(CASES["llama-gqa"]))
    assert own == 2 * 2 * 2 * 8 * 4 * SEQ * BATCH


@pytest.mark.parametrize("case", ["bert", "bert-masked-lm"])
def test_an_encoder_caches_nothing(case):
    m = CASES[case]
    module = real(m)
    kwargs = dict(use_cache=True) if ref._takes_cache(module) else {}
    with torch.no_grad():
        output = module(**inputs(m), **kwargs)
    assert getattr(output, "past_key_values", None) is None
    assert m.kv_cache("fp32", seq=SEQ, batch=BATCH).total == 0
