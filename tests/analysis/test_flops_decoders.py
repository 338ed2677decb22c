"""FLOPs and KV cache of the decoder-only families (GPT-2, GPT-NeoX, GPT-J, OPT, BLOOM, Falcon) and the
mixtures of experts (Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V3, DeepSeek-V2) against PyTorch's
FlopCounterMode on tiny real transformers models.

Every family with every head (and the base model), and every switch that changes what is multiplied, is
built on the CPU with eager attention, eager experts and random weights; the forward pass and the forward +
backward pass are counted by ``torch.utils.flop_counter.FlopCounterMode`` and must equal
``m.flops(s, b)`` exactly, and a forward pass with ``use_cache=True`` must leave exactly the bytes
:func:`~symparams.analysis.cache.cache_per_token` says (fp32: 4 bytes an element) — except where the
architecture needs less than transformers keeps (Falcon's new decoder architecture, below).

Sizes are tiny (V = 100, H = 32, two or three layers); the FLOPs are counted at two lengths and two batch
sizes (s = 7, b = 3 and s = 12, b = 1), so that a term in s² cannot pass for one in s, nor one in b for a
constant.  Nothing here has a sliding window or
local attention (Mixtral's ``sliding_window`` is None, the Qwen MoE configs have ``use_sliding_window``
false).  The sequence-classification heads score every position and pick each sequence's last
non-padding one; with b > 1 transformers wants a ``pad_token_id``, set to 0 here (the random ids start at
3, so no position is padding).  Eager experts loop over the experts that got tokens, each multiplying its
tokens only, so the routed experts cost 2·b·s·k_e·(one expert's weights): the sum of the tokens the experts
see is b·s·k_e, whichever they are.

GPT-2's cross-attention runs only when ``encoder_hidden_states`` are given: here s positions of width H (our
convention: the encoder has as many positions as the decoder), with ``requires_grad`` as they have when an
encoder computes them (states that need no gradient would spare the backward pass the gradient of
``crossattention.c_attn``'s input, 2·b·s·H·2H per layer).

The last tests write a few presets' FLOPs and caches by hand, from their sizes.
"""

import pytest
import sympy as sp
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

from symparams import model
from symparams.analysis.cache import cache_per_token
from symparams.core.symbols import A, D, D_n, D_r, D_v, G, H, L, R_kv
from symparams.families import gpt2
from symparams.families.registry import family
from tests.reference import classic_decoders, moe
from tests.reference import flops as ref
from tests.reference.decoders import gpt2_config

pytestmark = pytest.mark.crosscheck

#: (s, b) of the FLOPs comparisons (the second of the forward pass alone); the caches are compared at the first
RUNS = ((7, 3), (12, 1))
SEQ, BATCH = RUNS[0]

_GQA = dict(V=100, H=32, L=2, A=4, G=2)
_MLA = dict(V=100, H=32, L=3, A=4, F_e=24, N_e=4, k_e=2, R_kv=10, D_n=6, D_r=4, D_v=5)

#: name → (family, values, switches, extra config keys): the first case of a family runs with every head,
#: the others (switches) with the base model and the causal-LM head
CASES = {
    "gpt2": ("gpt2", dict(V=100, P=40, H=32, L=2, A=4, r=2), {}, {}),
    "gpt2-untied": ("gpt2", dict(V=100, P=40, H=32, L=2, A=4, r=3), {"tie": False}, {}),
    "gpt2-cross": ("gpt2", dict(V=100, P=40, H=32, L=2, A=4, r=2), {"cross_attention": True}, {}),
    "gpt_neox": ("gpt_neox", dict(V=100, H=32, L=2, A=4, r=2), {}, {}),
    "gpt_neox-nobias-tied": ("gpt_neox", dict(V=100, H=32, L=2, A=2, r=3), {"attention_bias": False, "tie": True},
                             {}),
    "gptj": ("gptj", dict(V=100, H=32, L=2, A=4, r=2), {}, {}),
    "opt": ("opt", dict(V=100, P=40, H=32, L=2, A=4, r=2), {}, {}),
    "opt-project": ("opt", dict(V=100, P=40, H=32, L=2, A=4, r=2, E=16), {"project": True, "final_norm": False,
                                                                           "bias": False}, {}),
    "bloom": ("bloom", dict(V=100, H=32, L=2, A=4), {}, {}),
    "falcon": ("falcon", dict(V=100, H=32, L=2, A=4, r=2), {}, {}),  # multi-query, parallel attention
    "falcon-mha-sequential": ("falcon", dict(V=100, H=32, L=2, A=4, r=2),
                              {"multi_query": False, "parallel_attn": False, "bias": True}, {}),
    "falcon-new": ("falcon", dict(V=100, H=32, L=2, A=4, G=2, r=2), {"new_decoder_architecture": True}, {}),
    "falcon-new-one-norm": ("falcon", dict(V=100, H=32, L=2, A=4, G=1, r=3),
                            {"new_decoder_architecture": True, "num_ln_in_parallel_attn": "1"}, {}),
    "falcon-alibi": ("falcon", dict(V=100, H=32, L=2, A=4, r=2), {}, {"alibi": True}),  # ALiBi: no rotary
    "mixtral": ("mixtral", dict(**_GQA, F_e=24, N_e=4, k_e=2), {}, {}),
    "mixtral-mha-top1": ("mixtral", dict(V=100, H=32, L=2, A=4, F_e=24, N_e=3, k_e=1), {"gqa": False}, {}),
    "qwen2_moe": ("qwen2_moe", dict(**_GQA, F_e=24, N_e=4, k_e=2, F_s=40), {}, {}),
    "qwen2_moe-dense": ("qwen2_moe", dict(**{**_GQA, "L": 3}, L_f=1, F=36, F_e=24, N_e=4, k_e=3, F_s=40),
                        {"dense_layers": True, "qkv_bias": False}, {}),
    "qwen3_moe": ("qwen3_moe", dict(**_GQA, F_e=24, N_e=4, k_e=2), {}, {}),
    "qwen3_moe-head-dim-dense": ("qwen3_moe", dict(**{**_GQA, "L": 3}, D=12, L_f=1, F=36, F_e=24, N_e=5, k_e=2),
                                 {"free_head_dim": True, "dense_layers": True, "attention_bias": True}, {}),
    "deepseek_v3": ("deepseek_v3", dict(**_MLA, L_f=1, F=36, N_s=1, R_q=12), {}, {}),
    "deepseek_v3-no-q-lora": ("deepseek_v3", dict(**_MLA, N_s=2), {"q_lora": False, "dense_layers": False,
                                                                   "attention_bias": True, "tie": True}, {}),
    "deepseek_v2": ("deepseek_v2", dict(**_MLA, L_f=1, F=36, N_s=2), {"q_lora": False}, {}),
    "deepseek_v2-q-lora": ("deepseek_v2", dict(**_MLA, N_s=1, R_q=12), {"dense_layers": False, "mlp_bias": True},
                           {}),
}


def _params():
    seen = set()
    for name, (fam, *_) in CASES.items():
        heads = (None, *family(fam).heads) if fam not in seen else (None, "causal-lm")
        seen.add(fam)
        for head in heads:
            yield pytest.param(name, head, id=f"{name}-{head or 'base'}")


def real(m, extra, seq=SEQ, batch=BATCH):
    """The tiny transformers module of ``m`` (eager attention and experts) and its inputs of ``batch`` sequences of
    ``seq`` tokens."""
    fam = m.family.name
    if fam == "gpt2":
        cls, config = gpt2.CLASSES[m.head], gpt2_config(m)
    elif fam in classic_decoders.MODULES:
        cls, config = classic_decoders.MODULES[fam].CLASSES[m.head][0], classic_decoders.config(m)
    else:
        classes, make = moe.CONFIGS[fam]
        cls, config = classes[m.head][0], make(m)
    for key, value in extra.items():
        setattr(config, key, value)
    if m.head == "sequence-classification":
        config.pad_token_id = 0  # b > 1 needs one; no random id is 0
    module = ref.real(cls, config)
    return module, inputs_of(m, config, seq, batch)


def inputs_of(m, config, seq, batch):
    inputs = dict(input_ids=ref.token_ids(config.vocab_size, seq, batch))
    if m.switches.get("cross_attention"):
        generator = torch.Generator().manual_seed(2)
        inputs["encoder_hidden_states"] = torch.randn(batch, seq, config.hidden_size, generator=generator,
                                                      requires_grad=True)
    return inputs


def tiny(name, head):
    fam, values, switches, extra = CASES[name]
    return model(fam, head=head, **values, **switches), extra


@pytest.mark.parametrize("name, head", list(_params()))
def test_flops_equal_flop_counter(name, head):
    m, extra = tiny(name, head)
    module, _ = real(m, extra)
    (seq, batch), (seq_2, batch_2) = RUNS
    forward, training = ref.counted(module, inputs_of(m, module.config, seq, batch))
    f = m.flops(s=seq, b=batch)
    assert (f.forward, f.training) == (forward, training), f.by_kind
    assert f.training == 3 * f.forward  # every term multiplies two tensors that both need gradients
    forward = ref.forward_counted(module, inputs_of(m, module.config, seq_2, batch_2))
    assert m.flops(s=seq_2, b=batch_2).forward == forward  # the forward pass alone: training is 3 × it


@pytest.mark.parametrize("name", ["mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v3", "deepseek_v2"])
def test_the_experts_are_built_eager(name):
    module, _ = real(*tiny(name, "causal-lm"))
    assert module.config._experts_implementation == "eager"
    assert module.config._attn_implementation == "eager"


def test_grouped_mm_experts_leave_the_counter_nothing_to_count():
    # why the tests build eager experts: transformers' default grouped_mm experts run aten._grouped_mm, which
    # torch 2.13's FlopCounterMode has no formula for; by hand the tiny Mixtral's experts are
    # L = 2 layers × 21 tokens × k_e = 2 experts × 3·H·F_e = 3·32·24 multiply-adds, 2 FLOPs each
    m, _ = tiny("mixtral", "causal-lm")
    config = moe.mixtral_config(m)
    config._attn_implementation = "eager"  # the experts keep transformers' default
    module = transformers.MixtralForCausalLM(config)
    assert module.config._experts_implementation != "eager"
    with FlopCounterMode(display=False) as counter:
        module(input_ids=ref.token_ids(config.vocab_size, SEQ, BATCH), use_cache=False)
    experts = 2 * SEQ * BATCH * 2 * 3 * 32 * 24 * 2
    assert experts == 387_072
    assert counter.get_total_flops() == m.flops(s=SEQ, b=BATCH).forward - experts


#: the cases whose cache transformers stores as the architecture needs it
CACHED_AS_DECLARED = [n for n in CASES if n not in ("falcon-new", "falcon-new-one-norm")]


@pytest.mark.parametrize("name", CACHED_AS_DECLARED)
def test_cache_equals_what_transformers_keeps(name):
    m, extra = tiny(name, None)
    module, inputs = real(m, extra)
    own, cross = cache_per_token(m.tree)
    expected = tuple(4 * SEQ * BATCH * int(m.evaluate(e)) for e in (own, cross))
    assert ref.cache_bytes(module, inputs) == expected
    assert (cross != 0) == (name == "gpt2-cross")


@pytest.mark.parametrize("name", ["falcon-new", "falcon-new-one-norm"])
def test_falcon_new_architecture_caches_its_key_value_heads_and_transformers_all_heads(name):
    """Falcon's new decoder architecture has G key/value heads; we declare what it needs, 2·G·H/A per token
    and layer.  transformers' ``FalconAttention._split_heads`` broadcasts them to the A query heads before
    the cache's update, so its cache holds 2·A·(H/A) = 2H per token and layer, A/G times more."""
    m, extra = tiny(name, None)
    module, inputs = real(m, extra)
    v = {str(k): int(x) for k, x in m.values.items()}
    assert cache_per_token(m.tree) == (sp.expand(2 * G * H * L / A), 0)
    assert m.evaluate(cache_per_token(m.tree)[0]) == 2 * v["G"] * (v["H"] // v["A"]) * v["L"]
    transformers_kept = 2 * v["A"] * (v["H"] // v["A"]) * v["L"]  # by hand: A heads of K and V
    assert ref.cache_bytes(module, inputs) == (4 * SEQ * BATCH * transformers_kept, 0)


def test_deepseek_caches_the_compressed_latent_not_the_heads():
    """MLA needs, per token and layer, its normalised latent (R_kv) and the rotary key features (D_r) shared
    by all heads; decompressed, the keys and values would be A·(D_n + D_r) + A·D_v.  transformers 5 caches
    the latent (``cache.update(kv_nope, k_rot)`` before ``expand_kv``) — earlier versions cached the
    decompressed keys and values — so its cache equals our declaration, and is not the decompressed size."""
    for name in ("deepseek_v3", "deepseek_v2"):
        m, extra = tiny(name, None)
        module, inputs = real(m, extra)
        assert cache_per_token(m.tree) == (sp.expand(L * (R_kv + D_r)), 0)
        v = {str(k): int(x) for k, x in m.values.items()}
        latent = v["L"] * (v["R_kv"] + v["D_r"])
        decompressed = v["L"] * (v["A"] * (v["D_n"] + v["D_r"]) + v["A"] * v["D_v"])
        kept, _ = ref.cache_bytes(module, inputs)
        assert kept == 4 * SEQ * BATCH * latent != 4 * SEQ * BATCH * decompressed


# -- the symbolic caches --------------------------------------------------------------------------

@pytest.mark.parametrize("fam, switches, expected", [
    ("gpt2", {}, (2 * H * L, 0)),
    ("gpt2", {"cross_attention": True}, (2 * H * L, 2 * H * L)),
    ("gpt_neox", {}, (2 * H * L, 0)),
    ("gptj", {}, (2 * H * L, 0)),
    ("opt", {}, (2 * H * L, 0)),
    ("bloom", {}, (2 * H * L, 0)),
    ("falcon", {}, (2 * H * L / A, 0)),  # multi-query: one key/value head
    ("falcon", {"multi_query": False}, (2 * H * L, 0)),
    ("falcon", {"new_decoder_architecture": True}, (2 * G * H * L / A, 0)),
    ("mixtral", {}, (2 * G * H * L / A, 0)),
    ("qwen3_moe", {"free_head_dim": True}, (2 * G * D * L, 0)),
    ("deepseek_v3", {}, (L * (R_kv + D_r), 0)),  # the first L_f dense layers cache as the others do
    ("deepseek_v2", {"dense_layers": False}, (L * (R_kv + D_r), 0)),
])
def test_cache_per_token_formulas(fam, switches, expected):
    assert cache_per_token(model(fam, **switches).tree) == tuple(sp.expand(e) for e in expected)


def test_mla_attention_is_as_wide_as_its_query_key_and_value_heads():
    (attention,) = model("deepseek_v3").tree.find("decoder.layers.self_attn").computes
    assert (attention.heads, attention.key_width, attention.value_width) == (A, D_n + D_r, D_v)


# -- presets by hand --------------------------------------------------------------------------------
# Forward FLOPs: 2 per weight a position multiplies (routed experts: the k_e it is sent to; a tied head still
# multiplies), plus per layer the scores Q·Kᵀ and the weighted sum over the full s × s square,
# 2·b·A·s²·(key width + value width).  Training is three times that.

def test_gpt2_small_by_hand():
    V, H_, L_, s, b = 50257, 768, 12, 1024, 2
    layer = 3 * H_**2 + H_**2 + 2 * 4 * H_**2  # c_attn, c_proj, c_fc and the MLP's c_proj
    f = model("gpt2", head="causal-lm").flops(s=s, b=b)
    assert f.forward == 2 * b * s * (L_ * layer + H_ * V) + L_ * 2 * b * s * s * 2 * H_
    assert f.training == 3 * f.forward
    assert model("gpt2").evaluate(cache_per_token(model("gpt2").tree)[0]) == 2 * 768 * 12  # 18,432 per token


def test_gpt2_with_cross_attention_by_hand():
    V, H_, L_, s = 50257, 768, 12, 256
    layer = 12 * H_**2 + 4 * H_**2  # the cross-attention's q_attn, c_attn (K and V) and c_proj
    m = model("gpt2", head="causal-lm", cross_attention=True)
    assert m.flops(s=s).forward == 2 * s * (L_ * layer + H_ * V) + L_ * 2 * (2 * s * s * 2 * H_)


def test_classic_decoders_by_hand():
    s = 2048
    V, H_, L_ = 50304, 768, 12  # Pythia-160M: 12H² per layer, an untied head
    assert model("pythia-160m", head="causal-lm").flops(s=s).forward == \
        2 * s * (L_ * 12 * H_**2 + H_ * V) + L_ * 4 * s * s * H_
    V, H_, L_ = 50400, 4096, 28  # GPT-J-6B: the same shapes (the head's bias is no matmul)
    assert model("gpt-j-6b", head="causal-lm").flops(s=s).forward == \
        2 * s * (L_ * 12 * H_**2 + H_ * V) + L_ * 4 * s * s * H_
    V, H_, L_, E = 50272, 1024, 24, 512  # OPT-350M: project_in, project_out, the head on E
    assert model("opt-350m", head="causal-lm").flops(s=s).forward == \
        2 * s * (L_ * 12 * H_**2 + 2 * E * H_ + E * V) + L_ * 4 * s * s * H_
    V, H_, L_ = 250880, 1024, 24  # BLOOM-560M: the scores are ALiBi's baddbmm, counted as a bmm
    assert model("bloom-560m", head="causal-lm").flops(s=s).forward == \
        2 * s * (L_ * 12 * H_**2 + H_ * V) + L_ * 4 * s * s * H_


def test_falcon_by_hand():
    s = 2048
    V, H_, L_, A_ = 65024, 4544, 32, 71  # Falcon-7B: one key/value head of width 64
    qkv = H_ * (H_ + 2 * 64)
    m = model("falcon-7b", head="causal-lm")
    assert m.flops(s=s).forward == 2 * s * (L_ * (qkv + H_**2 + 8 * H_**2) + H_ * V) + L_ * 4 * s * s * H_
    assert m.evaluate(cache_per_token(m.tree)[0]) == 32 * 2 * 64  # 4,096 elements per token
    V, H_, L_, A_, G_ = 65024, 8192, 60, 128, 8  # Falcon-40B: 8 key/value heads of width 64
    m = model("falcon-40b", head="causal-lm")
    qkv = H_ * (A_ + 2 * G_) * 64
    assert m.flops(s=s).forward == 2 * s * (L_ * (qkv + H_**2 + 8 * H_**2) + H_ * V) + L_ * 4 * s * s * H_
    assert m.evaluate(cache_per_token(m.tree)[0]) == 60 * 2 * 8 * 64  # 61,440 (transformers keeps 983,040)


def test_mixtral_by_hand():
    V, H_, L_, G_, F_e, N_e, k_e, s = 32000, 4096, 32, 8, 14336, 8, 2, 4096
    attention = 2 * H_**2 + 2 * G_ * 128 * H_  # q, o; k, v with 8 heads of 128
    layer = attention + N_e * H_ + k_e * 3 * F_e * H_  # the router scores all 8 experts, 2 of them run
    m = model("mixtral-8x7b", head="causal-lm")
    assert m.flops(s=s).forward == 2 * s * (L_ * layer + H_ * V) + L_ * 4 * s * s * H_
    assert m.evaluate(cache_per_token(m.tree)[0]) == 32 * 2 * 8 * 128  # 65,536 per token


def test_qwen_moe_by_hand():
    s = 4096
    V, H_, L_, N_e, k_e, F_e, F_s = 151936, 2048, 24, 60, 4, 1408, 5632  # Qwen1.5-MoE-A2.7B
    layer = 4 * H_**2 + N_e * H_ + k_e * 3 * F_e * H_ + 3 * F_s * H_ + H_  # ... the shared expert and its gate
    assert model("qwen1.5-moe-a2.7b", head="causal-lm").flops(s=s).forward == \
        2 * s * (L_ * layer + H_ * V) + L_ * 4 * s * s * H_
    V, H_, L_, A_, G_, D_, N_e, k_e, F_e = 151936, 2048, 48, 32, 4, 128, 128, 8, 768  # Qwen3-30B-A3B
    layer = 2 * A_ * D_ * H_ + 2 * G_ * D_ * H_ + N_e * H_ + k_e * 3 * F_e * H_  # heads 128 wide: A·D ≠ H
    m = model("qwen3-30b-a3b", head="causal-lm")
    assert m.flops(s=s).forward == 2 * s * (L_ * layer + H_ * V) + L_ * 2 * s * s * A_ * 2 * D_
    assert m.evaluate(cache_per_token(m.tree)[0]) == 48 * 2 * 4 * 128  # 49,152 per token


def test_deepseek_by_hand():
    s = 4096
    V, H_, L_, L_f, A_, F, F_e, N_e, k_e, N_s = 129280, 7168, 61, 3, 128, 18432, 2048, 256, 8, 1  # DeepSeek-V3
    R_q, R_kv_, D_n_, D_r_, D_v_ = 1536, 512, 128, 64, 128
    mla = (H_ * R_q + R_q * A_ * (D_n_ + D_r_) + H_ * (R_kv_ + D_r_) + R_kv_ * A_ * (D_n_ + D_v_)
           + A_ * D_v_ * H_)
    dense = 3 * H_ * F
    experts = N_e * H_ + (k_e + N_s) * 3 * F_e * H_  # the router, the 8 routed experts and the shared one
    scores = 2 * s * s * A_ * (D_n_ + D_r_ + D_v_)
    m = model("deepseek-v3", head="causal-lm")
    assert m.flops(s=s).forward == \
        2 * s * (L_ * mla + L_f * dense + (L_ - L_f) * experts + H_ * V) + L_ * scores
    assert m.evaluate(cache_per_token(m.tree)[0]) == 61 * (512 + 64)  # 35,136 per token
    V, H_, L_, L_f, A_, F, F_e, N_e, k_e, N_s = 102400, 2048, 27, 1, 16, 10944, 1408, 64, 6, 2  # V2-Lite
    mla = H_ * A_ * (D_n_ + D_r_) + H_ * (R_kv_ + D_r_) + R_kv_ * A_ * (D_n_ + D_v_) + A_ * D_v_ * H_  # q_proj
    experts = N_e * H_ + (k_e + N_s) * 3 * F_e * H_
    m = model("deepseek-v2-lite", head="causal-lm")
    assert m.flops(s=s).forward == 2 * s * (L_ * mla + L_f * 3 * H_ * F + (L_ - L_f) * experts + H_ * V) + \
        L_ * 2 * s * s * A_ * (D_n_ + D_r_ + D_v_)
