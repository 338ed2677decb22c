"""DistilBERT: BERT distilled to half the layers, without token types or pooler.

Embeddings (word V·H, position P·H, LayerNorm 2H; no token-type table), L
transformer layers (Q, K, V per head, out_lin, sa_layer_norm, FFN lin1/lin2,
output_layer_norm), no pooler.  Names follow ``DistilBertModel``
(``transformer.layer.*.attention.q_lin`` …).

``sinusoidal=true`` (``sinusoidal_pos_embds``) fills the position table with
sines and cosines when the weights are initialised.  In transformers 5 the
table stays an ordinary ``nn.Embedding`` weight with ``requires_grad=True``
(the frozen flag is set on a temporary copy only), so it is counted — and
counted as trainable — exactly as the learned table: the switch changes the
table's title, not the numbers.

>>> from symparams import model
>>> model("distilbert-base").count
66362880
>>> model("distilbert-base", sinusoidal=True).trainable
66362880
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import group, layer_norm, linear, product_as_written
from ..core.errors import SymparamsError
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset, Switch
from ..core.symbols import C, H, L, r
from . import bert
from .encoder_parts import TIE, attention, embeddings, read_sizes, vocab_projection, with_head

HEADS = ("sequence-classification", "token-classification", "question-answering", "masked-lm", "multiple-choice")


def transformer_layer(inter):
    return group("layer", [
        attention("attention", "q_lin", "k_lin", "v_lin", "out_lin"),
        layer_norm("sa_layer_norm", H),
        group("ffn", [linear("lin1", H, inter, title="ffn_up"), linear("lin2", inter, H, title="ffn_down")],
              title="ffn"),
        layer_norm("output_layer_norm", H),
    ], repeat=L, ref="layer.*", title="encoder_layer")


def heads(head, tie):
    """The task head's modules as transformers builds them (``DistilBertFor*``)."""
    if head in ("sequence-classification", "multiple-choice"):  # classifier H·C + C, or H + 1 (one score per choice)
        # on the first token only (hidden_state[:, 0])
        return [linear("pre_classifier", H, H, title="pre_classifier", per_sequence=True), bert.heads(head)]
    if head == "token-classification":
        return [bert.heads(head)]
    if head == "question-answering":  # DistilBertForQuestionAnswering requires num_labels == 2
        return [linear("qa_outputs", H, 2, title="qa_outputs")]
    if head == "masked-lm":
        return [linear("vocab_transform", H, H, title="mlm_transform"), layer_norm("vocab_layer_norm", H),
                vocab_projection("vocab_projector", H, tie)]
    return []


def build(switches, head):
    positions = "sinusoidal_positions" if switches["sinusoidal"] else "learned_positions"
    return group("distilbert", [
        embeddings(H, segments=False, positions_title=positions),
        group("transformer", [transformer_layer(product_as_written(r, H))], title="encoder"),
        with_head(heads(head, switches["tie"])),
    ], ref="")


#: DistilBertConfig's own keys, then the names its attribute_map accepts
KEYS = {"H": ("dim", "hidden_size"), "L": ("n_layers", "num_hidden_layers"),
        "A": ("n_heads", "num_attention_heads"), "inter": ("hidden_dim",)}


def from_config(cfg):
    """Values from a ``DistilBertConfig``; missing keys take its defaults (distilbert-base-uncased)."""
    values = read_sizes(cfg, dict(V=30522, P=512, H=768, L=6, A=12, inter=3072), KEYS)
    if cfg.head == "question-answering" and values["C"] != 2:  # transformers raises ValueError here
        raise SymparamsError(f"{cfg.source}: key num_labels must be 2 for DistilBertForQuestionAnswering, "
                             f"not {values['C']}")
    switches = {"sinusoidal": cfg.bool("sinusoidal_pos_embds", default=False),
                "tie": cfg.bool("tie_word_embeddings", default=True)}
    return values, switches


FAMILY = Family(
    name="distilbert",
    title={"en": "DistilBERT", "zh": "DistilBERT"},
    build=build,
    switches=(
        Switch("sinusoidal", False, en="sinusoidal values in the position table (still a trainable parameter)",
               zh="位置表以正弦值初始化（仍是可训练参数）"),
        TIE,
    ),
    heads=HEADS,
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "transformer"),
    config_types=("distilbert",),
    from_config=from_config,
)

PRESETS = (
    Preset("distilbert-base", "distilbert", {"V": 30522, "P": 512, "H": 768, "L": 6, "A": 12, "r": 4},
           en="DistilBERT-base (uncased), Sanh et al. 2019", zh="DistilBERT-base（uncased），Sanh 等人，2019",
           reference="DistilBertModel"),
)
