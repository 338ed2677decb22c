"""Cohere (Command R): attention and MLP side by side behind one bias-free LayerNorm.

``CohereModel``: ``embed_tokens``, L layers of ``input_layernorm`` (a
LayerNorm with a scale and no shift: H weights) whose output feeds both the
attention and the SwiGLU MLP, added back in parallel, and the final
``norm``.  With ``qk_norm`` (``use_qk_norm``: Command R+) the attention
normalises its queries and keys with a scale for every feature of every
head, A·(H/A) and G·(H/A) weights.  No biases unless ``attention_bias``;
the LM head is tied.

>>> from symparams import model
>>> model("command-r-plus").tree.find("decoder.layers.self_attn.q_norm").as_written
A*(H/A)
"""

from __future__ import annotations

import dataclasses

from ..core.blocks import layer_norm
from ..core.family import Preset, Switch
from ..core.symbols import H
from . import llama, olmo2

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("CohereModel", None),
    "causal-lm": ("CohereForCausalLM", "model."),
}


def build(switches, head):
    # every norm is CohereLayerNorm: a LayerNorm without bias
    attn = olmo2.attention(switches, bias_free_layer_norms=True) if switches["qk_norm"] else llama.attention(switches)
    layer = llama.layer_stack([layer_norm("input_layernorm", H, bias=False), attn, llama.mlp(False)])
    return llama.decoder_model("cohere", layer, switches, head,
                               final_norm=layer_norm("norm", H, bias=False, title="final_norm"))


def from_config(cfg):
    """Values from a ``CohereConfig`` (defaults: Command R, 64 heads, as many key/value heads); see
    :func:`llama.read_config`."""
    return llama.read_config(cfg, "CohereConfig", vocab=256000, hidden=8192, layers=40, heads=64, intermediate=22528,
                             tie=True, token_classification=False,
                             extra=dict(attention_bias=cfg.bool("attention_bias", default=False),
                                        qk_norm=cfg.bool("use_qk_norm", default=False)))


FAMILY = llama.llama_like("cohere", "Cohere", build,
                          (llama.GQA, llama.FREE_HEAD_DIM, dataclasses.replace(llama.TIE, default=True),
                           llama.ATTENTION_BIAS,
                           Switch("qk_norm", False, en="a norm on the queries and keys, a scale for every feature of "
                                                       "every head", zh="对查询和键做归一化，每个头的每个维度一个缩放")),
                          CLASSES, from_config)

PRESETS = (
    Preset("command-r", "cohere", dict(V=256000, H=8192, L=40, A=64, F=22528), {"gqa": False},
           en="Command R (CohereForAI/c4ai-command-r-v01, multi-head attention)",
           zh="Command R（CohereForAI/c4ai-command-r-v01，多头注意力）", reference="CohereModel"),
    Preset("command-r-plus", "cohere", dict(V=256000, H=12288, L=64, A=96, G=8, F=33792), {"qk_norm": True},
           en="Command R+ (CohereForAI/c4ai-command-r-plus: 8 key/value heads, query/key norms)",
           zh="Command R+（CohereForAI/c4ai-command-r-plus：8 个键值头，查询/键归一化）", reference="CohereModel"),
)
