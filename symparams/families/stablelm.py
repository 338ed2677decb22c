"""StableLM (StableLM-3B-4E1T, Stable LM 2): LLaMA's modules with LayerNorms and optional per-head norms.

``StableLmModel``: ``embed_tokens``, L layers of LayerNorm → attention →
LayerNorm → SwiGLU MLP, the final ``norm``; every LayerNorm has a scale and
a shift (2·H).  ``q_proj``, ``k_proj`` and ``v_proj`` have biases with
``qkv_bias`` (``use_qkv_bias``: Stable LM 2), ``o_proj`` and the MLP never.
With ``qk_layernorm`` each head has its own bias-free LayerNorm on its
queries (A of them) and keys (G), H/A weights each.  With
``parallel_residual`` attention and MLP read the same ``input_layernorm``
(no ``post_attention_layernorm``).  Heads are always H/A wide
(``StableLmAttention`` ignores ``head_dim``); partial rotary positions hold
no parameters.

>>> from symparams import model
>>> model("stablelm-3b-4e1t", head="causal-lm").count
2795443200
>>> model("stablelm", qk_layernorm=True).tree.find("decoder.layers.self_attn.k_layernorm").total_as_written
A*(H/A)
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ..core.blocks import Block, group, layer_norm
from ..core.errors import SymparamsError
from ..core.family import Preset, Switch
from ..core.symbols import A, G, H
from . import llama

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("StableLmModel", None),
    "causal-lm": ("StableLmForCausalLM", "model."),
    "sequence-classification": ("StableLmForSequenceClassification", "model."),
    "token-classification": ("StableLmForTokenClassification", "model."),
}


def per_head_norms(name, heads, title):
    """``StableLmLayerNormPerHead``: ``norms.*``, one bias-free LayerNorm over one head's H/A features for each
    of ``heads`` heads (so, unlike a norm shared by the heads, its count does not shrink as A grows)."""
    width = H / A
    norm = Block("norm", params=(("weight", width),), written=sp.UnevaluatedExpr(width), shape=(width,), ref="",
                 title="layer_norm_no_shift", kind="norm", mean=True)
    return group(name, [norm], repeat=heads, ref=f"{name}.norms.*", title=title)


def attention(switches):
    """LLaMA's attention (biases on q/k/v only), with the per-head norms under ``qk_layernorm``."""
    base = llama.attention(switches, qkv_bias=switches["qkv_bias"], o_bias=False)
    if not switches["qk_layernorm"]:
        return base
    kv = G if switches["gqa"] else A
    return group("self_attn", [*base.children, per_head_norms("q_layernorm", A, "query_norm_heads"),
                               per_head_norms("k_layernorm", kv, "key_norm_heads")], title=base.title,
                 computes=base.computes)


def build(switches, head):
    switches = {**switches, "free_head_dim": False}  # StableLmAttention's heads are always H/A wide
    layer = llama.layer_stack([
        layer_norm("input_layernorm", H),
        attention(switches),
        None if switches["parallel_residual"] else layer_norm("post_attention_layernorm", H),
        llama.mlp(False),
    ])
    return llama.decoder_model("stablelm", layer, switches, head, final_norm=layer_norm("norm", H, title="final_norm"))


def from_config(cfg):
    """Values from a ``StableLmConfig`` (defaults: StableLM-3B-4E1T, multi-head attention); see
    :func:`llama.read_config`.  A ``head_dim`` other than hidden/heads is refused: ``StableLmAttention`` makes its
    heads H/A wide while its rotary embedding would take ``head_dim``."""
    values, switches = llama.read_config(
        cfg, "StableLmConfig", vocab=50304, hidden=2560, layers=32, heads=32, intermediate=6912,
        extra=dict(qkv_bias=cfg.bool("use_qkv_bias", default=False), qk_layernorm=cfg.bool("qk_layernorm", default=False),
                   parallel_residual=cfg.bool("use_parallel_residual", default=False)))
    if switches.pop("free_head_dim"):
        raise SymparamsError(f"{cfg.source}: key head_dim ({values['D']}) is not hidden_size / num_attention_heads; "
                             f"StableLmAttention makes heads H/A wide and its rotary embedding would not fit")
    return values, switches


FAMILY = llama.llama_like(
    "stablelm", "StableLM", build,
    (dataclasses.replace(llama.GQA, default=False), llama.TIE,
     Switch("qkv_bias", False, en="biases in the q/k/v projections (use_qkv_bias; o_proj has none)",
            zh="q/k/v 投影带偏置（use_qkv_bias；o_proj 没有）"),
     Switch("qk_layernorm", False, en="a LayerNorm of its own for each head's queries and keys (A and G of them)",
            zh="每个头的查询和键各有自己的 LayerNorm（A 个和 G 个）"),
     Switch("parallel_residual", False, en="attention and MLP read the same input_layernorm, in parallel "
                                           "(no post_attention_layernorm)",
            zh="注意力与 MLP 并行，读同一个 input_layernorm（没有 post_attention_layernorm）"),
     llama.TOKEN_CLASSIFICATION_BIAS),
    CLASSES, from_config)

PRESETS = (
    Preset("stablelm-2-1.6b", "stablelm", dict(V=100352, H=2048, L=24, A=32, F=5632), {"qkv_bias": True},
           en="Stable LM 2 1.6B (stabilityai/stablelm-2-1_6b: multi-head attention, q/k/v biases)",
           zh="Stable LM 2 1.6B（stabilityai/stablelm-2-1_6b：多头注意力，q/k/v 带偏置）", reference="StableLmModel"),
    Preset("stablelm-3b-4e1t", "stablelm", dict(V=50304, H=2560, L=32, A=32, F=6912),
           en="StableLM-3B-4E1T (stabilityai/stablelm-3b-4e1t, multi-head attention)",
           zh="StableLM-3B-4E1T（stabilityai/stablelm-3b-4e1t，多头注意力）", reference="StableLmModel"),
)
