"""The causal, recompute and element-wise FLOPs modes against traces of tiny real models, one of every kind.

A dense encoder (BERT), dense decoders (GPT-2; LLaMA with grouped-query attention), a mixture of experts
(Mixtral, eager experts), multi-head latent attention (DeepSeek-V3 and V2), encoder-decoders (T5, BART) and
inferred types (OLMo, OLMoE: the recompute mode; the others are refused for them) are built on the CPU with
eager attention and random weights and run under :class:`tests.reference.op_trace.OpTrace`, which records
every aten op with the FLOPs PyTorch's counter gives it, and whether it ran inside an attention module that
transformers itself marks ``is_causal``.  At two lengths and two batch sizes:

* ``causal=True`` is what a causal kernel counts: the trace's total less, for each forward ``bmm`` of a
  causal module with an ``s × s`` operand or result (the scores and the weighted sum, found by shape:
  no width here equals s), the share of the square above the diagonal, (s − 1)/(2s).  Bidirectional
  attention (BERT, the encoders) and cross-attention stay whole; their products are counted too.  The
  backward pass of those products is twice their forward in the trace (checked on it), so training saves
  three times what the forward saves.
* ``recompute=True`` is the forward and backward pass under transformers' activation checkpointing
  (``activation_checkpointing_enable``) with torch's early stop off: every layer's forward runs again in the
  backward pass, the embeddings and the head's do not.  (With early stop on, transformers' default, torch
  skips recomputing a layer's last ops whose results the backward does not need: fewer FLOPs, by an amount
  that depends on the layer's code.)
* ``elementwise=True`` adds, per docs/costs.md, 3 FLOPs per attention score, 2 + (its parameters) per
  feature of each norm, 1 per activation element: checked against the elements of the ``_softmax`` ops over
  an ``s × s`` square, the input elements of each module transformers names ``…Norm`` times two plus its
  parameter tensors, and the elements of the ``gelu``, ``silu``, ``relu`` and ``tanh`` ops (GPT-2's
  ``gelu_new`` computes one ``tanh`` per element).
"""

from __future__ import annotations

import pytest
import transformers
from torch.utils.checkpoint import set_checkpoint_early_stop
from torch.utils.flop_counter import FlopCounterMode

from symparams import model
from symparams.core.errors import SymparamsError
from symparams.families.inferred import model as inferred_model
from tests.reference import decoders, moe
from tests.reference import flops as ref
from tests.reference.more_families import seq2seq_config
from tests.reference.op_trace import trace

pytestmark = pytest.mark.crosscheck

#: (s, b): two lengths and two batch sizes; no head width, expert width or rank below equals either length
RUNS = ((7, 3), (9, 2))
_MLA = dict(V=100, H=32, L=2, A=4, F_e=24, N_e=4, k_e=2, R_kv=10, D_n=6, D_r=4, D_v=5, L_f=1, F=36, N_s=1)
BERT = dict(model_type="bert", vocab_size=100, max_position_embeddings=40, hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64, type_vocab_size=2, num_labels=3)


def _bert():
    config = transformers.AutoConfig.for_model(**BERT)
    return model(dict(BERT), head="token-classification"), ref.real("BertForTokenClassification", config)


def _gpt2():
    m = model("gpt2", head="causal-lm", V=100, P=40, H=32, L=2, A=4, r=2)
    return m, ref.real("GPT2LMHeadModel", decoders.gpt2_config(m))


def _llama():
    m = model("llama", head="causal-lm", V=97, H=32, L=2, A=4, G=2, F=48)
    return m, ref.real("LlamaForCausalLM", decoders.llama_config(m))


def _moe(family, cls, **values):
    m = model(family, head="causal-lm", **values)
    return m, ref.real(cls, moe.CONFIGS[family][1](m))


def _t5():
    m = model("t5", head="seq2seq-lm", V=100, H=32, L=2, A=4, D=8, F=48, B=8)
    return m, ref.real("T5ForConditionalGeneration", decoders.t5_config(m))


def _bart():
    m = model("bart", head="seq2seq-lm", V=100, H=32, L=2, A=4, r=2, P=40)
    return m, ref.real("BartForConditionalGeneration",
                       transformers.CONFIG_MAPPING["bart"].from_dict(seq2seq_config(m, "bart")))


CASES = {
    "bert": _bert,
    "gpt2": _gpt2,
    "llama": _llama,
    "mixtral": lambda: _moe("mixtral", "MixtralForCausalLM", V=100, H=32, L=2, A=4, G=2, F_e=24, N_e=4, k_e=2),
    "deepseek_v3": lambda: _moe("deepseek_v3", "DeepseekV3ForCausalLM", **_MLA, R_q=12),
    "deepseek_v2": lambda: _moe("deepseek_v2", "DeepseekV2ForCausalLM", **_MLA, q_lora=False),
    "t5": _t5,
    "bart": _bart,
}


def inputs(module, seq, batch):
    ids = ref.token_ids(module.config.vocab_size, seq, batch)
    given = dict(input_ids=ids)
    if module.config.is_encoder_decoder:
        given["decoder_input_ids"] = ref.token_ids(module.config.vocab_size, seq, batch, seed=2)
    if ref._takes_cache(module):
        given["use_cache"] = False
    return given


def _attention_products(ops, seq):
    """The forward products with an s × s operand or result (scores, weighted sum), split (causal, other)."""
    square = [o for o in ops if o.name in ("bmm", "baddbmm") and not o.backward
              and (seq, seq) in (o.shape[-2:], *(shape[-2:] for shape in o.operands))]
    return sum(o.flops for o in square if o.causal), sum(o.flops for o in square if not o.causal)


@pytest.fixture(scope="session", params=list(CASES))
def built(request):
    return request.param, *CASES[request.param]()


@pytest.mark.parametrize("seq,batch", RUNS)
def test_causal_counts_what_a_causal_kernel_would(built, seq, batch):
    name, m, module = built
    ops, total = trace(module, inputs(module, seq, batch), backward=True)
    assert sum(o.flops for o in ops) == total == m.flops(seq, batch).training  # the trace sees what the counter does
    forward = sum(o.flops for o in ops if not o.backward)
    causal, other = _attention_products(ops, seq)
    backward_products = sum(o.flops for o in ops if o.backward and o.name in ("bmm", "baddbmm"))
    assert backward_products == 2 * (causal + other)  # each product's two gradients, both as wide as it
    assert (causal > 0) == (name != "bert") and (other > 0) == (name in ("bert", "t5", "bart"))
    saved = causal * (seq - 1) // (2 * seq)  # the pairs above the diagonal: s·(s − 1)/2 of s²
    assert saved * 2 * seq == causal * (seq - 1)
    f = m.flops(seq, batch, causal=True)
    assert (f.forward, f.training) == (forward - saved, total - 3 * saved)


def checkpointed(module, given: dict) -> int:
    """FlopCounterMode's forward and backward FLOPs with every layer checkpointed and recomputed in full."""
    module.activation_checkpointing_enable()
    module.zero_grad(set_to_none=True)
    try:
        with set_checkpoint_early_stop(False), FlopCounterMode(display=False) as counter:
            ref._scalar(module(**given)).backward()
    finally:
        module.activation_checkpointing_disable()
    return counter.get_total_flops()


@pytest.mark.parametrize("seq,batch", RUNS)
def test_recompute_counts_activation_checkpointing(built, seq, batch):
    _, m, module = built
    assert m.flops(seq, batch, recompute=True).training == checkpointed(module, inputs(module, seq, batch))


def _elementwise(module, seq, batch) -> tuple[int, int]:
    """(element-wise FLOPs of a forward pass by the stated conventions, the part of them on causal scores)."""
    norms = []

    def hook(norm, args, _):
        norms.append(args[0].numel() * (2 + len(list(norm.parameters(recurse=False)))))

    handles = [sub.register_forward_hook(hook) for sub in module.modules() if type(sub).__name__.endswith("Norm")]
    try:
        ops, _ = trace(module, inputs(module, seq, batch))
    finally:
        for handle in handles:
            handle.remove()
    scores = [o for o in ops if o.name == "_softmax" and o.shape[-2:] == (seq, seq)]
    activations = sum(o.elements for o in ops if o.name in ("gelu", "silu", "relu", "tanh"))
    softmax = 3 * sum(o.elements for o in scores)
    return softmax + sum(norms) + activations, 3 * sum(o.elements for o in scores if o.causal)


@pytest.mark.parametrize("seq,batch", RUNS)
def test_elementwise_terms_equal_the_traced_ops_by_their_conventions(built, seq, batch):
    name, m, module = built
    expected, causal_softmax = _elementwise(module, seq, batch)
    assert m.flops(seq, batch, elementwise=True).by_kind["elementwise"] == expected
    saved = causal_softmax * (seq - 1) // (2 * seq)
    assert m.flops(seq, batch, causal=True, elementwise=True).by_kind["elementwise"] == expected - saved


# -- inferred types: traced products, so only the recompute mode -----------------------------------------

INFERRED = {
    "olmo": dict(model_type="olmo", vocab_size=100, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2),
    "olmoe": dict(model_type="olmoe", vocab_size=100, hidden_size=32, intermediate_size=24, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2),
}


@pytest.mark.parametrize("seq,batch", RUNS)
@pytest.mark.parametrize("model_type,cls", [("olmo", "OlmoForCausalLM"), ("olmoe", "OlmoeForCausalLM")])
def test_an_inferred_types_recompute_counts_activation_checkpointing(model_type, cls, seq, batch):
    data = INFERRED[model_type]
    m = inferred_model(dict(data), head="causal-lm")
    module = ref.real(cls, transformers.AutoConfig.for_model(**data))
    training = checkpointed(module, dict(input_ids=ref.token_ids(100, seq, batch), use_cache=False))
    assert m.flops(seq, batch, recompute=True).training == training
    for mode in ("causal", "elementwise"):
        with pytest.raises(SymparamsError, match="--causal and --elementwise are not inferred"):
            m.flops(seq, **{mode: True})
