"""OLMo 2: LLaMA's modules with the norms after the sublayers and a norm on all queries and keys.

``Olmo2Model``: ``embed_tokens``, L layers of attention →
``post_attention_layernorm`` → SwiGLU MLP → ``post_feedforward_layernorm``
(each norm on the sublayer's output, before the residual: no
``input_layernorm``), the final ``norm``.  ``q_norm`` and ``k_norm`` are
RMSNorms over every head's features at once, A·(H/A) and G·(H/A) weights:
written per head, A cancels in ``q_norm`` as in ``q_proj``.  No biases unless
``attention_bias``.

>>> from symparams import model
>>> model("olmo2").tree.find("decoder.layers.self_attn.k_norm").as_written
G*(H/A)
>>> model("olmo-2-7b").prove().invariant
True
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import Block, group, product_as_written, rms_norm
from ..core.family import Preset
from ..core.symbols import A, G, H
from . import llama

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("Olmo2Model", None),
    "causal-lm": ("Olmo2ForCausalLM", "model."),
    "sequence-classification": ("Olmo2ForSequenceClassification", "model."),
}


def all_heads_norm(name, heads, width, title, bias_free_layer_norm=False):
    """A norm over ``heads`` heads' features at once, ``heads·width`` weights (one per feature of every head),
    written per head.  OLMo 2's is an RMSNorm; Cohere's a LayerNorm without bias: the same count."""
    hd = sp.UnevaluatedExpr(width) if not width.is_Atom else width
    return Block(name, params=(("weight", sp.expand(heads * width)),), written=product_as_written(heads, hd),
                 shape=(product_as_written(heads, hd),), title=title, kind="norm", mean=bias_free_layer_norm)


def attention(switches, title_q="query_norm_all", title_k="key_norm_all", bias_free_layer_norms=False):
    """LLaMA's attention with ``q_norm`` (A heads) and ``k_norm`` (G key/value heads) over all heads' features
    (RMSNorms, or LayerNorms without bias)."""
    base = llama.attention(switches)
    width = llama.head_width(switches)
    kv = G if switches["gqa"] else A
    return group("self_attn", [*base.children, all_heads_norm("q_norm", A, width, title_q, bias_free_layer_norms),
                               all_heads_norm("k_norm", kv, width, title_k, bias_free_layer_norms)], title=base.title,
                 computes=base.computes)


def build(switches, head):
    layer = llama.layer_stack([
        attention(switches),
        rms_norm("post_attention_layernorm", H),
        llama.mlp(False),
        rms_norm("post_feedforward_layernorm", H, title="post_ffn_norm"),
    ])
    return llama.decoder_model("olmo2", layer, switches, head)


def from_config(cfg):
    """Values from an ``Olmo2Config`` (its defaults: 32 heads, as many key/value heads); see
    :func:`llama.read_config`."""
    return llama.read_config(cfg, "Olmo2Config", vocab=50304, hidden=4096, layers=32, heads=32, intermediate=11008,
                             extra=dict(attention_bias=cfg.bool("attention_bias", default=False)),
                             token_classification=False)


FAMILY = llama.llama_like("olmo2", "OLMo 2", build,
                          (llama.GQA, llama.FREE_HEAD_DIM, llama.TIE, llama.ATTENTION_BIAS),
                          CLASSES, from_config)

PRESETS = (
    Preset("olmo-2-7b", "olmo2", dict(V=100352, H=4096, L=32, A=32, F=11008), {"gqa": False},
           en="OLMo 2 7B (allenai/OLMo-2-1124-7B, multi-head attention)",
           zh="OLMo 2 7B（allenai/OLMo-2-1124-7B，多头注意力）", reference="Olmo2Model"),
    Preset("olmo-2-13b", "olmo2", dict(V=100352, H=5120, L=40, A=40, F=13824), {"gqa": False},
           en="OLMo 2 13B (allenai/OLMo-2-1124-13B, multi-head attention)",
           zh="OLMo 2 13B（allenai/OLMo-2-1124-13B，多头注意力）", reference="Olmo2Model"),
)
