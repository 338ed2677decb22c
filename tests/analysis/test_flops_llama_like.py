"""FLOPs and KV cache of LLaMA and the llama-like families against tiny real models under PyTorch's counter.

LLaMA, Mistral, Qwen 2/3, Gemma 1/2/3, Cohere, OLMo 2, Phi-3, StarCoder 2,
StableLM and Phi: every head and the base model, built on the CPU with eager
attention and random weights, run under ``torch.utils.flop_counter.
FlopCounterMode``: ``m.flops(s, b).forward`` and ``.training`` must equal its
forward and forward + backward counts exactly, and the cache a forward pass
leaves (fp32: 4 bytes an element) must be ``4·s·b`` times
``cache_per_token``.

Tiny sizes: V = 97, H = 32, L = 2, A = 4 query heads, G = 2 key/value heads,
F = 48; a head width D = 12 of its own (≠ H/A = 8) where the family sets
one; s = 7 positions, b = 3 sequences.  Every sliding window is set to 16,
above s, so that each one is exercised and still keeps every key: eager
attention multiplies the full s × s square and masks it; only the cache of a
sliding layer would keep fewer than s tokens once s reaches the window.

The per-token values of real presets are written out by hand at the end.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from symparams import model
from symparams.analysis.cache import cache_per_token
from symparams.families.registry import family
from tests.reference import classic_decoders, decoders, llama_like
from tests.reference import flops as ref

pytestmark = pytest.mark.crosscheck

SEQ, BATCH = 7, 3
WINDOW = 16  # every sliding window, above SEQ
TINY = dict(V=97, H=32, L=2, A=4, G=2, F=48)
OWN_WIDTH = 12  # D, a head width other than H/A = 8
LABELLED = ("sequence-classification", "token-classification")

#: family → its tiny values and switches beyond TINY (grouped-query attention everywhere; the optional query/key
#: norms on, so they are run too)
SETTINGS = {
    "llama": ({}, {}),
    "mistral": ({}, {}),
    "qwen2": ({}, {}),
    "qwen3": ({"D": OWN_WIDTH}, {}),
    "gemma": ({"D": OWN_WIDTH}, {}),
    "gemma2": ({"D": OWN_WIDTH}, {}),
    "gemma3_text": ({"D": OWN_WIDTH}, {}),
    "cohere": ({}, {"qk_norm": True}),
    "olmo2": ({}, {}),
    "phi3": ({}, {}),
    "starcoder2": ({}, {}),
    "stablelm": ({}, {"gqa": True, "qk_layernorm": True}),
    "phi": ({"F": None, "r": Fraction(3, 2)}, {"gqa": True, "qk_layernorm": True}),
}

#: config keys that turn each family's sliding window on, at WINDOW
SLIDING = {
    "mistral": dict(sliding_window=WINDOW),
    "qwen2": dict(use_sliding_window=True, sliding_window=WINDOW, max_window_layers=0),
    "qwen3": dict(use_sliding_window=True, sliding_window=WINDOW, max_window_layers=0),
    "gemma2": dict(sliding_window=WINDOW),
    "gemma3_text": dict(sliding_window=WINDOW),
    "phi3": dict(sliding_window=WINDOW),
    "starcoder2": dict(sliding_window=WINDOW),
}


def tiny(name, head=None, values=None, switches=None):
    """The tiny symparams model of family ``name`` (C = 3 labels where the head reads them)."""
    extra_values, extra_switches = SETTINGS[name]
    v = {**TINY, **extra_values, **(values or {})}
    v = {k: x for k, x in v.items() if x is not None}
    if head in LABELLED:
        v["C"] = 3
    return model(name, head=head, **v, **{**extra_switches, **(switches or {})})


def real(m):
    """The tiny transformers model of ``m``: eager attention, a pad token (sequence classification needs one
    for a batch; the ids never hold it), the family's sliding window on at WINDOW."""
    name = m.family.name
    if name == "llama":
        cfg, cls = decoders.llama_config(m), decoders.llama.CLASSES[m.head][0]
    elif name == "phi":
        cfg, cls = classic_decoders.config(m), classic_decoders.MODULES["phi"].CLASSES[m.head][0]
    else:
        cfg, cls = llama_like.config(m, **SLIDING.get(name, {})), llama_like.FAMILIES[name][1][m.head][0]
    cfg.pad_token_id = 0
    if name in SLIDING:
        assert cfg.sliding_window >= WINDOW > SEQ  # (Gemma 3 may widen it, never narrow it)
    return ref.real(cls, cfg)


def ids():
    return ref.token_ids(TINY["V"], SEQ, BATCH)


def check_flops(m):
    module = real(m)
    forward, training = ref.counted(module, dict(input_ids=ids()))
    f = m.flops(s=SEQ, b=BATCH)
    assert (f.forward, f.training) == (forward, training)
    return module


def check_cache(m, module):
    own, cross = cache_per_token(m.tree)
    assert cross == 0
    assert ref.cache_bytes(module, dict(input_ids=ids())) == (4 * SEQ * BATCH * int(m.evaluate(own)), 0)


def _variants():
    for name in SETTINGS:
        for head in (None, *family(name).heads):
            yield name, head


# -- every family, every head, against the counter ------------------------------

@pytest.mark.parametrize("name,head", list(_variants()))
def test_flops_are_what_the_flop_counter_counts(name, head):
    m = tiny(name, head)
    module = check_flops(m)
    if head in (None, "causal-lm"):
        check_cache(m, module)


def test_every_family_and_head_is_checked():
    assert set(SETTINGS) == {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "cohere",
                             "olmo2", "phi3", "starcoder2", "stablelm", "phi"}
    assert len(list(_variants())) == 13 + sum(len(family(n).heads) for n in SETTINGS)


#: (family, values, switches) beyond SETTINGS, with the causal-LM head: biases, tying, multi-head attention,
#: a head width of H/A or of its own, the optional norms off, StableLM's parallel residual
SWITCHED = [
    ("llama", {}, {"attention_bias": True, "mlp_bias": True, "tie": True}),
    ("llama", {"G": None}, {"gqa": False}),
    ("llama", {"D": OWN_WIDTH}, {"free_head_dim": True}),
    ("mistral", {"D": OWN_WIDTH}, {"free_head_dim": True, "tie": True}),
    ("qwen2", {"G": None}, {"gqa": False, "tie": True}),
    ("qwen3", {"D": None}, {"free_head_dim": False, "attention_bias": True}),
    ("gemma", {"G": None, "D": None}, {"gqa": False, "free_head_dim": False}),
    ("gemma2", {"G": 1}, {"tie": False, "attention_bias": True}),
    ("gemma3_text", {"G": 1}, {"tie": False}),
    ("cohere", {}, {"qk_norm": False, "attention_bias": True}),
    ("cohere", {"G": None, "D": OWN_WIDTH}, {"gqa": False, "free_head_dim": True}),
    ("olmo2", {"G": None}, {"gqa": False, "attention_bias": True, "tie": True}),
    ("phi3", {"D": OWN_WIDTH}, {"free_head_dim": True}),
    ("starcoder2", {}, {"bias": False, "tie": False}),
    ("stablelm", {"G": None}, {"gqa": False, "qk_layernorm": True, "parallel_residual": True, "qkv_bias": True}),
    ("stablelm", {}, {"qk_layernorm": False, "tie": True}),
    ("phi", {"G": None}, {"gqa": False, "qk_layernorm": False, "tie": True}),
]


@pytest.mark.parametrize("name,values,switches", SWITCHED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(SWITCHED)])
def test_switches_keep_the_flops_and_the_cache_exact(name, values, switches):
    m = tiny(name, "causal-lm", values, switches)
    check_cache(m, check_flops(m))


@pytest.mark.parametrize("seq,batch", [(1, 1), (2, 5), (9, 1)])
def test_llama_like_flops_hold_for_other_shapes(seq, batch):
    for name in ("llama", "gemma2", "phi"):
        m = tiny(name, "causal-lm")
        module = real(m)
        inputs = dict(input_ids=ref.token_ids(TINY["V"], seq, batch))
        f = m.flops(s=seq, b=batch)
        assert (f.forward, f.training) == ref.counted(module, inputs)
        assert ref.cache_bytes(module, inputs)[0] == 4 * seq * batch * int(m.evaluate(cache_per_token(m.tree)[0]))


@pytest.mark.parametrize("name", list(SETTINGS))
def test_classification_heads_score_every_position(name):
    """``GenericForSequenceClassification`` scores every position and then picks the last one, and token
    classification and question answering score every position: each head costs 2·b·s·H·(outputs)."""
    base = tiny(name).flops(s=SEQ, b=BATCH).forward
    outputs = {"causal-lm": TINY["V"], "sequence-classification": 3, "token-classification": 3,
               "question-answering": 2}
    for head in family(name).heads:
        m = tiny(name, head)
        assert not any(b.per_sequence for _, b, _, _ in m.tree.runs())
        assert m.flops(s=SEQ, b=BATCH).forward - base == 2 * BATCH * SEQ * TINY["H"] * outputs[head]


# -- real presets, by hand ---------------------------------------------------------

S = 2048  # the context of the hand-written values


def per_token(name, head="causal-lm", s=S):
    f = model(name, head=head).flops(s=s, b=2)
    assert f.training == 3 * f.forward  # every product's backward costs twice its forward
    return Fraction(f.forward, f.tokens)


def cache(name):
    m = model(name)
    return m.evaluate(cache_per_token(m.tree)[0])


def gated_layer(H, A, G, D, F, bias=0):
    """Weights one position multiplies in one LLaMA-style layer: Q (H → A·D), K and V (H → G·D), O (A·D → H),
    gate, up (H → F), down (F → H); biases are added, not multiplied."""
    return H * A * D + 2 * H * G * D + A * D * H + 3 * H * F


def attention(L, A, D, s=S):
    """Per position: each of A heads takes s scores of width D and sums s values of width D (2 FLOPs each)."""
    return L * (2 * A * s * D + 2 * A * s * D)


def test_llama_3_8b_by_hand():
    H, L, A, G, F, V = 4096, 32, 32, 8, 14336, 128256
    assert per_token("llama-3-8b") == 2 * (L * gated_layer(H, A, G, 128, F) + H * V) + attention(L, A, 128)
    # the published 8,030,261,248 less the token table and the 2L + 1 RMSNorms, which multiply no matrix
    assert per_token("llama-3-8b") == 2 * (8_030_261_248 - 128256 * 4096 - 65 * 4096) + 32 * 4 * 4096 * 2048
    assert cache("llama-3-8b") == 2 * 32 * 8 * 128  # K and V of 8 heads of 128, 32 layers: 128 KiB in bf16


def test_llama_2_7b_by_hand():
    # every weight but the token table and the 2L + 1 RMSNorms is multiplied
    multiplied = 6_738_415_616 - 32000 * 4096 - 65 * 4096
    assert per_token("llama-2-7b") == 2 * multiplied + 4 * 32 * 4096 * S
    assert per_token("llama-2-7b", head=None) == 2 * (multiplied - 32000 * 4096) + 4 * 32 * 4096 * S
    assert cache("llama-2-7b") == 2 * 32 * 4096  # 512 KiB a token in fp16


def test_mistral_7b_by_hand():
    H, L, A, G, F, V = 4096, 32, 32, 8, 14336, 32000
    assert per_token("mistral-7b") == 2 * (L * gated_layer(H, A, G, 128, F) + H * V) + attention(L, A, 128)
    assert cache("mistral-7b") == 2 * 32 * 8 * 128


def test_qwen_2_5_by_hand():
    # Qwen2.5-0.5B: 14 heads of 64, 2 key/value heads; the tied head still multiplies H·V; q/k/v biases cost nothing
    H, L, A, G, F, V = 896, 24, 14, 2, 4864, 151936
    assert per_token("qwen2.5-0.5b") == 2 * (L * gated_layer(H, A, G, 64, F) + H * V) + attention(L, A, 64)
    assert cache("qwen2.5-0.5b") == 2 * 24 * 2 * 64
    H, L, A, G, F, V = 3584, 28, 28, 4, 18944, 152064
    assert per_token("qwen2.5-7b") == 2 * (L * gated_layer(H, A, G, 128, F) + H * V) + attention(L, A, 128)


def test_qwen3_0_6b_by_hand():
    # 16 heads of 128: A·D = 2048 = 2H, so attention is twice as wide as the hidden state
    H, L, A, G, D, F, V = 1024, 28, 16, 8, 128, 3072, 151936
    assert per_token("qwen3-0.6b") == 2 * (L * gated_layer(H, A, G, D, F) + H * V) + attention(L, A, D)
    assert per_token("qwen3-0.6b") == 2 * (L * (2 * 1024 * 2048 + 2 * 1024 * 1024 + 3 * 1024 * 3072)
                                           + 1024 * 151936) + 28 * 4 * 2048 * S
    assert cache("qwen3-0.6b") == 2 * 28 * 8 * 128


def test_gemma_by_hand():
    # Gemma 7B: 16 heads of 256 (A·D = 4096 > H = 3072), multi-head; its tied head multiplies H·V
    H, L, A, D, F, V = 3072, 28, 16, 256, 24576, 256000
    assert per_token("gemma-7b") == 2 * (L * gated_layer(H, A, A, D, F) + H * V) + attention(L, A, D)
    assert cache("gemma-7b") == 2 * 28 * 16 * 256
    # Gemma 2B: multi-query (one key/value head of 256)
    H, L, A, F, V = 2048, 18, 8, 16384, 256000
    assert per_token("gemma-2b") == 2 * (L * gated_layer(H, A, 1, 256, F) + H * V) + attention(L, A, 256)
    assert cache("gemma-2b") == 2 * 18 * 256


def test_gemma_2_and_3_by_hand():
    # attention over all s positions in every layer: s = 2048 is below the 4096-token sliding window
    H, L, A, G, D, F, V = 3584, 42, 16, 8, 256, 14336, 256000
    assert per_token("gemma-2-9b") == 2 * (L * gated_layer(H, A, G, D, F) + H * V) + attention(L, A, D)
    assert cache("gemma-2-9b") == 2 * 42 * 8 * 256
    H, L, A, G, D, F, V = 1152, 26, 4, 1, 256, 6912, 262144
    assert per_token("gemma-3-1b", s=512) == (2 * (L * gated_layer(H, A, G, D, F) + H * V)
                                              + attention(L, A, D, s=512))
    assert cache("gemma-3-1b") == 2 * 26 * 256


def test_command_r_plus_by_hand():
    # attention and MLP side by side change no product; the q/k norms and the logit scale multiply no matrix
    H, L, A, G, F, V = 12288, 64, 96, 8, 33792, 256000
    assert per_token("command-r-plus") == 2 * (L * gated_layer(H, A, G, 128, F) + H * V) + attention(L, A, 128)
    assert cache("command-r-plus") == 2 * 64 * 8 * 128


def test_olmo_2_7b_by_hand():
    H, L, A, F, V = 4096, 32, 32, 11008, 100352
    assert per_token("olmo-2-7b") == 2 * (L * gated_layer(H, A, A, 128, F) + H * V) + attention(L, A, 128)
    assert cache("olmo-2-7b") == 2 * 32 * 4096


def test_phi_3_mini_by_hand():
    # the fused qkv_proj (H → 3H) and gate_up_proj (H → 2F) multiply what the separate matrices would
    H, L, F, V = 3072, 32, 8192, 32064
    assert per_token("phi-3-mini") == 2 * (L * (3 * H * H + H * H + 2 * H * F + F * H) + H * V) + 32 * 4 * H * S
    assert cache("phi-3-mini") == 2 * 32 * 3072


def test_starcoder2_3b_by_hand():
    # an MLP without a gate: c_fc (H → F) and c_proj (F → H); 24 heads of 128, 2 key/value heads
    H, L, A, G, D, F, V = 3072, 30, 24, 2, 128, 12288, 49152
    layer = H * A * D + 2 * H * G * D + A * D * H + 2 * H * F
    assert per_token("starcoder2-3b") == 2 * (L * layer + H * V) + attention(L, A, D)
    assert cache("starcoder2-3b") == 2 * 30 * 2 * 128


def test_stablelm_by_hand():
    # partial rotary positions rotate a quarter of each head: element-wise, no product
    H, L, A, F, V = 2560, 32, 32, 6912, 50304
    assert per_token("stablelm-3b-4e1t") == 2 * (L * gated_layer(H, A, A, 80, F) + H * V) + attention(L, A, 80)
    H, L, A, F, V = 2048, 24, 32, 5632, 100352
    assert per_token("stablelm-2-1.6b") == 2 * (L * gated_layer(H, A, A, 64, F) + H * V) + attention(L, A, 64)
    assert cache("stablelm-2-1.6b") == 2 * 24 * 2048


def test_phi_2_by_hand():
    # Q, K, V, dense: 4·H²; fc1, fc2: 2·4H·H; the LM head's bias is added, not multiplied
    H, L, V = 2560, 32, 51200
    assert per_token("phi-2") == 2 * (L * (4 * H * H + 8 * H * H) + H * V) + 32 * 4 * H * S
    # the published 2,779,683,840 less the token table, the LM head's bias, and per layer the biases of q, k, v,
    # dense (4H), fc1 (4H), fc2 (H) and the LayerNorm (2H), and the final LayerNorm (2H)
    multiplied = 2_779_683_840 - 51200 * 2560 - 51200 - 32 * 11 * 2560 - 2 * 2560
    assert per_token("phi-2") == 2 * multiplied + 32 * 4 * 2560 * S
    assert cache("phi-2") == 2 * 32 * 2560
