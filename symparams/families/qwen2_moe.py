"""Qwen2-MoE (Qwen1.5-MoE): routed experts beside a gated shared expert.

``Qwen2MoeModel``: ``embed_tokens``, L decoder layers ``layers.*`` (RMSNorm →
attention → RMSNorm → MLP), the final ``norm``.  The attention is LLaMA's with
biases on q, k and v only (``qkv_bias``), never on ``o_proj``.  A layer's MLP
is a sparse MoE block: the router ``gate`` (N_e·H), N_e routed experts of
width F_e (fused ``experts.gate_up_proj`` and ``experts.down_proj``; a token
uses k_e of them), a ``shared_expert`` every token uses (a SwiGLU of its own
width F_s) and its sigmoid gate ``shared_expert_gate`` (H → 1, no bias).
Layers listed in ``mlp_only_layers``, or off the ``decoder_sparse_step``,
have a plain SwiGLU of width F instead: ``dense_layers=true`` counts L_f such
layers and L - L_f with experts.  With ``use_sliding_window`` (off in
Qwen1.5-MoE) the even layers below ``max_window_layers`` keep only their last
``sliding_window − 1`` tokens (refused together with dense layers).

>>> from symparams import model
>>> m = model("qwen1.5-moe-a2.7b")
>>> m.tree.find("decoder.layers.mlp.shared_expert_gate").count
H
>>> m.with_head("causal-lm").count, m.with_head("causal-lm").active  # 14.3B, 2.7B activated
(14315784192, 2689173504)
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import group, linear
from ..core.family import HEAD_DIM, Family, Preset, Switch
from ..core.symbols import C, F_s, H
from . import llama, sliding
from .moe_parts import (
    DENSE_LAYERS,
    SOME_MOE_LAYER,
    TOP_K,
    decoder_model,
    experts,
    layers,
    qwen_sparse_layers,
    router,
    swiglu,
)

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("Qwen2MoeModel", None),
    "causal-lm": ("Qwen2MoeForCausalLM", "model."),
    "sequence-classification": ("Qwen2MoeForSequenceClassification", "model."),
    "token-classification": ("Qwen2MoeForTokenClassification", "model."),
    "question-answering": ("Qwen2MoeForQuestionAnswering", "model."),
}


def sparse_moe():
    return group("mlp", [
        router(),
        experts(),
        swiglu("shared_expert", F_s, title="shared_expert"),
        linear("shared_expert_gate", H, 1, bias=False, title="shared_expert_gate"),
    ], title="shared_moe")


def build(switches, head):
    return decoder_model("qwen2_moe", layers(lambda runs: llama.attention(switches, qkv_bias=switches["qkv_bias"],
                                                                          o_bias=False, rule=sliding.EVEN_BELOW,
                                                                          runs=runs),
                                             sparse_moe, lambda: llama.mlp(False), dense=switches["dense_layers"]),
                         llama.head_block(head, switches))


def from_config(cfg):
    """Values from a ``Qwen2MoeConfig`` (defaults: Qwen1.5-MoE-A2.7B, as transformers 5 has them).

    ``num_experts`` is N_e, ``num_experts_per_tok`` k_e, ``moe_intermediate_size`` F_e,
    ``shared_expert_intermediate_size`` F_s and ``intermediate_size`` the dense layers' F.  The dense layers
    are counted as ``Qwen2MoeDecoderLayer`` picks them (``mlp_only_layers``, ``decoder_sparse_step``); a
    config with no layer of experts left (``num_experts`` 0) is refused.
    """
    values, switches = llama.read_config(cfg, "Qwen2MoeConfig", vocab=151936, hidden=2048, layers=24, heads=16,
                                         kv=16, intermediate=5632,
                                         windows=sliding.qwen("qwen2_moe", sliding.EVEN_BELOW))
    routed, dense = qwen_sparse_layers(cfg, "qwen2_moe", values["L"], experts=60, top_k=4)
    values.update(routed, F_e=cfg.int("moe_intermediate_size", default=1408),
                  F_s=cfg.int("shared_expert_intermediate_size", default=5632))
    switches.update(qkv_bias=cfg.bool("qkv_bias", default=True), dense_layers=dense)
    return values, switches


FAMILY = Family(
    name="qwen2_moe",
    title={"en": "Qwen2-MoE", "zh": "Qwen2-MoE"},
    build=build,
    switches=(llama.GQA, llama.FREE_HEAD_DIM, llama.TIE,
              Switch("qkv_bias", True, en="biases in the q/k/v projections (o_proj has none)",
                     zh="查询、键、值投影带偏置（输出投影不带）"),
              DENSE_LAYERS, sliding.window_switch(None), sliding.rule_switch(sliding.EVEN_BELOW, 28),
              llama.TOKEN_CLASSIFICATION_BIAS),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, llama.KV_GROUPS, TOP_K, SOME_MOE_LAYER),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("qwen2_moe",),
    from_config=from_config,
)

PRESETS = (
    Preset("qwen1.5-moe-a2.7b", "qwen2_moe",
           dict(V=151936, H=2048, L=24, A=16, N_e=60, k_e=4, F_e=1408, F_s=5632), {"gqa": False, "max_window_layers": 21},
           en="Qwen1.5-MoE-A2.7B (60 routed experts, 4 per token, and a shared expert)",
           zh="Qwen1.5-MoE-A2.7B（60 个路由专家，每个词元用 4 个，外加一个共享专家）", reference="Qwen2MoeModel"),
)
