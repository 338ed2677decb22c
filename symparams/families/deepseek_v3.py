"""DeepSeek-V3 and DeepSeek-V2: multi-head latent attention (MLA) and routed plus shared experts.

``DeepseekV3Model`` (and ``DeepseekV2Model``, the same modules): ``embed_tokens``,
L decoder layers ``layers.*`` (RMSNorm → MLA → RMSNorm → MLP), the final
``norm``.  The first L_f layers (``first_k_dense_replace``) have a plain
SwiGLU MLP of width F; the other L - L_f a mixture of experts: N_e routed
experts of width F_e (fused ``experts.gate_up_proj``, ``experts.down_proj``;
a token uses k_e of them), the router ``gate`` (N_e·H; V3's
``e_score_correction_bias`` is a buffer, not a parameter) and
``shared_experts``, N_s experts fused into one SwiGLU of width N_s·F_e that
every token uses.

MLA compresses before it splits into heads.  The query goes H → R_q
(``q_a_proj``, RMSNorm ``q_a_layernorm``) → A heads of D_n + D_r
(``q_b_proj``), or straight H → A·(D_n + D_r) (``q_proj``) with
``q_lora=false``.  Keys and values share one latent: ``kv_a_proj_with_mqa``
maps H to R_kv plus D_r rotary key features shared by all heads, RMSNorm
``kv_a_layernorm``, then ``kv_b_proj`` gives A heads of D_n key and D_v value
features; ``o_proj`` maps A·D_v back to H.  No head width is H/A, so the count
grows with A: ``A·((R_q + R_kv)·D_n + R_q·D_r + R_kv·D_v + D_v·H)`` per layer.

>>> from symparams import model
>>> m = model("deepseek-v3", head="causal-lm")
>>> m.count, m.active  # 671B, 37B activated, as the technical report says
(671026404352, 37552282624)
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import group, linear, per_head_linear, product_as_written, rms_norm
from ..core.compute import Attention
from ..core.errors import SymparamsError
from ..core.family import HEAD_DIM, Family, Preset, Switch
from ..core.symbols import A, C, D_n, D_r, D_v, F_e, H, N_s, R_kv, R_q
from . import llama
from .moe_parts import (
    DENSE_LAYERS,
    SOME_MOE_LAYER,
    TOP_K,
    decoder_model,
    experts,
    experts_from_config,
    layers,
    router,
    swiglu,
)

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("DeepseekV3Model", None),
    "causal-lm": ("DeepseekV3ForCausalLM", "model."),
    "sequence-classification": ("DeepseekV3ForSequenceClassification", "model."),
    "token-classification": ("DeepseekV3ForTokenClassification", "model."),
}

CLASSES_V2 = {
    None: ("DeepseekV2Model", None),
    "causal-lm": ("DeepseekV2ForCausalLM", "model."),
    "sequence-classification": ("DeepseekV2ForSequenceClassification", "model."),
}


def query(switches):
    """The query's projections: compressed to rank R_q and expanded per head (``q_lora``), else one q_proj."""
    width = D_n + D_r  # per head: D_n features without rotary positions, D_r with them
    if not switches["q_lora"]:
        return [per_head_linear("q_proj", H, A, width, bias=False, title="query")]
    return [linear("q_a_proj", H, R_q, bias=switches["attention_bias"], title="query_compression"),
            rms_norm("q_a_layernorm", R_q),
            per_head_linear("q_b_proj", R_q, A, width, bias=False, title="query_expansion")]


def attention(switches):
    """MLA, ``self_attn``.  Eager attention multiplies A heads: queries and keys D_n + D_r wide (the D_r rotary
    key features are one per token, shared by every head), values D_v wide.  The cache keeps what MLA needs
    to rebuild them, the normalised latent (R_kv) and the rotary key features (D_r) of each token, as
    transformers (5) caches them: ``kv_b_proj`` expands the cached latent again at every step, which costs
    FLOPs in generation, not elements."""
    bias = switches["attention_bias"]
    return group("self_attn", [
        *query(switches),
        linear("kv_a_proj_with_mqa", H, R_kv + D_r, bias=bias, title="kv_compression"),
        rms_norm("kv_a_layernorm", R_kv),
        per_head_linear("kv_b_proj", R_kv, A, D_n + D_v, bias=False, title="kv_expansion"),
        linear("o_proj", product_as_written(A, D_v), H, bias=bias, title="latent_attention_output"),
    ], title="latent_attention", computes=(Attention(A, D_n + D_r, D_v, cache=R_kv + D_r, causal=True),))


def moe(switches):
    shared = swiglu("shared_experts", product_as_written(N_s, F_e), bias=switches.get("mlp_bias", False),
                    title="shared_experts")
    return group("mlp", [experts(), router(), shared], title="shared_moe")


def build(switches, head, name="deepseek_v3"):
    stack = layers(lambda runs: attention(switches), lambda: moe(switches),
                   lambda: llama.mlp(switches.get("mlp_bias", False)), dense=switches["dense_layers"])
    return decoder_model(name, stack, llama.head_block(head, switches))


def _values(cfg, defaults: dict) -> tuple[dict, dict]:
    """What a DeepSeek config holds, ``defaults`` those of its config class (the keys as in the config)."""
    d = defaults
    hidden = cfg.int("hidden_size", default=d["hidden_size"])
    total_layers = cfg.int("num_hidden_layers", default=d["num_hidden_layers"])
    dense = cfg.int("first_k_dense_replace", default=d["first_k_dense_replace"], minimum=0)
    if dense >= total_layers:
        raise SymparamsError(f"{cfg.source}: key first_k_dense_replace ({dense}) leaves no layer with experts "
                             f"among the {total_layers}, which symparams' deepseek families do not model")
    values = dict(V=cfg.int("vocab_size", default=d["vocab_size"]), H=hidden, L=total_layers,
                  A=cfg.int("num_attention_heads", default=d["num_attention_heads"]),
                  F=cfg.int("intermediate_size", default=d["intermediate_size"]),
                  F_e=cfg.int("moe_intermediate_size", default=d["moe_intermediate_size"]),
                  N_s=cfg.int("n_shared_experts", default=d["n_shared_experts"]),
                  R_kv=cfg.int("kv_lora_rank", default=512), D_n=cfg.int("qk_nope_head_dim", default=128),
                  D_r=cfg.int("qk_rope_head_dim", default=64), D_v=cfg.int("v_head_dim", default=128),
                  C=cfg.labels(),
                  **experts_from_config(cfg, experts_key=d["experts_key"], experts=d["n_routed_experts"],
                                        top_k=d["num_experts_per_tok"]))
    if values["D_r"] % 2:
        raise SymparamsError(f"{cfg.source}: key qk_rope_head_dim gives an odd rotary width ({values['D_r']}); "
                             f"rotary embeddings need an even one")
    q_lora = not cfg.null("q_lora_rank")  # null: no query compression
    if q_lora:
        values["R_q"] = cfg.int("q_lora_rank", default=1536)
    if dense:
        values["L_f"] = dense
    switches = dict(q_lora=q_lora, dense_layers=dense > 0, attention_bias=cfg.bool("attention_bias", default=False),
                    tie=cfg.bool("tie_word_embeddings", default=False))
    return values, switches


def from_config(cfg):
    """Values from a ``DeepseekV3Config`` (defaults: DeepSeek-V3, as transformers 5 has them).

    ``n_routed_experts`` (alias ``num_local_experts``) is N_e, ``num_experts_per_tok`` k_e,
    ``n_shared_experts`` N_s, ``moe_intermediate_size`` F_e, ``intermediate_size`` the dense layers' F,
    ``first_k_dense_replace`` L_f; ``q_lora_rank`` R_q (null: ``q_lora=false``), ``kv_lora_rank`` R_kv,
    ``qk_nope_head_dim`` D_n, ``qk_rope_head_dim`` D_r, ``v_head_dim`` D_v.  The multi-token-prediction
    layers (``num_nextn_predict_layers``) are not built by transformers, and not counted.
    """
    values, switches = _values(cfg, dict(
        hidden_size=7168, num_hidden_layers=61, first_k_dense_replace=3, vocab_size=129280, num_attention_heads=128,
        intermediate_size=18432, moe_intermediate_size=2048, n_shared_experts=1, n_routed_experts=256,
        num_experts_per_tok=8, experts_key=("n_routed_experts", "num_local_experts")))
    switches["token_classification_bias"] = cfg.bool("token_classification_bias", default=True)
    return values, switches


def from_config_v2(cfg):
    """Values from a ``DeepseekV2Config``: the keys of :func:`from_config`, its own defaults (DeepSeek-V2's
    sizes; ``num_experts_per_tok`` has none, so a config must give it) and ``mlp_bias``.  As
    DeepseekV2Config does, heads that do not divide the hidden size are refused."""
    values, switches = _values(cfg, dict(
        hidden_size=4096, num_hidden_layers=32, first_k_dense_replace=0, vocab_size=102400, num_attention_heads=32,
        intermediate_size=11008, moe_intermediate_size=1407, n_shared_experts=2, n_routed_experts=64,
        num_experts_per_tok=None, experts_key=("n_routed_experts", "num_experts")))
    if values["H"] % values["A"]:
        raise SymparamsError(f"{cfg.source}: key hidden_size ({values['H']}) is not divisible by "
                             f"num_attention_heads ({values['A']}), which DeepseekV2Config requires")
    switches["mlp_bias"] = cfg.bool("mlp_bias", default=False)
    return values, switches


Q_LORA = Switch("q_lora", True, en="the query is compressed to rank R_q first (q_a_proj, q_b_proj; false: one q_proj)",
                zh="查询先压缩到秩 R_q（q_a_proj、q_b_proj；false 时为一个 q_proj）")
MLA_BIAS = Switch("attention_bias", False, en="biases in q_a_proj, kv_a_proj_with_mqa and o_proj",
                  zh="q_a_proj、kv_a_proj_with_mqa 和 o_proj 带偏置")
SWITCHES = (Q_LORA, MLA_BIAS, Switch("dense_layers", True, en=DENSE_LAYERS.en, zh=DENSE_LAYERS.zh), llama.TIE)
CONSTRAINTS = (TOP_K, SOME_MOE_LAYER)

FAMILY = Family(
    name="deepseek_v3",
    title={"en": "DeepSeek-V3", "zh": "DeepSeek-V3"},
    build=build,
    switches=(*SWITCHES, llama.TOKEN_CLASSIFICATION_BIAS),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=CONSTRAINTS,
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("deepseek_v3",),
    from_config=from_config,
)

FAMILY_V2 = Family(
    name="deepseek_v2",
    title={"en": "DeepSeek-V2", "zh": "DeepSeek-V2"},
    build=lambda switches, head: build(switches, head, "deepseek_v2"),
    switches=(*SWITCHES, Switch("mlp_bias", False, en="biases in the gate/up/down projections of the dense and "
                                                      "shared-expert MLPs (never in the routed experts)",
                                zh="普通前馈网络和共享专家的门控、上、下投影带偏置（路由专家不带）")),
    heads=tuple(h for h in CLASSES_V2 if h is not None),
    constraints=(HEAD_DIM, *CONSTRAINTS),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("deepseek_v2",),
    from_config=from_config_v2,
)

FAMILIES = (FAMILY, FAMILY_V2)

PRESETS = (
    Preset("deepseek-v3", "deepseek_v3",
           dict(V=129280, H=7168, L=61, L_f=3, A=128, F=18432, F_e=2048, N_e=256, k_e=8, N_s=1, R_q=1536, R_kv=512,
                D_n=128, D_r=64, D_v=128),
           en="DeepSeek-V3 (256 routed experts, 8 per token, 1 shared; MLA; first 3 layers dense)",
           zh="DeepSeek-V3（256 个路由专家，每个词元用 8 个，1 个共享专家；MLA；前 3 层为普通前馈网络）",
           reference="DeepseekV3Model"),
    Preset("deepseek-v2-lite", "deepseek_v2",
           dict(V=102400, H=2048, L=27, L_f=1, A=16, F=10944, F_e=1408, N_e=64, k_e=6, N_s=2, R_kv=512,
                D_n=128, D_r=64, D_v=128),
           {"q_lora": False},
           en="DeepSeek-V2-Lite (64 routed experts, 6 per token, 2 shared; MLA without query compression)",
           zh="DeepSeek-V2-Lite（64 个路由专家，每个词元用 6 个，2 个共享专家；MLA，查询不压缩）",
           reference="DeepseekV2Model"),
)
