"""LoRA adapters against PEFT: ``get_peft_model`` on the transformers model built on the meta device, its
``get_nb_trainable_parameters()`` the oracle for the trainable count and the total."""

import pytest
import torch
import transformers
from peft import LoraConfig, get_peft_model

from symparams import SymparamsError, model
from symparams.families.lookup import from_config
from tests.reference import FIXTURES
from tests.reference.decoders import untie

pytestmark = pytest.mark.crosscheck

AUTO = {None: transformers.AutoModel, "causal-lm": transformers.AutoModelForCausalLM,
        "masked-lm": transformers.AutoModelForMaskedLM, "seq2seq-lm": transformers.AutoModelForSeq2SeqLM}


def built(config, head=None):
    """The transformers model of ``config`` (a fixture's folder or a config dict) with ``head``, on the meta
    device."""
    if not isinstance(config, dict):
        config = transformers.AutoConfig.from_pretrained(FIXTURES / config)
    else:
        config = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        return AUTO[head].from_config(config)


def peft_counts(module, r, targets, **options) -> tuple[int, int]:
    """(trainable, total) as PEFT counts them, the targets a list or "all-linear"."""
    wrapped = get_peft_model(module, LoraConfig(r=r, target_modules=targets, **options))
    return wrapped.get_nb_trainable_parameters()


def ours(config, head=None):
    return from_config(str(FIXTURES / config / "config.json"), head=head) if not isinstance(config, dict) \
        else model(config, head=head)


CASES = [
    # GQA: k and v narrower than q
    ("meta-llama/Meta-Llama-3-8B", None, 16, ["q_proj", "v_proj"], {}),
    ("mistralai/Mistral-7B-v0.1", "causal-lm", 8, ["k_proj", "v_proj", "o_proj"], {}),
    # q, k, v with biases; all-linear leaves lm_head out
    ("Qwen/Qwen2.5-0.5B", "causal-lm", 4, "all-linear", {}),
    ("Qwen/Qwen2.5-0.5B", None, 4, ["q_proj", "k_proj"], {"bias": "lora_only"}),
    ("Qwen/Qwen2.5-0.5B", None, 4, ["o_proj", "q_proj"], {"bias": "all"}),
    # Conv1D, c_attn fused from Q, K and V; DoRA's magnitudes
    ("gpt2", None, 8, ["c_attn"], {}),
    ("gpt2", "causal-lm", 8, "all-linear", {"use_dora": True}),
    # BERT's dense is four modules; the masked-lm decoder is the output layer all-linear leaves out
    ("bert-base-uncased", None, 8, ["dense"], {}),
    ("bert-base-uncased", "masked-lm", 2, "all-linear", {}),
    ("bert-base-uncased", None, 4, ["word_embeddings", "query"], {"use_dora": True}),
    # T5: encoder and decoder, self- and cross-attention
    ("t5-small", None, 8, ["q", "v"], {}),
    ("google/flan-t5-base", "seq2seq-lm", 4, "all-linear", {}),
    # a mixture of experts: attention only
    ("mistralai/Mixtral-8x7B-v0.1", None, 16, ["q_proj", "v_proj"], {}),
    ("Qwen/Qwen1.5-MoE-A2.7B", None, 8, ["q_proj", "k_proj", "v_proj", "o_proj"], {}),
    # an inferred type (no family): GPT-Neo
    ("EleutherAI/gpt-neo-125M", "causal-lm", 8, "all-linear", {}),
    ({"model_type": "olmo", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100}, None, 4, ["q_proj", "down_proj", "embed_tokens"],
     {"use_dora": True}),
]


@pytest.mark.parametrize("config, head, r, targets, options", CASES,
                         ids=lambda v: v if isinstance(v, str) else None)
def test_lora_matches_peft(config, head, r, targets, options):
    m = ours(config, head)
    adapter = m.lora(r, targets, dora=options.get("use_dora", False), bias=options.get("bias", "none"))
    module = built(config, head)
    if m.family.name == "t5" and head and not m.switches["tie"]:
        untie(module)  # a Flan-T5 checkpoint holds its own lm_head, as from_pretrained keeps it
    assert (adapter.trainable, adapter.total) == peft_counts(module, r, targets, **options)
