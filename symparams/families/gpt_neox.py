"""GPT-NeoX and Pythia (EleutherAI), as transformers' ``GPTNeoXModel`` builds them.

Token table ``embed_in`` (V·H); L layers ``layers.*``: ``input_layernorm``,
attention — one fused ``query_key_value`` H → 3H with bias, written per head
as ``A·(H·(H/A) + H/A)`` for each of Q, K and V, and ``dense`` H·H + H —
``post_attention_layernorm`` and the MLP ``dense_h_to_4h`` H·rH + rH,
``dense_4h_to_h`` rH·H + H; the final ``final_layer_norm``.  Rotary
positions (on a fraction ``rotary_pct`` of each head) and the parallel
residual hold no parameters.  The causal-LM head ``lm_head`` (the checkpoints'
``embed_out``) is untied by default: its own H·V.

>>> from symparams import model
>>> model("pythia-160m", head="causal-lm").count
162322944
>>> model("gpt_neox").tree.find("decoder.layers.attention.query_key_value").count
3*H**2 + 3*H
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, product_as_written
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset, Switch
from ..core.symbols import A, C, H, L, V, r
from .classic_parts import causal_attention, decoder_model, fused_qkv, heads_of, mlp, task_head, tie_switch

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("GPTNeoXModel", None),
    "causal-lm": ("GPTNeoXForCausalLM", "gpt_neox."),
    "sequence-classification": ("GPTNeoXForSequenceClassification", "gpt_neox."),
    "token-classification": ("GPTNeoXForTokenClassification", "gpt_neox."),
    "question-answering": ("GPTNeoXForQuestionAnswering", "gpt_neox."),
}

TOKENS = "embeddings.embed_in"


def layer(bias):
    return group("layers", [
        layer_norm("input_layernorm", H),
        group("attention", [fused_qkv(A, bias=bias), linear("dense", H, H, bias=bias, title="attention_output")],
              title="masked_attention", computes=(causal_attention(),)),
        layer_norm("post_attention_layernorm", H),
        mlp(product_as_written(r, H)),
    ], repeat=L, ref="layers.*", title="decoder_layer")


def build(switches, head):
    task = task_head(head, tied_to=TOKENS if switches["tie"] else None)
    return decoder_model("gpt_neox", [embedding("embed_in", V, H, title="token_embedding")],
                         layer(switches["attention_bias"]), [layer_norm("final_layer_norm", H, title="final_norm")],
                         task)


def from_config(cfg):
    """Values from a ``GPTNeoXConfig`` (defaults: gpt-neox-20b, as transformers 5 has them)."""
    hidden = cfg.int("hidden_size", default=6144)
    values = dict(V=cfg.int("vocab_size", default=50432), H=hidden, L=cfg.int("num_hidden_layers", default=44),
                  A=cfg.int("num_attention_heads", default=64),
                  r=Fraction(cfg.int("intermediate_size", default=24576), hidden), C=cfg.labels())
    switches = dict(tie=cfg.bool("tie_word_embeddings", default=False),
                    attention_bias=cfg.bool("attention_bias", default=True))
    return values, switches


FAMILY = Family(
    name="gpt_neox",
    title={"en": "GPT-NeoX", "zh": "GPT-NeoX"},
    build=build,
    switches=(
        tie_switch(False),
        Switch("attention_bias", True, en="biases in query_key_value and dense (attention_bias)",
               zh="注意力的 query_key_value 与 dense 带偏置（attention_bias）"),
    ),
    heads=heads_of(CLASSES),
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("gpt_neox",),
    from_config=from_config,
)

_PYTHIA = dict(V=50304, r=4)

PRESETS = (
    Preset("pythia-160m", "gpt_neox", {**_PYTHIA, "H": 768, "L": 12, "A": 12},
           en="Pythia-160M (Biderman et al. 2023), GPT-NeoX architecture, untied output layer",
           zh="Pythia-160M（Biderman 等人，2023），GPT-NeoX 架构，输出层不共享权重", reference="GPTNeoXModel"),
    Preset("pythia-1b", "gpt_neox", {**_PYTHIA, "H": 2048, "L": 16, "A": 8},
           en="Pythia-1B (Biderman et al. 2023)", zh="Pythia-1B（Biderman 等人，2023）", reference="GPTNeoXModel"),
    Preset("gpt-neox-20b", "gpt_neox", dict(V=50432, H=6144, L=44, A=64, r=4),
           en="GPT-NeoX-20B (Black et al. 2022)", zh="GPT-NeoX-20B（Black 等人，2022）", reference="GPTNeoXModel"),
)
