"""BLOOM (BigScience 2022), as transformers' ``BloomModel`` builds it.

Token table ``word_embeddings`` (V·H) and a LayerNorm on it,
``word_embeddings_layernorm``; no position table (ALiBi adds a fixed bias to
the attention scores, no parameters).  L blocks ``h.*``: ``input_layernorm``,
``self_attention`` — one fused ``query_key_value`` H → 3H with bias, written
per head as ``A·(H·(H/A) + H/A)`` for each of Q, K and V, and ``dense``
H·H + H — ``post_attention_layernorm``, the MLP ``dense_h_to_4h`` H·4H + 4H
and ``dense_4h_to_h`` 4H·H + H (the 4 is fixed, no config key sets it); the
final ``ln_f``.  The causal-LM head is tied to ``word_embeddings``.

>>> from symparams import model
>>> model("bloom-560m").count
559214592
>>> model("bloom").total
12*H**2*L + H*(13*L + V + 4)
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, product_as_written
from ..core.family import HEAD_DIM, Family, Preset
from ..core.symbols import A, C, H, L, V
from .classic_parts import causal_attention, decoder_model, fused_qkv, heads_of, mlp, task_head, tie_switch

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("BloomModel", None),
    "causal-lm": ("BloomForCausalLM", "transformer."),
    "sequence-classification": ("BloomForSequenceClassification", "transformer."),
    "token-classification": ("BloomForTokenClassification", "transformer."),
    "question-answering": ("BloomForQuestionAnswering", "transformer."),
}

TOKENS = "embeddings.word_embeddings"


def block():
    return group("h", [
        layer_norm("input_layernorm", H),
        group("self_attention", [fused_qkv(A, bias=True), linear("dense", H, H, title="attention_output")],
              title="masked_attention", computes=(causal_attention(),)),
        layer_norm("post_attention_layernorm", H),
        mlp(product_as_written(4, H)),
    ], repeat=L, ref="h.*", title="decoder_layer")


def build(switches, head):
    inputs = [embedding("word_embeddings", V, H, title="token_embedding"),
              layer_norm("word_embeddings_layernorm", H, title="embedding_layer_norm")]
    task = task_head(head, tied_to=TOKENS if switches["tie"] else None)
    return decoder_model("bloom", inputs, block(), [layer_norm("ln_f", H, title="final_norm")], task)


def from_config(cfg):
    """Values from a ``BloomConfig`` (defaults: its tiny test sizes, H = 64, L = 2, A = 8).

    ``hidden_size`` may be spelled ``n_embed``, ``n_layer`` / ``n_head``
    ``num_hidden_layers`` / ``num_attention_heads``, as ``BloomConfig`` accepts.
    """
    values = dict(V=cfg.int("vocab_size", default=250880), H=cfg.int("n_embed", "hidden_size", default=64),
                  L=cfg.int("num_hidden_layers", "n_layer", default=2),
                  A=cfg.int("num_attention_heads", "n_head", default=8), C=cfg.labels())
    return values, dict(tie=cfg.bool("tie_word_embeddings", default=True))


FAMILY = Family(
    name="bloom",
    title={"en": "BLOOM", "zh": "BLOOM"},
    build=build,
    switches=(tie_switch(True),),
    heads=heads_of(CLASSES),
    constraints=(HEAD_DIM,),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("bloom",),
    from_config=from_config,
)

PRESETS = (
    Preset("bloom-560m", "bloom", dict(V=250880, H=1024, L=24, A=16),
           en="BLOOM-560M (BigScience 2022), ALiBi positions", zh="BLOOM-560M（BigScience 2022），ALiBi 位置编码",
           reference="BloomModel"),
    Preset("bloom-7b1", "bloom", dict(V=250880, H=4096, L=30, A=32),
           en="BLOOM-7B1 (BigScience 2022)", zh="BLOOM-7B1（BigScience 2022）", reference="BloomModel"),
)
