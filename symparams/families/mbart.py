"""mBART (Liu et al. 2020), as transformers' ``MBartModel`` builds it.

BART's tree (:mod:`.bart`) with pre-LayerNorm layers, and so one LayerNorm
more per stack: each of the encoder and the decoder holds its token table
(tied to ``shared``), learned positions of P + 2 rows, ``layernorm_embedding``
(2H), its layers and a final ``layer_norm`` (2H) after the last one.
``scale_embedding`` multiplies the token embeddings by √H and adds no
parameter.  The decoder may have its own L_d, A_d, r_d (``split_layers``,
``split_heads``, ``split_ffn``).  Heads as BART's: ``seq2seq-lm``,
``sequence-classification`` (C defaults to 2: ``MBartConfig`` keeps
transformers' default, unlike BART's 3), ``question-answering`` (2H + 2),
``causal-lm`` (the decoder alone).

>>> from symparams import model
>>> model("mbart-large-cc25").count
610851840
>>> (model("mbart").total - model("bart").total).expand()  # the two final LayerNorms
4*H
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
    None: ("MBartModel", None),
    "seq2seq-lm": ("MBartForConditionalGeneration", "model."),
    "sequence-classification": ("MBartForSequenceClassification", "model."),
    "question-answering": ("MBartForQuestionAnswering", "model."),
    "causal-lm": ("MBartForCausalLM", "model."),
}

STACKS = Stacks(learned_positions, embedding_norm=True, final_norm=True)


def build(switches, head):
    return build_seq2seq("mbart", STACKS, switches, head)


def from_config(cfg):
    """Values from an ``MBartConfig`` (missing keys: its defaults, the mbart-large sizes but V = 50265)."""
    values, switches = stacks_from_config(cfg, d_model=1024, layers=12, heads=16, ffn=4096, positions=1024)
    values["V"] = vocab = cfg.int("vocab_size", default=50265)
    values["C"] = cfg.labels()
    check_padding(cfg, 1, ("vocab_size", vocab))
    return values, {"tie": cfg.bool("tie_word_embeddings", default=True), **switches}


FAMILY = Family(
    name="mbart",
    title={"en": "mBART (encoder–decoder, multilingual)", "zh": "mBART（编码器–解码器，多语言）"},
    build=build,
    switches=(TIE, *STACK_SWITCHES),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=CONSTRAINTS,
    defaults={C: sp.Integer(2)},
    components=("shared", "encoder", "decoder"),
    config_types=("mbart",),
    from_config=from_config,
)

_LARGE = dict(P=1024, H=1024, L=12, A=16, r=4)

PRESETS = (
    Preset("mbart-large-cc25", "mbart", {**_LARGE, "V": 250027},
           en="mBART-large-cc25 (facebook/mbart-large-cc25): 12 + 12 layers, 25 languages",
           zh="mBART-large-cc25（facebook/mbart-large-cc25）：12 + 12 层，25 种语言", reference="MBartModel"),
    Preset("mbart-large-50", "mbart", {**_LARGE, "V": 250054},
           en="mBART-large-50 (facebook/mbart-large-50): 12 + 12 layers, 50 languages",
           zh="mBART-large-50（facebook/mbart-large-50）：12 + 12 层，50 种语言", reference="MBartModel"),
)
