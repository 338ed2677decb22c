"""M2M-100 (Fan et al. 2020) and NLLB-200 (NLLB team 2022), as transformers' ``M2M100Model`` builds them.

The encoder–decoder tree of :mod:`.bart` with sinusoidal positions that
are *buffers*, not parameters: ``M2M100SinusoidalPositionalEmbedding``
keeps its (P + 2)·H table in ``weights``, a non-persistent buffer, so P
does not enter the count at all (unlike Marian and Pegasus, which register
theirs as frozen parameters).  Each stack holds its token table (tied to
``shared``), its pre-LayerNorm layers and a final ``layer_norm`` (2H).
``scale_embedding`` (√H) adds nothing.  The decoder may have its own L_d,
A_d, r_d.  Head: ``seq2seq-lm`` (``M2M100ForConditionalGeneration``:
``lm_head`` tied to ``shared``).  NLLB checkpoints have ``model_type``
``m2m_100``.

FLOPs count every layer: ``M2M100Config`` has ``encoder_layerdrop`` and
``decoder_layerdrop`` of 0.05, so a training step skips a layer now and
then, at random (transformers' LayerDrop); inference runs them all.

>>> from symparams import model
>>> model("nllb-200-distilled-600m").count
615073792
>>> (model("m2m_100").total - model("bart").total).expand()  # no position tables, final norms for embedding norms
-2*H*P - 4*H
"""

from __future__ import annotations

from ..core.errors import SymparamsError
from ..core.family import Family, Preset
from .seq2seq_parts import CONSTRAINTS, OFFSET, STACK_SWITCHES, TIE, Stacks, check_padding, stacks_from_config
from .seq2seq_parts import build as build_seq2seq

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("M2M100Model", None),
    "seq2seq-lm": ("M2M100ForConditionalGeneration", "model."),
}


STACKS = Stacks(None, final_norm=True)  # the sinusoidal table is a buffer: no block


def build(switches, head):
    return build_seq2seq("m2m_100", STACKS, switches, head)


def from_config(cfg):
    """Values from an ``M2M100Config`` (missing keys: its defaults, the m2m100_418M sizes).

    Refused, as transformers cannot build them: a ``d_model`` of 2 or 3 (its
    sinusoidal table divides by d_model/2 − 1), a ``pad_token_id`` outside
    the vocabulary or outside the P + 2 rows of the sinusoidal table.
    """
    values, switches = stacks_from_config(cfg, d_model=1024, layers=12, heads=16, ffn=4096)
    values["V"] = vocab = cfg.int("vocab_size", default=128112)
    if values["H"] in (2, 3):
        key = cfg.name_of("d_model")
        raise SymparamsError(f"{cfg.source}: key {key}={values['H']}: transformers cannot build M2M-100's "
                             "sinusoidal positions for a width of 2 or 3 (it divides by width/2 - 1)")
    rows = cfg.int("max_position_embeddings", default=1024) + OFFSET
    check_padding(cfg, 1, ("vocab_size", vocab), ("max_position_embeddings + 2", rows))
    return values, {"tie": cfg.bool("tie_word_embeddings", default=True), **switches}


FAMILY = Family(
    name="m2m_100",
    title={"en": "M2M-100 / NLLB (encoder–decoder, multilingual translation)",
           "zh": "M2M-100 / NLLB（编码器–解码器，多语言翻译）"},
    build=build,
    switches=(TIE, *STACK_SWITCHES),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=CONSTRAINTS,
    components=("shared", "encoder", "decoder"),
    config_types=("m2m_100",),
    from_config=from_config,
)

_LARGE = dict(H=1024, L=12, A=16, r=4)

PRESETS = (
    Preset("m2m100-418m", "m2m_100", {**_LARGE, "V": 128112},
           en="M2M-100 418M (facebook/m2m100_418M): 12 + 12 layers, 100 languages",
           zh="M2M-100 418M（facebook/m2m100_418M）：12 + 12 层，100 种语言", reference="M2M100Model"),
    Preset("nllb-200-distilled-600m", "m2m_100", {**_LARGE, "V": 256206},
           en="NLLB-200 distilled 600M (facebook/nllb-200-distilled-600M): 12 + 12 layers, 200 languages",
           zh="NLLB-200 蒸馏版 600M（facebook/nllb-200-distilled-600M）：12 + 12 层，200 种语言",
           reference="M2M100Model"),
)
