"""PEGASUS (Zhang et al. 2020), as transformers' ``PegasusModel`` builds it.

The encoder–decoder tree of :mod:`.bart` with Marian's positions: each
stack holds its token table (tied to ``shared``), a fixed sinusoidal P·H
table — registered, as transformers registers it, as a frozen parameter
(``requires_grad=False``: in the total, not in the trainable count) — its
pre-LayerNorm layers and a final ``layer_norm`` (2H).  No LayerNorm on the
embeddings.  The decoder may have its own L_d, A_d, r_d.  Heads:
``seq2seq-lm`` (``lm_head`` tied to ``shared``) and ``causal-lm``
(``PegasusForCausalLM``: the decoder alone).

>>> from symparams import model
>>> m = model("pegasus-large")
>>> m.count, m.trainable
(570797056, 568699904)
>>> m.block("encoder.embed_positions").trainable
False
"""

from __future__ import annotations

from ..core.family import Family, Preset
from .seq2seq_parts import (
    CONSTRAINTS,
    STACK_SWITCHES,
    TIE,
    Stacks,
    check_padding,
    sinusoidal_positions,
    stacks_from_config,
)
from .seq2seq_parts import build as build_seq2seq

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("PegasusModel", None),
    "seq2seq-lm": ("PegasusForConditionalGeneration", "model."),
    "causal-lm": ("PegasusForCausalLM", "model."),
}

STACKS = Stacks(sinusoidal_positions, final_norm=True)


def build(switches, head):
    return build_seq2seq("pegasus", STACKS, switches, head)


def from_config(cfg):
    """Values from a ``PegasusConfig`` (missing keys: its defaults, the pegasus-large sizes but V = 50265)."""
    values, switches = stacks_from_config(cfg, d_model=1024, layers=12, heads=16, ffn=4096, positions=1024)
    values["V"] = vocab = cfg.int("vocab_size", default=50265)
    check_padding(cfg, 0, ("vocab_size", vocab))
    return values, {"tie": cfg.bool("tie_word_embeddings", default=True), **switches}


FAMILY = Family(
    name="pegasus",
    title={"en": "PEGASUS (encoder–decoder, sinusoidal positions)", "zh": "PEGASUS（编码器–解码器，正弦位置编码）"},
    build=build,
    switches=(TIE, *STACK_SWITCHES),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=CONSTRAINTS,
    components=("shared", "encoder", "decoder"),
    config_types=("pegasus",),
    from_config=from_config,
)

PRESETS = (
    Preset("pegasus-large", "pegasus", {"V": 96103, "P": 1024, "H": 1024, "L": 16, "A": 16, "r": 4},
           en="PEGASUS-large (google/pegasus-large): 16 + 16 layers, 96,103 tokens",
           zh="PEGASUS-large（google/pegasus-large）：16 + 16 层，96,103 个词元", reference="PegasusModel"),
)
