"""Qwen3-MoE: Qwen 3's attention (an RMSNorm on each head's queries and keys) and routed experts only.

``Qwen3MoeModel``: ``embed_tokens``, L decoder layers ``layers.*`` (RMSNorm →
attention → RMSNorm → sparse MoE), the final ``norm``.  The attention is
LLaMA's with ``q_norm`` and ``k_norm`` over one head's width (D, or H/A) and
biases only with ``attention_bias``.  The sparse MoE block holds N_e routed
experts of width F_e (fused ``experts.gate_up_proj``, ``experts.down_proj``;
a token uses k_e of them) and the router ``gate`` (N_e·H); no shared expert.
Layers in ``mlp_only_layers`` or off the ``decoder_sparse_step`` have a plain
SwiGLU of width F (``dense_layers=true``: L_f of them).  With
``use_sliding_window`` (off in Qwen3-30B-A3B) every layer keeps only its last
``sliding_window − 1`` tokens.

>>> from symparams import model
>>> m = model("qwen3-30b-a3b", head="causal-lm")
>>> m.count, m.active  # 30.5B, 3.3B activated, as the model card says
(30532122624, 3353032704)
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import group
from ..core.family import HEAD_DIM, Family, Preset
from ..core.symbols import C
from . import llama, sliding
from .moe_parts import DENSE_LAYERS, SOME_MOE_LAYER, TOP_K, decoder_model, experts, layers, qwen_sparse_layers, router

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("Qwen3MoeModel", None),
    "causal-lm": ("Qwen3MoeForCausalLM", "model."),
    "sequence-classification": ("Qwen3MoeForSequenceClassification", "model."),
    "token-classification": ("Qwen3MoeForTokenClassification", "model."),
    "question-answering": ("Qwen3MoeForQuestionAnswering", "transformer."),
}


def sparse_moe():
    # in the order Qwen3MoeSparseMoeBlock computes: the router scores the experts, then they run
    return group("mlp", [router(), experts()], title="sparse_moe")


def build(switches, head):
    return decoder_model("qwen3_moe", layers(lambda runs: llama.attention(switches, head_norms=True, rule=sliding.EVERY, runs=runs), sparse_moe,
                                             lambda: llama.mlp(False), dense=switches["dense_layers"]),
                         llama.head_block(head, switches))


def from_config(cfg):
    """Values from a ``Qwen3MoeConfig`` (its defaults: 32 heads, 4 key/value heads, 128 experts, 8 per token;
    no ``head_dim`` field, so hidden/heads unless the config gives one).

    ``num_experts`` is N_e, ``num_experts_per_tok`` k_e, ``moe_intermediate_size`` F_e and
    ``intermediate_size`` the dense layers' F (``mlp_only_layers``, ``decoder_sparse_step``).
    """
    values, switches = llama.read_config(cfg, "Qwen3MoeConfig", vocab=151936, hidden=2048, layers=24, heads=32,
                                         kv=4, intermediate=6144, windows=sliding.qwen("qwen3_moe", sliding.EVERY))
    routed, dense = qwen_sparse_layers(cfg, "qwen3_moe", values["L"], experts=128, top_k=8)
    values.update(routed, F_e=cfg.int("moe_intermediate_size", default=768))
    switches.update(attention_bias=cfg.bool("attention_bias", default=False), dense_layers=dense)
    return values, switches


FAMILY = Family(
    name="qwen3_moe",
    title={"en": "Qwen3-MoE", "zh": "Qwen3-MoE"},
    build=build,
    switches=(llama.GQA, llama.FREE_HEAD_DIM, llama.TIE, llama.ATTENTION_BIAS, DENSE_LAYERS,
              sliding.window_switch(None), llama.TOKEN_CLASSIFICATION_BIAS),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, llama.KV_GROUPS, TOP_K, SOME_MOE_LAYER),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("qwen3_moe",),
    from_config=from_config,
)

PRESETS = (
    Preset("qwen3-30b-a3b", "qwen3_moe",
           dict(V=151936, H=2048, L=48, A=32, G=4, D=128, N_e=128, k_e=8, F_e=768), {"free_head_dim": True},
           en="Qwen3-30B-A3B (128 experts, 8 per token; 32 heads of width 128, 4 key/value heads)",
           zh="Qwen3-30B-A3B（128 个专家，每个词元用 8 个；32 个宽 128 的头，4 个键值头）", reference="Qwen3MoeModel"),
)
