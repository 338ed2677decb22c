"""The published FLOPs laws against their sources: each source's own arithmetic, transcribed here as plain Python
(exact, with Fraction where the source divides), run on the config the model is built from, and the parameters
the transformers model holds (built on the meta device) where a source counts them.

The transcriptions read the config dict, never the Block tree, so that a wrong reading of the tree (a layer
count, a head width, the gate of an FFN, the top-k of the experts) makes the law differ from its source.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from symparams import model
from tests.reference.law_configs import GPT2, GPT3, GPT_1T, LLAMA, MIXTRAL
from symparams.analysis.law_shape import read_shape
from symparams.analysis.flops import published_laws
from symparams.analysis.laws import RefusedLaw, SourcedLaw
from symparams.core.compute import SEQ
from symparams.core.symbols import H, L, N_e

SEQ_LEN, BATCH = 16, 3


def _law(config: dict, name: str, seq: int = SEQ_LEN, batch: int = BATCH) -> Fraction:
    """The law's FLOPs for ``batch`` sequences of ``seq`` tokens (it is listed per token)."""
    f = model(config, head="causal-lm").flops(seq, batch)
    law = next(law for law in f.laws if law["name"] == name)
    return Fraction(str(law["law_value"])) * seq * batch


def _fields(config: dict) -> dict:
    """The config's fields under the names the Megatron-LM and MaxText arguments use."""
    gpt2 = config["model_type"] == "gpt2"
    hidden = config["n_embd"] if gpt2 else config["hidden_size"]
    heads = config["n_head"] if gpt2 else config["num_attention_heads"]
    return {"hidden": hidden, "heads": heads, "groups": heads if gpt2 else config["num_key_value_heads"],
            "layers": config["n_layer"] if gpt2 else config["num_hidden_layers"],
            "ffn": 4 * hidden if gpt2 else config["intermediate_size"], "vocab": config["vocab_size"],
            "swiglu": not gpt2, "experts": config.get("num_local_experts"), "topk": config.get("num_experts_per_tok"),
            "kv_channels": hidden // heads}


# -- Megatron-LM: megatron/training/training.py @ 001b00c2734d8f0fad096fe48a382fedf755d321 ---------------------

def megatron_num_floating_point_operations(c: dict, batch_size: int, seq_length: int) -> Fraction:
    """``transformer_flops`` (MHA/GQA, no MTP, no linear attention, every MLP dense or every MLP MoE)."""
    num_layers = c["layers"]
    num_experts_routed_to = 0 if c["experts"] is None else c["topk"]
    num_dense_layers, num_moe_layers = (num_layers, 0) if c["experts"] is None else (0, num_layers)
    moe_ffn_hidden_size, shared_expert_ffn_hidden_size = c["ffn"], 0
    forward_backward_expansion_factor, fma_expansion_factor = 3, 2
    ffn_expansion_factor = 3 if c["swiglu"] else 2
    query_projection_size = c["kv_channels"] * c["heads"]
    key_projection_size = value_projection_size = c["kv_channels"] * c["groups"]
    standard_self_attn_term = forward_backward_expansion_factor * fma_expansion_factor * (
        c["hidden"] * (query_projection_size + key_projection_size + value_projection_size)
        + query_projection_size * Fraction(seq_length, 2) * 2
        + query_projection_size * c["hidden"])
    self_attn_term = standard_self_attn_term * num_layers
    return batch_size * seq_length * (
        forward_backward_expansion_factor * fma_expansion_factor * c["hidden"] * (
            c["ffn"] * ffn_expansion_factor * num_dense_layers
            + moe_ffn_hidden_size * num_experts_routed_to * ffn_expansion_factor * num_moe_layers
            + shared_expert_ffn_hidden_size * ffn_expansion_factor * num_moe_layers)
        + self_attn_term
        + forward_backward_expansion_factor * fma_expansion_factor * c["hidden"] * c["vocab"])


# -- MaxText: MaxText/maxtext_utils.py @ 0245b56820bb37b2f1770e01483d406a3f0066f3 ------------------------------

def maxtext_training_flops(c: dict, per_device_batch_size: int, max_target_length: int) -> int:
    """``calculate_tflops_training_per_device``'s total, in FLOPs (its ``/ 10**12`` left out)."""
    b, t, emb, mlp_dim = per_device_batch_size, max_target_length, c["hidden"], c["ffn"]
    head_dim, mlp_activations = c["kv_channels"], 2 if c["swiglu"] else 1
    ffn1_flops = 2 * b * t * mlp_dim * emb * mlp_activations
    ffn2_flops = 2 * b * t * mlp_dim * emb
    total_ffn_flops = ffn1_flops + ffn2_flops
    if (c["experts"] or 1) > 1:
        gate_flops = 2 * b * t * emb * c["experts"]
        total_ffn_flops = gate_flops + c["topk"] * total_ffn_flops
    qkv_flops = 2 * b * t * emb * (c["heads"] + 2 * c["groups"]) * head_dim
    attention_flops = 4 * b * t**2 * c["heads"] * head_dim
    projection_flops = 2 * b * t * emb * c["heads"] * head_dim
    embedding_flops = 2 * b * t * emb * c["vocab"]
    learnable_weight_flops = ((total_ffn_flops + qkv_flops + projection_flops) * c["layers"] + embedding_flops) * 3
    return learnable_weight_flops + attention_flops * c["layers"] * 3


@pytest.mark.parametrize("config", [LLAMA, MIXTRAL, GPT2], ids=["llama-gqa", "mixtral", "gpt2"])
def test_megatron_law_is_num_floating_point_operations(config):
    expected = megatron_num_floating_point_operations(_fields(config), BATCH, SEQ_LEN)
    assert _law(config, "megatron_training") == expected


@pytest.mark.parametrize("config", [LLAMA, MIXTRAL, GPT2], ids=["llama-gqa", "mixtral", "gpt2"])
def test_maxtext_law_is_calculate_tflops_training_per_device(config):
    assert _law(config, "maxtext_training") == maxtext_training_flops(_fields(config), BATCH, SEQ_LEN)


def test_megatron_law_on_llama_3_8b_published_config():
    c = {"hidden": 4096, "heads": 32, "groups": 8, "layers": 32, "ffn": 14336, "vocab": 128256, "swiglu": True,
         "experts": None, "topk": None, "kv_channels": 128}
    f = model("llama-3-8b", head="causal-lm").flops(8192, 2)
    law = next(law for law in f.laws if law["name"] == "megatron_training")
    assert Fraction(str(law["law_value"])) * 8192 * 2 == megatron_num_floating_point_operations(c, 2, 8192)


# -- the laws that count the transformers model's parameters ----------------------------------------------------

def _transformers_model(config: dict):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    hf_config = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        return hf_config, transformers.AutoModelForCausalLM.from_config(hf_config)


def torchtitan_flops_per_token(hf_model, seq_len: int, layers: int, heads: int, head_dim: int) -> Fraction:
    """torchtitan/models/utils.py @ 01c01c88fe7a58a250e7adf6ddc3b7a3857597f4: ``6 * active_nparams`` from
    ``get_nparams_and_active_nparams`` (routed experts × top_k / num_experts; embedding tables out unless they
    are the output head's) plus ``quadratic_attention_flops_per_token`` per attention layer."""
    import torch.nn as nn

    named = list(hf_model.named_parameters())
    weight = {id(p): Fraction(1) for _, p in named}
    config = hf_model.config
    for name, p in named:
        if ".experts." in name:  # transformers' routed experts (the router is mlp.gate, outside them)
            weight[id(p)] = Fraction(config.num_experts_per_tok, config.num_local_experts)
    head_ids = {id(p) for p in hf_model.lm_head.parameters()}
    for module in hf_model.modules():
        if isinstance(module, nn.Embedding):
            for p in module.parameters(recurse=False):
                if id(p) not in head_ids:
                    weight[id(p)] = Fraction(0)
    active = sum(p.numel() * weight[id(p)] for _, p in named)
    return 6 * active + layers * 6 * heads * (head_dim + head_dim) * seq_len


@pytest.mark.parametrize("config", [LLAMA, MIXTRAL, GPT2], ids=["llama-gqa", "mixtral", "gpt2-tied"])
def test_torchtitan_law_counts_the_transformers_models_active_parameters(config):
    hf_config, hf_model = _transformers_model(config)
    c = _fields(config)
    per_token = torchtitan_flops_per_token(hf_model, SEQ_LEN, c["layers"], c["heads"], c["kv_channels"])
    assert _law(config, "torchtitan_training") == per_token * SEQ_LEN * BATCH


def nanogpt_flops_per_iter(hf_model, fwdbwd_per_iter: int) -> int:
    """karpathy/nanoGPT model.py @ 04a1d697ddc57aadb2edbe95816bf86c6b8918b0, ``GPT.estimate_mfu``: N is
    ``get_num_params()`` (every parameter but the position table), T the block size."""
    n = sum(p.numel() for p in hf_model.parameters()) - hf_model.transformer.wpe.weight.numel()
    cfg = hf_model.config
    big_l, big_h, q, t = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.n_positions
    flops_per_token = 6 * n + 12 * big_l * big_h * q * t
    return flops_per_token * t * fwdbwd_per_iter


def test_nanogpt_law_is_estimate_mfu_on_a_tiny_gpt2():
    _, hf_model = _transformers_model(GPT2)
    assert _law(GPT2, "nanogpt_training", seq=64) == nanogpt_flops_per_iter(hf_model, BATCH)


def test_nanogpt_mfu_of_gpt2_124m_as_estimate_mfu_computes_it():
    """nanoGPT's GPT-2 124M run (train_gpt2 config: 12 sequences × 40 accumulation steps of 1024 tokens a step):
    its ``flops_achieved / 312e12`` for a step of dt seconds, done exactly."""
    _, hf_model = _transformers_model({"model_type": "gpt2"})  # 124M: vocab 50257, 1024 positions
    fwdbwd_per_iter, dt = 12 * 40, Fraction(5, 2)
    expected = Fraction(nanogpt_flops_per_iter(hf_model, fwdbwd_per_iter)) / dt / 312_000_000_000_000
    f = model("gpt2", head="causal-lm").flops(1024, fwdbwd_per_iter)
    used = {row.name: row.ratio for row in f.utilisation("2.5", "312e12").rows}
    assert used["nanogpt_training"] == expected
    assert sum(p.numel() for p in hf_model.parameters()) - 1024 * 768 == 123_653_376  # nanoGPT's "123.65M"


# -- the papers -------------------------------------------------------------------------------------------------

def narayanan_flops_per_iteration(batch: int, s: int, l: int, h: int, v: int) -> Fraction:
    """Narayanan et al. 2021, eq. (3), with full activation recomputation."""
    return 96 * batch * s * l * h**2 * (1 + Fraction(s, 6 * h) + Fraction(v, 16 * l * h))


def test_narayanan_law_on_gpt3_175b():
    """GPT-3 175B as Narayanan et al. train it: l = 96, h = 12288, s = 2048, V = 51200."""
    assert _law(GPT3, "narayanan_training", seq=2048, batch=1536) == narayanan_flops_per_iteration(
        1536, 2048, 96, 12288, 51200)


def test_narayanan_table_1_trillion_parameter_row():
    """Narayanan et al. 2021, Table 1's largest row: 1008.0 billion parameters (their eq. (2), a GPT layer's
    12·l·h²·(1 + 13/12h + (V + s)/12lh), which leaves out the final LayerNorm's 2h), 163 teraFLOP/s per GPU,
    52% of an A100's 312 teraFLOP/s. Their figure counts eq. (3), recomputation included: the step that gives
    163 teraFLOP/s on each of 3072 GPUs gives the law's row 163/312 of the peak, and the model FLOPs less."""
    m = model(GPT_1T, head="causal-lm")
    l, h, v, s = 128, 25600, 51200, 2048
    assert m.count == 12 * l * h**2 + 13 * l * h + (v + s) * h + 2 * h
    assert round(Fraction(m.count, 10**9), 1) == Fraction(10080, 10)
    f = m.flops(s, 3072)
    step_flops = narayanan_flops_per_iteration(3072, s, l, h, v)
    used = {row.name: row for row in f.utilisation(step_flops / (3072 * 163 * 10**12), "312e12", 3072).rows}
    assert used["narayanan_training"].ratio == Fraction(163, 312)  # 52%
    assert used["hfu"].ratio == used["mfu"].ratio  # without recomputation the hardware runs the model FLOPs
    recomputed = m.flops(s, 3072, recompute=True).utilisation(step_flops / (3072 * 163 * 10**12), "312e12", 3072)
    hfu = next(row.ratio for row in recomputed.rows if row.name == "hfu")
    # eq. (3) recomputes the layers and not the logits, as the exact count with recompute does: the same 52%
    assert used["mfu"].ratio < Fraction(163, 312) == hfu


def chinchilla_forward_flops(seq_len, vocab_size, d_model, num_heads, key_size, ffw_size, num_layers) -> int:
    """Hoffmann et al. 2022, Appendix F: one sequence's forward FLOPs."""
    embeddings = 2 * seq_len * vocab_size * d_model
    attention = (2 * 3 * seq_len * d_model * (key_size * num_heads)  # key, query and value projections
                 + 2 * seq_len * seq_len * (key_size * num_heads)  # key @ query logits
                 + 3 * num_heads * seq_len * seq_len  # softmax
                 + 2 * seq_len * seq_len * (key_size * num_heads)  # softmax @ query reductions
                 + 2 * seq_len * (key_size * num_heads) * d_model)  # final linear
    dense_block = 2 * seq_len * (d_model * ffw_size + d_model * ffw_size)
    final_logits = 2 * seq_len * d_model * vocab_size
    return embeddings + num_layers * (attention + dense_block) + final_logits


def test_chinchilla_laws_are_appendix_f():
    forward = chinchilla_forward_flops(SEQ_LEN, 97, 32, 4, 8, 128, 3)
    assert _law(GPT2, "chinchilla_forward") == BATCH * forward
    assert _law(GPT2, "chinchilla_training") == BATCH * 3 * forward  # backward twice the forward


# -- what each law is, and is not, set beside -------------------------------------------------------------------

def test_laws_for_decoders_are_refused_for_an_encoder_with_the_reason():
    refused = published_laws(model("bert-base").tree)
    assert all(isinstance(law, RefusedLaw) and "decoder-only" in law.reason for law in refused)


def test_dense_laws_are_refused_for_a_mixture_of_experts_and_megatron_leaves_out_the_router():
    found = {law.name: law for law in published_laws(model("mixtral-8x7b", head="causal-lm").tree)}
    assert {name for name, law in found.items() if isinstance(law, RefusedLaw)} == {
        "narayanan_training", "nanogpt_training", "chinchilla_forward", "chinchilla_training"}
    megatron = found["megatron_training"]
    # Megatron counts no router; it halves the causal square, the counter multiplies all of it
    assert {part: diff for part, _, _, diff in megatron.terms()} == {"feed-forward": 6 * H * L * N_e,
                                                                     "attention scores": 6 * H * L * SEQ}


def test_a_model_without_a_language_model_head_is_refused():
    assert "language-model head" in published_laws(model("llama-3-8b").tree)[0].reason


def test_shape_reads_the_experts_top_k_and_a_head_width_of_its_own():
    shape = read_shape(model("qwen3-30b-a3b", head="causal-lm").tree)
    assert (shape.experts, shape.top_k, str(shape.head_dim), shape.gated) == (sp.Symbol("N_e", positive=True,
                                                                                         integer=True),
                                                                             sp.Symbol("k_e", positive=True,
                                                                                       integer=True), "D", True)


def test_each_laws_parts_add_up_to_its_difference():
    for law in published_laws(model("gemma-7b", head="causal-lm").tree):
        assert isinstance(law, SourcedLaw)
        assert sp.expand(sum((diff for _, _, _, diff in law.terms()), sp.Integer(0)) - law.difference) == 0


def test_assumptions_are_checked_at_the_models_values():
    def notes(m, name):
        return next(law for law in m.flops(64).laws if law["name"] == name)["assumes"]

    assert notes(model(GPT2, head="causal-lm"), "narayanan_training") == []  # a 4h MLP, multi-head
    assert notes(model({**GPT2, "n_inner": 96}, head="causal-lm"), "narayanan_training") == [
        "a 4h MLP; this model's FFN is not 4h wide"]
    assert any("G key/value heads" in note for note in notes(model(LLAMA, head="causal-lm"), "chinchilla_forward"))


@pytest.mark.parametrize("config", [LLAMA, MIXTRAL, GPT2], ids=["llama-gqa", "mixtral", "gpt2"])
def test_the_exact_parts_add_up_to_the_figure_each_law_is_compared_with(config):
    f = model(config, head="causal-lm").flops(SEQ_LEN, BATCH, recompute=True)
    figure = {"forward": f.forward, "training": f.forward + f.backward, "recompute": f.training}
    for law in f.to_dict()["laws"]:
        if "compares" in law:
            assert Fraction(str(law["exact_per_token"])) * f.tokens == figure[law["compares"]], law["name"]


def test_utilisation_refuses_a_float_and_a_non_positive_time_in_one_line():
    from symparams import SymparamsError

    f = model(GPT2, head="causal-lm").flops(SEQ_LEN)
    for step_time, peak, needle in ((0.5, "1e12", "not a float"), ("0", "1e12", "positive"),
                                    ("1", "-1e12", "positive")):
        with pytest.raises(SymparamsError, match=needle):
            f.utilisation(step_time, peak)


def test_an_inferred_type_has_its_laws_refused_with_the_reason():
    m = model({"model_type": "gpt_bigcode", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100,
               "n_positions": 64}, head="causal-lm")
    refused = m.flops(16).laws_refused
    assert len(refused) == 7 and all("inferred type" in law["reason"] for law in refused)
