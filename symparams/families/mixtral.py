"""Mixtral: LLaMA's decoder with a sparse mixture of experts in place of the MLP.

Token embedding ``embed_tokens`` (V·H); L decoder layers ``layers.*``
(RMSNorm → LLaMA's grouped-query attention → RMSNorm → sparse MoE); the
final RMSNorm ``norm``.  The MoE block has a router ``gate`` (N_e·H, no bias)
and N_e SwiGLU experts of intermediate size F_e, held by transformers 5 as
two fused tensors ``experts.gate_up_proj`` ``[N_e, 2F_e, H]`` and
``experts.down_proj`` ``[N_e, H, F_e]``.  Each token goes to k_e of the N_e
experts, so the *active* count keeps k_e experts per layer: the total grows
with N_e, the active count with k_e (and with N_e only through the router).
With ``sliding_window`` set (null in Mixtral-8x7B), every layer's cache keeps
only its last ``sliding_window − 1`` tokens.

>>> from symparams import model
>>> m = model("mixtral-8x7b", head="causal-lm")
>>> m.count, m.active
(46702792704, 12879925248)
>>> model("mixtral").tree.find("decoder.layers.mlp.experts").active_total
3*F_e*H*k_e
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import group
from ..core.family import HEAD_DIM, Family, Preset
from ..core.symbols import C
from . import llama, sliding
from .moe_parts import TOP_K, decoder_model, experts, experts_from_config, layers, router

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("MixtralModel", None),
    "causal-lm": ("MixtralForCausalLM", "model."),
    "sequence-classification": ("MixtralForSequenceClassification", "model."),
    "token-classification": ("MixtralForTokenClassification", "model."),
    "question-answering": ("MixtralForQuestionAnswering", "model."),
}


def attention(switches, runs):
    """LLaMA's attention without biases (MixtralAttention has none), on ``runs`` layers."""
    return llama.attention(switches, qkv_bias=False, rule=sliding.EVERY, runs=runs)


def sparse_moe():
    return group("mlp", [router(), experts()], title="sparse_moe")


def build(switches, head):
    return decoder_model("mixtral", layers(lambda runs: attention(switches, runs), sparse_moe),
                         llama.head_block(head, switches))


def from_config(cfg):
    """Values from a ``MixtralConfig`` (defaults: Mixtral-8x7B, as transformers 5 has them); the attention's
    keys as :func:`llama.read_config` reads them (``num_key_value_heads`` missing is 8).

    ``num_local_experts`` (alias ``num_experts``) is N_e, ``num_experts_per_tok`` k_e, ``intermediate_size``
    each expert's F_e.
    """
    values, switches = llama.read_config(cfg, "MixtralConfig", vocab=32000, hidden=4096, layers=32, heads=32,
                                         kv=8, intermediate=14336, windows=sliding.every_layer("mixtral"))
    values["F_e"] = values.pop("F")  # the only FFN is the experts'
    values.update(experts_from_config(cfg, experts_key=("num_local_experts", "num_experts"), experts=8, top_k=2))
    return values, switches


FAMILY = Family(
    name="mixtral",
    title={"en": "Mixtral", "zh": "Mixtral"},
    build=build,
    switches=(llama.GQA, llama.FREE_HEAD_DIM, llama.TIE, sliding.window_switch(None), llama.TOKEN_CLASSIFICATION_BIAS),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, llama.KV_GROUPS, TOP_K),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("mixtral",),
    from_config=from_config,
)

PRESETS = (
    Preset("mixtral-8x7b", "mixtral", dict(V=32000, H=4096, L=32, A=32, G=8, F_e=14336, N_e=8, k_e=2),
           en="Mixtral 8x7B (8 experts, 2 per token; grouped-query attention, 8 key/value heads)",
           zh="Mixtral 8x7B（8 个专家，每个词元用 2 个；分组查询注意力，8 个键值头）", reference="MixtralModel"),
)
