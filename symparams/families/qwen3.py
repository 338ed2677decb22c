"""Qwen 3: LLaMA's modules, a head width of its own, and an RMSNorm on each head's queries and keys.

``Qwen3Model``: ``embed_tokens``, L layers of RMSNorm → attention → RMSNorm →
SwiGLU MLP, the final ``norm``.  The attention's heads are ``head_dim`` wide
(128 in every checkpoint, and by default in ``Qwen3Config``), so Q is
``A·(H·D)``, K and V ``G·(H·D)`` and ``o_proj`` ``A·D·H``; where
``head_dim`` equals hidden/heads (Qwen3-8B) the width is H/A.  ``q_norm``
and ``k_norm`` scale one head's width, D numbers each, shared by all heads.
No biases unless ``attention_bias``.  With ``use_sliding_window`` (off in
every checkpoint) the layers from ``max_window_layers`` on keep only their
last ``sliding_window − 1`` tokens.

>>> from symparams import model
>>> model("qwen3-0.6b").count
596049920
>>> model("qwen3").tree.find("decoder.layers.self_attn.q_norm").count
D
"""

from __future__ import annotations

import dataclasses

from ..core.family import Preset
from . import llama, sliding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("Qwen3Model", None),
    "causal-lm": ("Qwen3ForCausalLM", "model."),
    "sequence-classification": ("Qwen3ForSequenceClassification", "model."),
    "token-classification": ("Qwen3ForTokenClassification", "model."),
    "question-answering": ("Qwen3ForQuestionAnswering", "transformer."),
}


def build(switches, head):
    layer = llama.decoder_layer(switches, llama.attention(switches, head_norms=True, rule=sliding.FROM_LAYER),
                                llama.mlp(False))
    return llama.decoder_model("qwen3", layer, switches, head)


def from_config(cfg):
    """Values from a ``Qwen3Config`` (its defaults: 32 heads of width 128 and 32 key/value heads); see
    :func:`llama.read_config`."""
    return llama.read_config(cfg, "Qwen3Config", vocab=151936, hidden=4096, layers=32, heads=32, kv=32,
                             head_dim=128, intermediate=22016,
                             extra=dict(attention_bias=cfg.bool("attention_bias", default=False)),
                             windows=sliding.qwen("qwen3", sliding.FROM_LAYER))


FAMILY = llama.llama_like("qwen3", "Qwen3", build,
                          (llama.GQA, dataclasses.replace(llama.FREE_HEAD_DIM, default=True), llama.TIE,
                           llama.ATTENTION_BIAS, sliding.window_switch(None), sliding.rule_switch(sliding.FROM_LAYER, 28),
                           llama.TOKEN_CLASSIFICATION_BIAS),
                          CLASSES, from_config)

PRESETS = (
    Preset("qwen3-0.6b", "qwen3", dict(V=151936, H=1024, L=28, A=16, G=8, D=128, F=3072), {"tie": True},
           en="Qwen3 0.6B (16 heads of width 128, 8 key/value heads, LM head tied)",
           zh="Qwen3 0.6B（16 个宽 128 的头，8 个键值头，语言模型头共享词嵌入）", reference="Qwen3Model"),
    Preset("qwen3-8b", "qwen3", dict(V=151936, H=4096, L=36, A=32, G=8, F=12288),
           {"free_head_dim": False, "max_window_layers": 36},
           en="Qwen3 8B (32 heads, head width H/A = 128, 8 key/value heads)",
           zh="Qwen3 8B（32 个头，每头宽 H/A = 128，8 个键值头）", reference="Qwen3Model"),
)
