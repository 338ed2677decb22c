"""BART (Lewis et al. 2019), as transformers' ``BartModel`` builds it.

A shared token table V·H; an encoder and a decoder, each with learned
positions — a table of P + 2 rows (BART offsets position ids by 2) — a
LayerNorm on the embeddings (``layernorm_embedding``) and the Transformer's
layers (post-LayerNorm, biases everywhere).  ``scale_embedding`` multiplies
by √H and adds no parameter.  The decoder may have its own layer count L_d,
head count A_d and FFN ratio r_d (``split_layers``, ``split_heads``,
``split_ffn``).  Heads: ``seq2seq-lm`` (``lm_head``, tied to the shared
table; ``final_logits_bias`` is a buffer, not a parameter),
``sequence-classification`` (``BartClassificationHead``: dense H·H + H,
out_proj H·C + C; C defaults to 3 as in ``BartConfig``),
``question-answering`` (2H + 2) and ``causal-lm`` (``BartForCausalLM``: the
decoder alone, with its own token table, and an LM head tied to it).

>>> from symparams import model
>>> m = model("bart-base")
>>> m.count
139420416
>>> m.block("encoder.embed_positions").as_written
H*(P + 2)
>>> model("bart").total
4*H**2*L*(r + 3) + H*(2*L*(r + 12) + 2*P + V + 8)
>>> model("bart", split_heads=True, split_ffn=True).total
2*H**2*L*(r + r_d + 6) + H*(L*(r + r_d + 24) + 2*P + V + 8)
"""

from __future__ import annotations

import sympy as sp

from ..core.family import Family, Preset
from ..core.symbols import C
from .seq2seq_parts import (
    CONSTRAINTS,
    STACK_SWITCHES,
    TIE,
    Stacks,
    check_padding,
    learned_positions,
    stacks_from_config,
)
from .seq2seq_parts import build as build_seq2seq

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("BartModel", None),
    "seq2seq-lm": ("BartForConditionalGeneration", "model."),
    "sequence-classification": ("BartForSequenceClassification", "model."),
    "question-answering": ("BartForQuestionAnswering", "model."),
    "causal-lm": ("BartForCausalLM", "model."),
}

STACKS = Stacks(learned_positions, embedding_norm=True)


def build(switches, head):
    return build_seq2seq("bart", STACKS, switches, head)


def from_config(cfg):
    """Values from a ``BartConfig`` (missing keys: its defaults, the bart-large sizes)."""
    values, switches = stacks_from_config(cfg, d_model=1024, layers=12, heads=16, ffn=4096, positions=1024)
    values["V"] = vocab = cfg.int("vocab_size", default=50265)
    values["C"] = cfg.labels(default=3)
    check_padding(cfg, 1, ("vocab_size", vocab))
    return values, {"tie": cfg.bool("tie_word_embeddings", default=True), **switches}


FAMILY = Family(
    name="bart",
    title={"en": "BART (encoder–decoder)", "zh": "BART（编码器–解码器）"},
    build=build,
    switches=(TIE, *STACK_SWITCHES),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=CONSTRAINTS,
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
