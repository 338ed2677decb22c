"""Megatron-LM's theoretical memory and Korthikanti et al.'s forms against their sources: the source's arithmetic
transcribed here (exact, with Fraction where it divides; its 1.05 as 21/20), run on the config the model is
built from."""

from __future__ import annotations

from fractions import Fraction

import pytest

from symparams import model
from tests.reference.law_configs import GPT2, GPT3, LLAMA, MIXTRAL



def _args(config: dict, **layout) -> dict:
    """Megatron-LM's arguments for the config (one pipeline stage, no virtual stages)."""
    gpt2 = config["model_type"] == "gpt2"
    hidden = config["n_embd"] if gpt2 else config["hidden_size"]
    heads = config["n_head"] if gpt2 else config["num_attention_heads"]
    return {"hidden_size": hidden, "num_attention_heads": heads, "kv_channels": hidden // heads,
            "num_query_groups": heads if gpt2 else config["num_key_value_heads"],
            "num_layers": config["n_layer"] if gpt2 else config["num_hidden_layers"],
            "ffn_hidden_size": 4 * hidden if gpt2 else config["intermediate_size"],
            "moe_ffn_hidden_size": config.get("intermediate_size"), "num_experts": config.get("num_local_experts"),
            "swiglu": not gpt2, "normalization": "LayerNorm" if gpt2 else "RMSNorm",
            "padded_vocab_size": config["vocab_size"], "untie_embeddings_and_output_weights":
            not config.get("tie_word_embeddings", gpt2), "pipeline_model_parallel_size": 1,
            "tensor_model_parallel_size": 1, "use_distributed_optimizer": False, "data_parallel_size": 1, **layout}


# -- megatron/training/theoretical_memory_usage.py @ 00caa53af30912914981c86f39db123961678bbd ------------------

def compute_weight_and_optimizer_memory(args: dict) -> Fraction:
    """Its function, for every layer dense or every layer MoE (moe_layer_freq 1), no shared experts, no MTP, no
    latent attention."""
    query_projection_size = args["kv_channels"] * args["num_attention_heads"]
    query_projection_to_hidden_size_ratio = Fraction(query_projection_size, args["hidden_size"])
    num_experts = 1 if args["num_experts"] is None else args["num_experts"]
    gated_linear_multiplier = Fraction(3, 2) if args["swiglu"] else 1
    num_moe_layers = 0 if args["num_experts"] is None else args["num_layers"]
    num_dense_layers = args["num_layers"] - num_moe_layers
    moe_ffn_hidden_size = 0 if args["num_experts"] is None else args["moe_ffn_hidden_size"]
    norm_size = 1 if args["normalization"] == "RMSNorm" else 2
    self_attn_term = 2 * args["hidden_size"] * args["hidden_size"] * (
        (1 + Fraction(args["num_query_groups"], args["num_attention_heads"])) * query_projection_to_hidden_size_ratio)
    dense = 2 * args["hidden_size"] * (args["ffn_hidden_size"] * gated_linear_multiplier + norm_size) + self_attn_term
    moe = 2 * args["hidden_size"] * (moe_ffn_hidden_size * num_experts * gated_linear_multiplier + norm_size) \
        + self_attn_term
    embedding_size = args["hidden_size"] * args["padded_vocab_size"]
    block = dense * num_dense_layers + moe * num_moe_layers + norm_size * args["hidden_size"]
    most_loaded = (Fraction(block, args["pipeline_model_parallel_size"]) + embedding_size) \
        / args["tensor_model_parallel_size"]
    if args["untie_embeddings_and_output_weights"] and args["pipeline_model_parallel_size"] == 1:
        most_loaded += Fraction(embedding_size, args["tensor_model_parallel_size"])
    per_parameter = 6 + Fraction(12, args["data_parallel_size"]) if args["use_distributed_optimizer"] else 18
    return most_loaded * per_parameter


def compute_activation_memory(args: dict, s: int, b: int) -> Fraction:
    """Its function (sequence parallelism and selective recomputation), one pipeline stage."""
    t, p, h = args["tensor_model_parallel_size"], args["pipeline_model_parallel_size"], args["hidden_size"]
    memory = s * b * h * (18 + 4 * Fraction(args["ffn_hidden_size"], h)) * args["num_layers"]
    memory += 8 * s * b * p + s * b * h * p
    memory += s * b * h * 4 * (1 + Fraction(args["padded_vocab_size"], h))  # pipeline_model_parallel_size == 1
    return memory / t


def compute_activation_memory_without_sp(args: dict, s: int, b: int) -> Fraction:
    """Its function, one pipeline stage, its 5% overhead as 21/20."""
    t, p, h = args["tensor_model_parallel_size"], args["pipeline_model_parallel_size"], args["hidden_size"]
    total = s * b * h * (10 + Fraction(24, t)) * args["num_layers"]
    total += 8 * s * b * p + s * b * h * p
    logits_size = Fraction(s * b * args["padded_vocab_size"], t)
    total += (logits_size + s * b * h) * 2
    return total * Fraction(21, 20)


def _law(mem, name: str) -> Fraction:
    return Fraction(str(next(law for law in mem.to_dict()["laws"] if law["name"] == name)["law_value"]))


@pytest.mark.parametrize("config", [LLAMA, MIXTRAL, GPT2], ids=["llama-gqa-untied", "mixtral", "gpt2-tied"])
@pytest.mark.parametrize("zero, ranks", [(0, 1), (1, 8)], ids=["plain", "distributed-optimizer"])
def test_megatron_weights_and_optimizer_is_its_function(config, zero, ranks):
    mem = model(config, head="causal-lm").memory("bf16", "adam", zero=zero, ranks=ranks)
    args = _args(config, use_distributed_optimizer=zero == 1, data_parallel_size=ranks)
    assert _law(mem, "megatron_weights_and_optimizer") == compute_weight_and_optimizer_memory(args)


@pytest.mark.parametrize("config", [LLAMA, GPT2], ids=["llama", "gpt2"])
@pytest.mark.parametrize("t, sequence_parallel, recompute", [(1, False, "none"), (4, False, "selective"),
                                                             (2, True, "selective"), (2, True, "none")])
def test_megatron_activations_take_its_path_and_arithmetic(config, t, sequence_parallel, recompute):
    s, b = 16, 3
    mem = model(config, head="causal-lm").memory("bf16", "adam", seq=s, batch=b, tensor_parallel=t,
                                                 sequence_parallel=sequence_parallel, recompute=recompute)
    args = _args(config, tensor_model_parallel_size=t)
    # report_theoretical_memory: the sequence-parallel form only with selective recomputation
    source = compute_activation_memory if sequence_parallel and recompute == "selective" else \
        compute_activation_memory_without_sp
    assert _law(mem, "megatron_activations") == source(args, s, b)


KORTHIKANTI_TABLE_2 = {  # bytes of one layer; s, b, h, a, t as the paper writes them
    ("none", False): lambda s, b, h, a, t: s * b * h * (10 + Fraction(24, t) + Fraction(5 * a * s, h * t)),
    ("none", True): lambda s, b, h, a, t: Fraction(s * b * h, t) * (34 + Fraction(5 * a * s, h)),
    ("selective", False): lambda s, b, h, a, t: s * b * h * (10 + Fraction(24, t)),
    ("selective", True): lambda s, b, h, a, t: Fraction(34 * s * b * h, t),
    ("full", False): lambda s, b, h, a, t: 2 * s * b * h,
}


@pytest.mark.parametrize("recompute, sequence_parallel", list(KORTHIKANTI_TABLE_2))
def test_korthikanti_law_is_table_2_on_gpt3_175b_layers(recompute, sequence_parallel):
    """GPT-3 175B (s = 2048, h = 12288, a = 96, 96 layers), t = 8, as Korthikanti et al. evaluate it."""
    mem = model(GPT3, head="causal-lm").memory("bf16", "adam", seq=2048, tensor_parallel=8,
                                               sequence_parallel=sequence_parallel, recompute=recompute)
    expected = 96 * KORTHIKANTI_TABLE_2[recompute, sequence_parallel](2048, 1, 12288, 96, 8)
    assert _law(mem, "korthikanti_activations") == expected


def test_the_laws_refuse_what_their_sources_do_not_describe():
    m = model(LLAMA, head="causal-lm")
    refused = {law["name"]: law["reason"] for law in m.memory("fp32", "adam", seq=16).to_dict()["laws_refused"]}
    assert "mixed-precision Adam" in refused["megatron_weights_and_optimizer"]
    assert "ZeRO stage 1" in m.memory("bf16", "adam", zero=3, ranks=8).laws_refused[0]["reason"]
    assert m.memory("bf16", "none", seq=16).to_dict()["laws"] == []  # serving: the laws describe training
    moe = model(MIXTRAL, head="causal-lm").memory("bf16", "adam", seq=16).laws_refused
    assert {law["name"] for law in moe} == {"megatron_activations", "korthikanti_activations"}
