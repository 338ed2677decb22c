"""Memory in bytes (symparams.analysis.memory): every expected value written by hand from its source.

The tiny LLaMA used throughout (V = 10, H = 4, L = 1, A = 2, F = 3, multi-head attention) has, by hand,
V·H = 40 embedding weights, 4·H² = 64 attention weights, 3·H·F = 36 MLP weights and three H-wide norms (12):
152 parameters; each token leaves 2·L·A·(H/A) = 8 elements in its cache.
"""

import json
import math
from fractions import Fraction

import pytest
import sympy as sp

from symparams import SymparamsError, model
from symparams.analysis.cache import KVCache, cache_per_token
from symparams.analysis.capacity import largest_batch, longest_context
from symparams.analysis.dtypes import weight_bytes
from symparams.analysis.memory import Memory, activation_bytes_per_layer, zero_per_rank
from symparams.core.compute import BATCH, SEQ

TINY = dict(V=10, H=4, L=1, A=2, F=3, gqa=False)
TINY_COUNT, TINY_CACHE = 152, 8


def tiny(**values):
    return model("llama", **{**TINY, **values})


def test_the_tiny_model_is_what_the_module_docstring_says():
    m = tiny()
    assert m.count == 10 * 4 + 4 * 4 * 4 + 3 * 4 * 3 + 3 * 4 == TINY_COUNT
    assert m.evaluate(cache_per_token(m.tree)[0]) == TINY_CACHE


# -- weights per dtype ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,expected", [
    ("fp32", 4 * 109_482_240), ("bf16", 2 * 109_482_240), ("fp16", 2 * 109_482_240), ("int8", 109_482_240),
    ("int4", 18 * 109_482_240 // 32),  # 109,482,240 = 32 · 3,421,320: whole blocks
    ("bfloat16", 2 * 109_482_240), ("FP32", 4 * 109_482_240)])
def test_weights_of_bert_base_in_every_dtype(dtype, expected):
    assert model("bert-base").memory(dtype, optimizer="none").weights == expected


def test_int4_rounds_the_model_up_to_whole_blocks_of_32():
    # 152 weights: 4 full blocks and 24 weights in a fifth, 18 bytes each (16 of 4-bit weights, an fp16 scale)
    assert tiny().memory("int4", "none").weights == 5 * 18 == 90
    assert weight_bytes(32, "int4") == 18 and weight_bytes(33, "int4") == 36 and weight_bytes(1, "int4") == 18


def test_tied_weights_count_once():
    untied, tied = model("llama-2-7b", head="causal-lm"), model("llama-2-7b", head="causal-lm", tie=True)
    # the untied head adds its own V·H = 32000 · 4096 weights, 2 bytes each
    assert untied.memory("bf16", "none").weights - tied.memory("bf16", "none").weights == 2 * 32000 * 4096


# -- gradients and optimizer state ----------------------------------------------------------------

@pytest.mark.parametrize("dtype,optimizer,per_param", [
    ("fp32", "adam", (4, 4, 8)), ("bf16", "adam", (2, 2, 12)), ("fp16", "adam", (2, 2, 12)),
    ("fp32", "sgd", (4, 4, 4)), ("bf16", "sgd", (2, 2, 8)), ("fp16", "sgd", (2, 2, 8)),
    ("fp32", "none", (4, 0, 0)), ("bf16", "none", (2, 0, 0)), ("int8", "none", (1, 0, 0))])
def test_bytes_per_parameter(dtype, optimizer, per_param):
    mem = model("bert-base").memory(dtype, optimizer)
    assert (mem.weights, mem.gradients, mem.optimizer) == tuple(k * 109_482_240 for k in per_param)
    assert mem.total == sum(per_param) * 109_482_240  # no seq: no activations, no cache


def test_adam_in_mixed_precision_is_16_bytes_per_parameter():
    mem = model("llama-2-7b", head="causal-lm").memory("bf16", "adam")
    assert mem.total == 16 * 6_738_415_616


@pytest.mark.crosscheck
def test_gradients_and_optimizer_state_cover_trainable_parameters_only():
    from tests.families.test_bert_transformer import marian_config
    from tests.reference.hf import build, totals

    m = model("transformer-base")  # its sinusoidal position tables are registered, not trained
    count, trainable = totals(build("MarianModel", marian_config(m)))
    assert count - trainable == 2 * 512 * 512  # two P × H tables, P = 512, H = 512
    mem = m.memory("fp32", "adam")
    assert (mem.weights, mem.gradients, mem.optimizer) == (4 * count, 4 * trainable, 8 * trainable)


@pytest.mark.parametrize("dtype", ["int8", "int4"])
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_quantized_weights_are_not_trained(dtype, optimizer):
    with pytest.raises(SymparamsError, match=f"{dtype} weights are not trained"):
        model("bert-base").memory(dtype, optimizer)


# -- ZeRO ---------------------------------------------------------------------------------------------

#: the ZeRO paper (Rajbhandari et al. 2020, Figure 1): Ψ = 7.5B, N_d = 64, K = 12, bytes per rank
PSI = 7_500_000_000
ZERO_PAPER = {0: (2 + 2 + 12) * PSI,                         # 120 GB
              1: 2 * PSI + 2 * PSI + 12 * PSI // 64,          # 31.4 GB
              2: 2 * PSI + (2 + 12) * PSI // 64,              # 16.6 GB
              3: (2 + 2 + 12) * PSI // 64}                    # 1.9 GB
ZERO_PAPER_GB = {0: Fraction(120), 1: Fraction("31.4"), 2: Fraction("16.6"), 3: Fraction("1.9")}


def _bert_of_7_5_billion():
    # BERT's count H²(2L(r+2)+1) + H(L(r+9)+P+S+V+3) at H = 1000, r = 4, L = 600:
    # 10⁶·7201 + 1000·(7800 + 512 + 2 + V + 3) = 7.5·10⁹ for V = 290,683
    return model("bert", H=1000, A=10, L=600, r=4, P=512, S=2, V=290_683)


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_zero_paper_example_from_the_formula(stage):
    per_rank = sum(zero_per_rank(2 * PSI, 2 * PSI, 12 * PSI, stage, 64))
    assert per_rank == ZERO_PAPER[stage]
    assert round(Fraction(per_rank) / 10**9, 1) == ZERO_PAPER_GB[stage]


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_zero_paper_example_on_a_model_of_7_5_billion_parameters(stage):
    m = _bert_of_7_5_billion()
    assert m.count == PSI
    mem = m.memory("bf16", "adam", zero=stage, ranks=64)
    assert mem.total == ZERO_PAPER[stage]


def test_zero_rounds_each_partition_up():
    # 152 parameters over 7 ranks, bf16 + Adam: 304/7, 304/7 and 1824/7 bytes, each rounded up
    mem = tiny().memory("bf16", "adam", zero=3, ranks=7)
    assert (mem.weights, mem.gradients, mem.optimizer) == (44, 44, 261)
    mem = tiny().memory("bf16", "adam", zero=1, ranks=7)
    assert (mem.weights, mem.gradients, mem.optimizer) == (304, 304, 261)


# -- activations (Korthikanti et al. 2022) ------------------------------------------------------------

# GPT-3 175B's layer: s = 2048, b = 1, h = 12288, a = 96, t = 8; s·b·h = 25,165,824, 5·a·s/h = 80
SBH = 2048 * 12288
GPT3_LAYER = {
    # (tensor_parallel, sequence_parallel, recompute): bytes per layer
    (1, False, "none"): SBH * (34 + 80),                 # 2,868,903,936
    (8, False, "none"): SBH * (10 + 3 + 10),             # 24/8 = 3, 80/8 = 10: 578,813,952
    (8, True, "none"): SBH // 8 * (34 + 80),             # 358,612,992
    (8, False, "selective"): SBH * (10 + 3),             # 327,155,712
    (8, True, "selective"): SBH // 8 * 34,               # 106,954,752
    (8, True, "full"): 2 * SBH,                          # 50,331,648
}


def test_gpt3_layer_values_written_out():
    assert [GPT3_LAYER[k] for k in GPT3_LAYER] == [2_868_903_936, 578_813_952, 358_612_992, 327_155_712,
                                                   106_954_752, 50_331_648]


@pytest.mark.parametrize("setting", list(GPT3_LAYER))
def test_activations_of_a_gpt3_175b_layer(setting):
    t, sequence_parallel, recompute = setting
    assert activation_bytes_per_layer(2048, 1, 12288, 96, t, sequence_parallel, recompute) == GPT3_LAYER[setting]
    # the same through a model: BERT's layers at GPT-3's sizes (96 layers of 12288, 96 heads)
    m = model("bert", H=12288, A=96, L=96, r=4, V=50257, P=2048, S=1)
    mem = m.memory("bf16", "adam", seq=2048, tensor_parallel=t, sequence_parallel=sequence_parallel,
                   recompute=recompute)
    assert mem.layers == 96 and mem.activations == 96 * GPT3_LAYER[setting]


def test_activations_grow_with_the_batch():
    mem = tiny().memory("bf16", "adam", seq=3, batch=5)
    assert mem.activations == 5 * (3 * 4 * 34 + 5 * 2 * 3 * 3)  # b·(s·h·34 + 5·a·s²)


def test_activations_are_rounded_up_once():
    # t = 7, s = 2: s·h·(10 + 24/7) + 5·a·s²/7 = 80 + 192/7 + 40/7 = 80 + 232/7 = 113 1/7
    assert tiny().memory("bf16", "adam", seq=2, tensor_parallel=7).activations == 114


def test_no_activations_when_serving_or_without_a_sequence_length():
    assert tiny().memory("bf16", "none", seq=3).activations == 0
    assert tiny().memory("bf16", "adam").activations == 0


# -- KV cache ----------------------------------------------------------------------------------------

def test_llama_3_8b_kv_cache_per_token():
    kv = model("llama-3-8b").kv_cache("bf16")
    assert kv.per_token == 2 * 32 * 8 * 128 * 2 == 131_072  # K and V · L · G · D · 2 bytes
    assert kv.cross_per_token == 0 and kv.total is None


@pytest.mark.parametrize("dtype,element", [("fp32", 4), ("bf16", 2), ("fp16", 2), ("int8", 2), ("int4", 2)])
def test_kv_cache_dtype(dtype, element):
    # int8/int4 quantize the weights: the cache stays fp16
    kv = model("llama-2-7b").kv_cache(dtype, seq=4096, batch=3)
    assert kv.per_token == 2 * 32 * 32 * 128 * element  # multi-head attention: G = A = 32
    assert kv.total == kv.per_token * 4096 * 3


def test_deepseek_v3_caches_its_compressed_latent():
    # MLA: each of the 61 layers keeps R_kv = 512 latent and D_r = 64 rotary key elements per token
    assert model("deepseek-v3").kv_cache("bf16").per_token == 61 * (512 + 64) * 2 == 70_272


def test_encoder_decoder_activations_count_both_stacks():
    # t5-small: 6 encoder and 6 decoder self-attention layers; cross-attention is left out
    mem = model("t5-small").memory("bf16", "adam", seq=4)
    assert mem.layers == 12
    assert mem.activations == 12 * (4 * 512 * 34 + 5 * 8 * 4 * 4)  # h = 512, a = 8


def test_encoders_cache_nothing():
    assert model("bert-base").kv_cache("bf16", seq=512).per_token == 0
    assert model("bert-base").memory("bf16", "none", seq=512).kv_cache == 0


def test_the_cache_is_kept_when_serving_not_when_training():
    serving = tiny().memory("bf16", "none", seq=9, batch=2)
    assert serving.kv_cache == TINY_CACHE * 2 * 9 * 2 == 288
    assert serving.total == 2 * TINY_COUNT + 288
    training = tiny().memory("bf16", "adam", seq=9, batch=2)
    assert training.kv_cache == 0 and training.kv_cache_per_token == 16


def test_t5_caches_self_and_cross_attention():
    # t5-small: 6 decoder layers of 8 heads, D = 64: 2·6·8·64 elements per token in each cache
    kv = model("t5-small", head="seq2seq-lm").kv_cache("fp32", seq=10, batch=2)
    assert kv.per_token == 2 * 6 * 8 * 64 * 4 and kv.cross_per_token == 2 * 6 * 8 * 64 * 4
    assert kv.total == (2 * 6 * 8 * 64 * 4) * 2 * 10 * 2


# -- output -----------------------------------------------------------------------------------------

def test_to_dict_is_json_with_integers():
    data = model("llama-3-8b").memory("bf16", "adam", zero=2, ranks=8, seq=2048, batch=2).to_dict()
    for key in ("weights", "gradients", "optimizer", "activations", "kv_cache_per_token",
                "cross_kv_cache_per_token", "kv_cache", "total"):
        assert type(data[key]) is int, key
    assert data["total"] == sum(data[k] for k in ("weights", "gradients", "optimizer", "activations", "kv_cache"))
    assert (data["dtype"], data["optimizer_name"], data["zero"], data["ranks"]) == ("bf16", "adam", 2, 8)
    assert data["kv_cache_per_token"] == 131_072
    assert all(isinstance(line, str) and line for line in data["conventions"])
    assert json.loads(json.dumps(data)) == data
    kv = model("llama-3-8b").kv_cache("bf16", seq=8, batch=1).to_dict()
    assert (kv["per_token"], kv["total"]) == (131_072, 8 * 131_072)
    assert json.loads(json.dumps(kv)) == kv


def test_int4_conventions_are_stated():
    lines = " ".join(tiny().memory("int4", "none").conventions)
    assert "18 bytes per block" in lines and "fp16" in lines


@pytest.mark.parametrize("settings", [
    dict(dtype="bf16", optimizer="adam", seq=7, batch=3),
    dict(dtype="fp32", optimizer="sgd", zero=2, ranks=5, seq=5, tensor_parallel=3),
    dict(dtype="fp16", optimizer="adam", zero=3, ranks=7, seq=2, tensor_parallel=7, sequence_parallel=True),
    dict(dtype="bf16", optimizer="adam", seq=11, recompute="selective", tensor_parallel=2),
    dict(dtype="int4", optimizer="none", zero=3, ranks=3, seq=13, batch=2),
    dict(dtype="int8", optimizer="none", seq=13),
])
def test_each_part_is_its_formula_at_the_values_rounded_up_and_the_total_their_sum(settings):
    m = tiny(gqa=True, G=1)
    mem = m.memory(**settings)
    values = {**m.values, SEQ: settings["seq"], BATCH: settings.get("batch", 1)}
    for part in ("weights", "gradients", "optimizer", "activations", "kv_cache", "kv_cache_per_token"):
        exact = mem.formulas[part].xreplace(values)
        assert exact.is_Rational, (part, exact)
        assert math.ceil(Fraction(int(exact.p), int(exact.q))) == getattr(mem, part), part
    assert mem.total == mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.kv_cache


def test_formulas_are_symbolic_in_the_model_symbols():
    f = model("llama").memory("bf16", "adam", seq=1).formulas
    H, A, L = sp.symbols("H A L", positive=True, integer=True)
    assert f["activations"] == 34 * SEQ * BATCH * H * L + 5 * A * L * SEQ**2 * BATCH
    assert f["weights"].free_symbols <= set(model("llama").symbols)


# -- bad settings -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(dtype="fp64"), "unknown dtype 'fp64'"),
    (dict(dtype=2), "unknown dtype 2"),
    (dict(optimizer="lion"), "unknown optimizer 'lion'"),
    (dict(zero=4), "ZeRO stage must be 0, 1, 2 or 3"),
    (dict(zero="two"), "ZeRO stage must be 0, 1, 2 or 3"),
    (dict(zero=True), "ZeRO stage must be 0, 1, 2 or 3"),
    (dict(ranks=0), "data-parallel ranks N_d must be a positive whole number"),
    (dict(ranks="many"), "data-parallel ranks N_d must be a positive whole number"),
    (dict(seq=0), "sequence length s must be a positive whole number"),
    (dict(batch="1.5"), "batch size b must be a positive whole number"),
    (dict(tensor_parallel=0), "tensor-parallel ranks t must be a positive whole number"),
    (dict(sequence_parallel="maybe"), "sequence_parallel must be true or false"),
    (dict(recompute="some"), "unknown recompute 'some'"),
    (dict(pipeline=2), "unknown memory option 'pipeline'"),
    (dict(dtype="gptq", optimizer="none", group_size=0), "the group size must be a positive whole number, not '0'"),
    (dict(dtype="gptq", optimizer="none", group_size="1.5"), "the group size must be a positive whole number"),
    (dict(dtype="awq", optimizer="none", keep="heads"), "unknown part 'heads' to keep"),
    (dict(dtype="q8_0", optimizer="none", keep=3), "keep takes part names separated by commas, not 3"),
    (dict(dtype="bf16", group_size=64), "group_size applies to a quantized --dtype"),
    (dict(dtype="fp8", optimizer="none", group_size=64), "group_size applies to gptq and awq, not fp8"),
    (dict(dtype="q4_k"), "q4_k weights are not trained here"),
])
def test_bad_settings_are_one_clear_line(kwargs, message):
    with pytest.raises(SymparamsError, match=message) as info:
        model("bert-base").memory(**kwargs)
    assert "\n" not in str(info.value)


def test_settings_given_as_text():
    mem = model("bert-base").memory("bf16", "adam", zero="3", ranks="4", seq="128", batch="2",
                                    tensor_parallel="2", sequence_parallel="true")
    assert (mem.zero, mem.ranks, mem.seq, mem.batch, mem.tensor_parallel, mem.sequence_parallel) == \
        (3, 4, 128, 2, 2, True)


def test_a_model_without_values_is_refused():
    with pytest.raises(SymparamsError, match="no value for"):
        _ = model("llama").memory().weights
    with pytest.raises(SymparamsError, match="no value for"):
        _ = model("llama").kv_cache().per_token


def test_kv_cache_class_directly():
    assert KVCache(tiny(), "fp32", seq=2, batch=3).total == TINY_CACHE * 4 * 2 * 3
    assert Memory(tiny(), "fp32", "none").weights == 4 * TINY_COUNT


# -- inverse questions -------------------------------------------------------------------------------

def test_longest_context_when_serving():
    m = tiny()  # bf16: 304 bytes of weights, 16 bytes per token
    assert longest_context(m, 304 + 16 * 10, optimizer="none") == 10
    assert longest_context(m, 304 + 16 * 10 + 15, optimizer="none") == 10
    assert longest_context(m, 304 + 16 * 10 - 1, optimizer="none") == 9
    assert longest_context(m, 304 + 16 * 10, optimizer="none", batch=2) == 5
    assert longest_context(m, 304 + 15, optimizer="none") is None


def test_longest_context_when_training():
    m = tiny()  # bf16 + Adam: 16·152 = 2432 bytes; activations 136·s + 10·s² (b = 1)
    budget = 2432 + 136 * 3 + 10 * 9  # 2930
    assert longest_context(m, budget) == 3
    assert longest_context(m, budget - 1) == 2
    assert longest_context(m, 2432 + 145) is None  # s = 1 needs 146


def test_largest_batch():
    m = tiny()
    assert largest_batch(m, 304 + 16 * 5 * 3, optimizer="none", seq=5) == 3
    assert largest_batch(m, 304 + 16 * 5 * 3 - 1, optimizer="none", seq=5) == 2
    # training, s = 3: b·498 bytes of activations
    assert largest_batch(m, 2432 + 498 * 7, seq=3) == 7


def test_longest_context_of_a_large_model():
    m = model("llama-3-8b")
    budget = 80 * 10**9
    s = longest_context(m, budget, optimizer="none", batch=4)
    # by hand: 7,504,924,672 weights (8,030,261,248 less the untied head's 128,256 · 4,096), 2 bytes each;
    # (80·10⁹ − 15,009,849,344) / (131,072 · 4) = 123,958.875
    assert s == (budget - 2 * 7_504_924_672) // (131_072 * 4) == 123_958


def test_inverse_questions_that_have_no_answer():
    with pytest.raises(SymparamsError, match="does not grow"):
        longest_context(model("bert-base"), 10**12, optimizer="none")
    with pytest.raises(SymparamsError, match="needs the sequence length"):
        largest_batch(tiny(), 10**6)
    with pytest.raises(SymparamsError, match="seq is what is solved for"):
        longest_context(tiny(), 10**6, seq=3)
    with pytest.raises(SymparamsError, match="memory budget"):
        longest_context(tiny(), -1)


def test_memory_json_names_the_model_and_the_bytes_per_parameter():
    # Rajbhandari et al. 2020 (ZeRO), section 3.1: mixed-precision Adam holds 2 + 2 + K = 12 bytes per parameter
    data = model("llama-3-8b").memory("bf16", "adam").to_dict()
    assert (data["model"], data["bytes_per_parameter"]) == ("llama-3-8b", {"weights": 2, "gradients": 2,
                                                                          "optimizer": 12})
