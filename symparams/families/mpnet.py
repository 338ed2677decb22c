"""MPNet (Song et al. 2020), as transformers' ``MPNetModel`` builds it.

RoBERTa's embeddings without token types (word V·H, positions P·H — P
counts the padding offset, 514 for mpnet-base — and LayerNorm 2H), then L
layers ``encoder.layer.*``: ``attention.attn`` (``q``, ``k``, ``v``
written per head, ``A·(H·(H/A) + H/A)``, and ``o`` H·H + H),
``attention.LayerNorm`` 2H, BERT's intermediate and output (:mod:`.bert`);
the pooler H·H + H.  One relative attention bias serves every layer:
``encoder.relative_attention_bias``, an embedding of B buckets × A heads, so
the count *depends* on A (by B per head), as T5's does.

The heads are RoBERTa's, module for module (:mod:`.roberta`): ``masked-lm``
(``lm_head``: dense, layer_norm, bias V, decoder tied to the word embeddings
unless ``tie=false``), ``sequence-classification`` (``classifier``: dense
H·H + H, out_proj H·C + C), ``token-classification``,
``question-answering`` (H·C + C each) without the pooler, and
``multiple-choice`` (H + 1) with it.

>>> from symparams import model
>>> model("mpnet-base").count
109486464
>>> model("mpnet").tree.find("encoder.relative_attention_bias").count
A*B
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, per_head_linear, product_as_written
from ..core.compute import Attention
from ..core.errors import SymparamsError
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset
from ..core.symbols import A, B, C, H, L, r
from . import bert, roberta
from .encoder_parts import TIE, embeddings, pooler_default, read_sizes, with_head

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("MPNetModel", None),
    "masked-lm": ("MPNetForMaskedLM", "mpnet."),
    "sequence-classification": ("MPNetForSequenceClassification", "mpnet."),
    "token-classification": ("MPNetForTokenClassification", "mpnet."),
    "question-answering": ("MPNetForQuestionAnswering", "mpnet."),
    "multiple-choice": ("MPNetForMultipleChoice", "mpnet."),
}

#: MPNetEmbeddings uses padding index 1 in both tables, whatever the config says
PADDING_IDX = 1


def encoder_layer():
    return group("layer", [
        group("attention", [
            # Q·Kᵀ and softmax(·)·V of A heads H/A wide; the relative bias added to the scores is a lookup
            group("attn", [*(per_head_linear(n, H, A, H / A, title=t) for n, t in
                             (("q", "query"), ("k", "key"), ("v", "value"))),
                           linear("o", H, H, title="attention_output")], title="multi_head_attention",
                  computes=(Attention(A, H / A, H / A),)),
            layer_norm("LayerNorm", H),
        ]),
        *bert.ffn(product_as_written(r, H)),
    ], repeat=L, ref="layer.*", title="encoder_layer")


def build(switches, head):
    return group("mpnet", [
        embeddings(H, segments=False),
        group("encoder", [encoder_layer(),
                          embedding("relative_attention_bias", B, A, title="relative_attention_bias")]),
        group("pooler", [linear("dense", H, H, title="pooler")], per_sequence=True) if switches["pooler"] else None,
        with_head([roberta.heads(head, switches["tie"])]),
    ], ref="")


def from_config(cfg):
    """Values from an ``MPNetConfig``; missing keys take its defaults (mpnet-base's sizes, but P = 512)."""
    values = read_sizes(cfg, dict(V=30527, P=512, H=768, L=12, A=12, inter=3072))
    values["B"] = cfg.int("relative_attention_num_buckets", default=32)
    for key, rows in (("vocab_size", values["V"]), ("max_position_embeddings", values["P"])):
        if rows <= PADDING_IDX:
            raise SymparamsError(f"{cfg.source}: key {key}={rows} leaves no room for MPNet's padding "
                                 f"index {PADDING_IDX}; transformers cannot build that embedding")
    return values, {"tie": cfg.bool("tie_word_embeddings", default=True)}


FAMILY = Family(
    name="mpnet",
    title={"en": "MPNet", "zh": "MPNet"},
    build=build,
    switches=(bert.FAMILY.switch("pooler"), TIE),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "encoder", "pooler"),
    resolve_switches=pooler_default(roberta.HEADS),
    config_types=("mpnet",),
    from_config=from_config,
)

PRESETS = (
    Preset("mpnet-base", "mpnet", {"V": 30527, "P": 514, "H": 768, "L": 12, "A": 12, "B": 32, "r": 4},
           en="MPNet-base (microsoft/mpnet-base), Song et al. 2020",
           zh="MPNet-base（microsoft/mpnet-base），Song 等人，2020", reference="MPNetModel"),
)
