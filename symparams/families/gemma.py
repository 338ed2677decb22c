"""Gemma, Gemma 2 and Gemma 3 (text): LLaMA's modules with a head width of their own and a GeGLU MLP.

``GemmaModel``: ``embed_tokens`` (scaled by √H on the way in: a buffer, no
parameter), L layers of RMSNorm → attention → RMSNorm → GeGLU MLP, the final
``norm``.  Gemma's RMSNorm multiplies by (1 + w): still H numbers.  The heads
are ``head_dim`` wide (256 by default; Gemma 2 27B: 128), free of H/A, so Q
is ``A·(H·D)``, K and V ``G·(H·D)`` and ``o_proj`` ``A·D·H``; where
``head_dim`` equals hidden/heads (Gemma 2B) the width is H/A.  The LM head
is tied to the token embedding.

Gemma 2 adds two RMSNorms to every layer, ``pre_feedforward_layernorm`` and
``post_feedforward_layernorm`` (its ``post_attention_layernorm`` normalises
the attention's output); Gemma 3 adds ``q_norm`` and ``k_norm``, an RMSNorm
over one head's width (D numbers each, shared by all heads).  Their
alternating local (sliding-window) and global attention holds no
parameters; neither does logit soft-capping.  It bounds the cache: a local
layer keeps only its last ``sliding_window − 1`` tokens (4096 by default,
Gemma 3 1B 512); Gemma 2 makes every other layer local (the first, the
third, ...), Gemma 3 all but every ``sliding_window_pattern``-th (6).

FLOPs: the scaling of the embeddings by √H, Gemma 2's soft-capping of the
attention scores and of the final logits (``cap·tanh(x/cap)``) and the
norms are element-wise, no matrix product; the tied LM head still
multiplies H·V.  Eager attention multiplies the full s × s square in local
layers too (the window only masks it).

>>> from symparams import model
>>> model("gemma-2b").count
2506172416
>>> model("gemma3_text").tree.find("decoder.layers.self_attn.k_norm").count
D
"""

from __future__ import annotations

import dataclasses

from ..core.blocks import rms_norm
from ..core.family import Preset
from ..core.symbols import H
from . import llama, sliding


def classes(prefix, causal_lm, sequence_classification, token_classification=None):
    """The heads of a Gemma family: the base model, and the ``*For...`` classes it has."""
    table = {None: (f"{prefix}Model", None), "causal-lm": (causal_lm, "model."),
             "sequence-classification": (sequence_classification, "model.")}
    if token_classification:
        table["token-classification"] = (token_classification, "model.")
    return table


CLASSES = classes("Gemma", "GemmaForCausalLM", "GemmaForSequenceClassification", "GemmaForTokenClassification")
CLASSES_2 = classes("Gemma2", "Gemma2ForCausalLM", "Gemma2ForSequenceClassification",
                    "Gemma2ForTokenClassification")
CLASSES_3 = classes("Gemma3Text", "Gemma3ForCausalLM", "Gemma3TextForSequenceClassification")


def geglu():
    return llama.mlp(False, title="geglu")


def build(switches, head):
    return llama.decoder_model("gemma", llama.decoder_layer(switches, llama.attention(switches), geglu()),
                               switches, head)


def sandwich_layer(attn):
    """Gemma 2 and 3: a norm before and after both the attention and the MLP."""
    return llama.layer_stack([
        rms_norm("input_layernorm", H),
        attn,
        rms_norm("post_attention_layernorm", H),
        rms_norm("pre_feedforward_layernorm", H, title="pre_ffn_norm"),
        geglu(),
        rms_norm("post_feedforward_layernorm", H, title="post_ffn_norm"),
    ])


def build_2(switches, head):
    return llama.decoder_model("gemma2", sandwich_layer(llama.attention(switches, rule=sliding.GLOBAL_EVERY)),
                               switches, head)


def build_3(switches, head):
    attention = llama.attention(switches, head_norms=True, rule=sliding.GLOBAL_EVERY)
    return llama.decoder_model("gemma3_text", sandwich_layer(attention), switches, head)


def reader(config_class, checks_heads, token_classification=True, windows=None, **defaults):
    """``from_config`` for a Gemma config class with these defaults; see :func:`llama.read_config`."""
    def from_config(cfg):
        return llama.read_config(cfg, config_class, tie=True, checks_heads=checks_heads, **defaults,
                                 extra=dict(attention_bias=cfg.bool("attention_bias", default=False)),
                                 token_classification=token_classification, windows=windows)
    from_config.__doc__ = f"Values from a ``{config_class}``, with its defaults; see :func:`llama.read_config`."
    return from_config


#: (Gemma 3 has no token-classification head: it leaves the last one out)
SWITCHES = (llama.GQA, dataclasses.replace(llama.FREE_HEAD_DIM, default=True),
            dataclasses.replace(llama.TIE, default=True), llama.ATTENTION_BIAS, llama.TOKEN_CLASSIFICATION_BIAS)


def local_switches(pattern: int) -> tuple:
    """Gemma 2's and 3's switches: Gemma's, with the window (4096) and a global layer every ``pattern``."""
    return (*SWITCHES[:-1], sliding.window_switch(4096), sliding.rule_switch(sliding.GLOBAL_EVERY, pattern),
            SWITCHES[-1])


#: GemmaConfig: gemma-7b; Gemma2Config: gemma-2-2b; Gemma3TextConfig: gemma-2-2b's sizes, Gemma 3's vocabulary.
#: Gemma 2 and 3 refuse heads that do not divide the hidden size, as transformers' config classes do.
FAMILIES = (
    llama.llama_like("gemma", "Gemma", build, SWITCHES, CLASSES, reader(
        "GemmaConfig", False, vocab=256000, hidden=3072, layers=28, heads=16, kv=16, head_dim=256, intermediate=24576)),
    llama.llama_like("gemma2", "Gemma 2", build_2, local_switches(2), CLASSES_2, reader(
        "Gemma2Config", True, windows=sliding.gemma("gemma2", 2), vocab=256000, hidden=2304, layers=26, heads=8,
        kv=4, head_dim=256, intermediate=9216)),
    llama.llama_like("gemma3_text", "Gemma 3 (text)", build_3, local_switches(6)[:-1], CLASSES_3, reader(
        "Gemma3TextConfig", True, token_classification=False, windows=sliding.gemma("gemma3_text", None),
        vocab=262208, hidden=2304, layers=26, heads=8, kv=4, head_dim=256, intermediate=9216)),
)

_H_OVER_A = {"free_head_dim": False}
_MHA = {"gqa": False}

PRESETS = (
    Preset("gemma-2b", "gemma", dict(V=256000, H=2048, L=18, A=8, G=1, F=16384), _H_OVER_A,
           en="Gemma 2B (multi-query attention: 1 key/value head; head width H/A = 256)",
           zh="Gemma 2B（多查询注意力：1 个键值头；每头宽 H/A = 256）", reference="GemmaModel"),
    Preset("gemma-7b", "gemma", dict(V=256000, H=3072, L=28, A=16, D=256, F=24576), _MHA,
           en="Gemma 7B (multi-head attention, 16 heads of width 256: A·D = 4096 > H)",
           zh="Gemma 7B（多头注意力，16 个宽 256 的头：A·D = 4096 > H）", reference="GemmaModel"),
    Preset("gemma-2-2b", "gemma2", dict(V=256000, H=2304, L=26, A=8, G=4, D=256, F=9216),
           en="Gemma 2 2B (8 heads of width 256, 4 key/value heads)",
           zh="Gemma 2 2B（8 个宽 256 的头，4 个键值头）", reference="Gemma2Model"),
    Preset("gemma-2-9b", "gemma2", dict(V=256000, H=3584, L=42, A=16, G=8, D=256, F=14336),
           en="Gemma 2 9B (16 heads of width 256, 8 key/value heads)",
           zh="Gemma 2 9B（16 个宽 256 的头，8 个键值头）", reference="Gemma2Model"),
    Preset("gemma-2-27b", "gemma2", dict(V=256000, H=4608, L=46, A=32, G=16, D=128, F=36864),
           en="Gemma 2 27B (32 heads of width 128, 16 key/value heads)",
           zh="Gemma 2 27B（32 个宽 128 的头，16 个键值头）", reference="Gemma2Model"),
    Preset("gemma-3-1b", "gemma3_text", dict(V=262144, H=1152, L=26, A=4, G=1, D=256, F=6912), {"sliding_window": 512},
           en="Gemma 3 1B (text only; 4 heads of width 256, 1 key/value head)",
           zh="Gemma 3 1B（纯文本；4 个宽 256 的头，1 个键值头）", reference="Gemma3TextModel"),
)
