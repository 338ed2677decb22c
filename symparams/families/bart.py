"""BART (Lewis et al. 2019), as transformers' ``BartModel`` builds it.

A shared token table V·H; an encoder and a decoder, each with learned
positions — a table of P + 2 rows (BART offsets position ids by 2) — a
LayerNorm on the embeddings (``layernorm_embedding``) and the Transformer's
layers (post-LayerNorm, biases everywhere).  ``scale_embedding`` multiplies
by √H and adds no parameter.  Heads: ``seq2seq-lm`` (``lm_head``, tied to
the shared table; ``final_logits_bias`` is a buffer, not a parameter),
``sequence-classification`` (``BartClassificationHead``: dense H·H + H,
out_proj H·C + C; C defaults to 3 as in ``BartConfig``) and
``question-answering`` (2H + 2).

>>> from symparams import model
>>> m = model("bart-base")
>>> m.count
139420416
>>> m.block("encoder.embed_positions").as_written
H*(P + 2)
>>> model("bart").total
4*H**2*L*(r + 3) + H*(2*L*(r + 12) + 2*P + V + 8)
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import embedding, group, linear
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset
from ..core.symbols import C, H, P, V
from .seq2seq_parts import (
    SHARED,
    SPLIT,
    TIE,
    check_padding,
    decoder_layers,
    embedding_norm,
    encoder_layers,
    lm_head,
    stack,
    stacks_from_config,
    tokens,
)

#: BartLearnedPositionalEmbedding: ``num_embeddings + 2`` rows
OFFSET = 2

HEADS = ("seq2seq-lm", "sequence-classification", "question-answering")


def positions():
    return embedding("embed_positions", P + OFFSET, H, title="learned_positions")


def heads(head, tie):
    """The task head as transformers builds it (``BartFor*``), path names as there."""
    if head == "seq2seq-lm":
        return lm_head(V, tied_to=SHARED if tie else None)
    if head == "sequence-classification":
        return group("classification_head", [linear("dense", H, H, title="classifier_dense"),
                                             linear("out_proj", H, C, title="classifier")],
                     title="classification_head")
    if head == "question-answering":
        return linear("qa_outputs", H, 2, title="qa_outputs")
    return None


def build(switches, head):
    tie = switches["tie"]
    tree = [
        embedding("shared", V, H, title="token_embedding"),
        stack("encoder", tokens(V, tied=tie), positions(), embedding_norm(), encoder_layers()),
        stack("decoder", tokens(V, tied=tie), positions(), embedding_norm(), decoder_layers(switches)),
    ]
    task = heads(head, tie)
    if task is not None:
        tree.append(group("head", [task], ref="", title="task_head"))
    return group("bart", tree, ref="")


def from_config(cfg):
    """Values from a ``BartConfig`` (missing keys: its defaults, the bart-large sizes)."""
    values, switches = stacks_from_config(cfg, "bart", d_model=1024, layers=12, heads=16, ffn=4096, positions=1024)
    values["V"] = vocab = cfg.int("vocab_size", default=50265)
    values["C"] = cfg.labels(default=3)
    check_padding(cfg, 1, ("vocab_size", vocab))
    return values, {"tie": cfg.bool("tie_word_embeddings", default=True), **switches}


FAMILY = Family(
    name="bart",
    title={"en": "BART (encoder–decoder)", "zh": "BART（编码器–解码器）"},
    build=build,
    switches=(TIE, SPLIT),
    heads=HEADS,
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(3)},
    components=("shared", "encoder", "decoder"),
    config_types=("bart",),
    from_config=from_config,
)

_BART = dict(V=50265, P=1024, r=4)

PRESETS = (
    Preset("bart-base", "bart", {**_BART, "H": 768, "L": 6, "A": 12},
           en="BART-base (facebook/bart-base): 6 + 6 layers", zh="BART-base（facebook/bart-base）：6 + 6 层",
           reference="BartModel"),
    Preset("bart-large", "bart", {**_BART, "H": 1024, "L": 12, "A": 16},
           en="BART-large (facebook/bart-large): 12 + 12 layers", zh="BART-large（facebook/bart-large）：12 + 12 层",
           reference="BartModel"),
    Preset("distilbart-12-6", "bart", {**_BART, "V": 50264, "H": 1024, "L": 12, "L_d": 6, "A": 16},
           {"split_layers": True},
           en="DistilBART (sshleifer/distilbart-cnn-12-6): BART-large sizes, 12 encoder and 6 decoder layers",
           zh="DistilBART（sshleifer/distilbart-cnn-12-6）：BART-large 尺寸，编码器 12 层、解码器 6 层",
           reference="BartModel"),
)
