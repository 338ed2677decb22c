"""StarCoder 2: LLaMA's attention with biases, LayerNorms and a plain two-layer MLP.

``Starcoder2Model``: ``embed_tokens``, L layers of LayerNorm → attention →
LayerNorm → MLP, the final ``norm``.  Every LayerNorm has a scale and a
shift (2·H); with ``bias`` (``use_bias``, on by default) every linear layer
has a bias: ``q_proj``, ``k_proj``, ``v_proj``, ``o_proj`` and the MLP's
``c_fc`` (H → F) and ``c_proj`` (F → H), which has no gate.  Grouped-query
attention as in LLaMA; rotary positions and the sliding window hold no
parameters; the LM head is tied by default.  With ``sliding_window`` set
(4096 in the released models) every layer's cache keeps only its last
``sliding_window − 1`` tokens.

>>> from symparams import model
>>> model("starcoder2-3b", head="causal-lm").count
3030371328
>>> model("starcoder2").tree.find("decoder.layers.self_attn.k_proj").as_written
G*(H*(H/A) + H/A)
"""

from __future__ import annotations

import dataclasses

from ..core.blocks import group, layer_norm, linear
from ..core.family import Preset, Switch
from ..core.symbols import F, H
from . import llama, sliding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("Starcoder2Model", None),
    "causal-lm": ("Starcoder2ForCausalLM", "model."),
    "sequence-classification": ("Starcoder2ForSequenceClassification", "model."),
    "token-classification": ("Starcoder2ForTokenClassification", "model."),
}


def mlp(bias):
    """``Starcoder2MLP``: ``c_fc`` widens to F, ``c_proj`` narrows back; no gate."""
    return group("mlp", [linear("c_fc", H, F, bias=bias, title="ffn_up"),
                         linear("c_proj", F, H, bias=bias, title="ffn_down")], title="ffn")


def build(switches, head):
    layer = llama.layer_stack([
        layer_norm("input_layernorm", H),
        llama.attention(switches, qkv_bias=switches["bias"], rule=sliding.EVERY),
        layer_norm("post_attention_layernorm", H),
        mlp(switches["bias"]),
    ])
    return llama.decoder_model("starcoder2", layer, switches, head,
                               final_norm=layer_norm("norm", H, title="final_norm"))


def from_config(cfg):
    """Values from a ``Starcoder2Config`` (defaults: StarCoder2-3B's shape: 24 heads, 2 key/value heads, tied);
    see :func:`llama.read_config`.  ``head_dim`` is read too: ``Starcoder2Attention`` takes it when the config has
    it."""
    return llama.read_config(cfg, "Starcoder2Config", vocab=49152, hidden=3072, layers=30, heads=24, kv=2,
                             intermediate=12288, tie=True, extra=dict(bias=cfg.bool("use_bias", default=True)),
                             windows=sliding.every_layer("starcoder2"))


FAMILY = llama.llama_like("starcoder2", "StarCoder 2", build,
                          (llama.GQA, llama.FREE_HEAD_DIM, dataclasses.replace(llama.TIE, default=True),
                           Switch("bias", True, en="biases in q/k/v/o and in the MLP's c_fc and c_proj (use_bias)",
                                  zh="q/k/v/o 与 MLP 的 c_fc、c_proj 带偏置（use_bias）"),
                           sliding.window_switch(None), llama.TOKEN_CLASSIFICATION_BIAS),
                          CLASSES, from_config)

PRESETS = (
    Preset("starcoder2-3b", "starcoder2", dict(V=49152, H=3072, L=30, A=24, G=2, F=12288), {"sliding_window": 4096},
           en="StarCoder2 3B (bigcode/starcoder2-3b: 2 key/value heads, LM head tied)",
           zh="StarCoder2 3B（bigcode/starcoder2-3b：2 个键值头，语言模型头共享词嵌入）", reference="Starcoder2Model"),
    Preset("starcoder2-7b", "starcoder2", dict(V=49152, H=4608, L=32, A=36, G=4, F=18432), {"sliding_window": 4096},
           en="StarCoder2 7B (bigcode/starcoder2-7b: 4 key/value heads, LM head tied)",
           zh="StarCoder2 7B（bigcode/starcoder2-7b：4 个键值头，语言模型头共享词嵌入）", reference="Starcoder2Model"),
)
