"""Phi-3: LLaMA's modules with the query/key/value and the gate/up projections fused.

``Phi3Model``: ``embed_tokens``, L layers of RMSNorm → attention → RMSNorm →
SwiGLU MLP, the final ``norm``; no biases.  transformers holds Q, K and V in
one matrix ``qkv_proj`` (H → A·D + 2·G·D) and the MLP's gate and up in one
``gate_up_proj`` (H → 2F): the same counts as LLaMA's separate matrices,
under Phi-3's own names.  ``qkv_proj`` is written as the sum of its per-head
parts, so the head count still shows.  With ``sliding_window`` set (2047 in
Phi-3-mini 4k), every layer's cache keeps only its last ``sliding_window − 1``
tokens.

>>> from symparams import model
>>> model("phi-3-mini", head="causal-lm").count
3821079552
>>> model("phi3").tree.find("decoder.layers.self_attn.qkv_proj").as_written
A*(H*(H/A)) + G*(H*(H/A)) + G*(H*(H/A))
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import Block, group, sum_as_written
from ..core.family import Preset
from ..core.symbols import H
from . import llama, sliding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("Phi3Model", None),
    "causal-lm": ("Phi3ForCausalLM", "model."),
    "sequence-classification": ("Phi3ForSequenceClassification", "model."),
    "token-classification": ("Phi3ForTokenClassification", "model."),
}


def fused(name, parts, title):
    """One ``nn.Linear`` whose output is ``parts``' outputs side by side: their count, written as their sum."""
    return Block(name, params=(("weight", sp.expand(sp.Add(*(p.count for p in parts)))),),
                 written=sum_as_written(*(p.as_written for p in parts)),
                 shape=(H, sum_as_written(*(p.shape[1] for p in parts))), title=title, kind="linear")


def attention(switches):
    """LLaMA's attention with ``q_proj``, ``k_proj`` and ``v_proj`` fused into ``qkv_proj``."""
    separate = llama.attention(switches, qkv_bias=False, rule=sliding.EVERY)
    q, k, v, o = separate.children
    return group("self_attn", [fused("qkv_proj", (q, k, v), "fused_qkv"), o], title=separate.title,
                 computes=separate.computes)


def mlp():
    gate, up, down = llama.mlp(False).children
    return group("mlp", [fused("gate_up_proj", (gate, up), "ffn_gate_up"), down], title="swiglu")


def build(switches, head):
    return llama.decoder_model("phi3", llama.decoder_layer(switches, attention(switches), mlp()), switches, head)


def from_config(cfg):
    """Values from a ``Phi3Config`` (defaults: Phi-3-mini, multi-head attention); see :func:`llama.read_config`.
    ``head_dim`` is read too: ``Phi3Attention`` takes it when the config has it."""
    return llama.read_config(cfg, "Phi3Config", vocab=32064, hidden=3072, layers=32, heads=32, intermediate=8192,
                             windows=sliding.every_layer("phi3"))


FAMILY = llama.llama_like("phi3", "Phi-3", build,
                          (llama.GQA, llama.FREE_HEAD_DIM, llama.TIE, sliding.window_switch(None),
                           llama.TOKEN_CLASSIFICATION_BIAS),
                          CLASSES, from_config)

PRESETS = (
    Preset("phi-3-mini", "phi3", dict(V=32064, H=3072, L=32, A=32, F=8192), {"gqa": False, "sliding_window": 2047},
           en="Phi-3-mini 4k (multi-head attention, fused qkv_proj and gate_up_proj)",
           zh="Phi-3-mini 4k（多头注意力，融合的 qkv_proj 与 gate_up_proj）", reference="Phi3Model"),
)
