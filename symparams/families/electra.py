"""ELECTRA: BERT's encoder behind embeddings of their own width E.

The embedding tables are E wide (word V·E, position P·E, token type S·E,
LayerNorm 2E); when E ≠ H, ``embeddings_project`` (E·H + H) maps them to
the hidden size.  transformers builds that projection only when
``embedding_size != hidden_size``: switch ``project`` (default true, as in
electra-small) says whether it is there; with ``project=false`` the tables
are H wide and E is not used (electra-base, electra-large).  A model with
the projection refuses E = H.  Then L BERT encoder layers (built by
:mod:`.bert`); no pooler.

Heads: ``sequence-classification`` (``ElectraClassificationHead``: dense
H·H + H, out_proj H·C + C), ``token-classification``,
``question-answering``, ``masked-lm`` / ``causal-lm`` (the generator head:
dense H·E + E, LayerNorm 2E, ``generator_lm_head`` E→V whose weight is the
word embedding matrix unless ``tie=false``, bias V), ``pretraining``
(the discriminator head: dense H·H + H, dense_prediction H + 1) and
``multiple-choice`` (``sequence_summary``: summary H·H + H, then
``classifier`` H + 1, one score per choice).

>>> from symparams import model
>>> model("electra-small").count
13483008
>>> model("electra-small", H=128).count
Traceback (most recent call last):
...
symparams.SymparamsError: E=128 equals H=128: transformers builds no embeddings_project then (use project=false)
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import group, layer_norm, linear, product_as_written
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset, Switch
from ..core.symbols import C, E, H, r
from . import bert
from .encoder_parts import (
    PROJECTION,
    TIE,
    classification_head,
    embeddings,
    qa_outputs,
    read_sizes,
    vocab_projection,
    with_head,
)

HEADS = ("sequence-classification", "token-classification", "question-answering", "masked-lm", "causal-lm",
         "pretraining", "multiple-choice")


def heads(head, width, tie):
    """The task head's modules as transformers builds them (``ElectraFor*``); ``width`` is E or H."""
    if head == "sequence-classification":
        return [classification_head()]
    if head == "token-classification":
        return [bert.heads(head)]
    if head == "question-answering":
        return [qa_outputs()]
    if head in ("masked-lm", "causal-lm"):
        return [group("generator_predictions", [linear("dense", H, width, title="mlm_transform"),
                                                layer_norm("LayerNorm", width)], title="mlm_transform"),
                vocab_projection("generator_lm_head", width, tie)]
    if head == "pretraining":
        return [group("discriminator_predictions", [linear("dense", H, H, title="discriminator_dense"),
                                                    linear("dense_prediction", H, 1, title="discriminator_output")],
                      title="discriminator_head")]
    if head == "multiple-choice":  # ElectraSequenceSummary's projection (summary_use_proj) of the first token
        # (summary_type "first"), then one score per choice
        return [group("sequence_summary", [linear("summary", H, H, title="classifier_dense")], title="classifier_dense",
                      per_sequence=True),
                linear("classifier", H, 1, title="classifier", per_sequence=True)]
    return []


def build(switches, head):
    project = switches["project"]
    width = E if project else H
    return group("electra", [
        embeddings(width),
        linear("embeddings_project", E, H, title="embedding_projection") if project else None,
        # ElectraForCausalLM: is_decoder, its self-attention causal and cached
        group("encoder", [bert.encoder_layer(product_as_written(r, H), decoder=head == "causal-lm")]),
        with_head(heads(head, width, switches["tie"])),
    ], ref="")


def refuse_other_summaries(cfg):
    """Only the summary every released checkpoint has: a projection H → H (``summary_use_proj``)."""
    cfg.refuse("summary_use_proj", False, default=True, family="electra", what="no projection in sequence_summary")
    cfg.refuse("summary_proj_to_labels", True, default=False, family="electra",
               what="a sequence_summary projection to num_labels")
    cfg.refuse("summary_type", "attn", default="first", family="electra",
               what="attention summary, which transformers does not implement")


def from_config(cfg):
    """Values from an ``ElectraConfig``; missing keys take its defaults (electra-small-discriminator)."""
    cfg.refuse("add_cross_attention", True, default=False, family="electra", what="cross-attention in every layer")
    if cfg.head == "multiple-choice":  # ElectraConfig's summary_* keys shape only this head's sequence_summary
        refuse_other_summaries(cfg)
    values = read_sizes(cfg, dict(V=30522, P=512, S=2, E=128, H=256, L=12, A=4, inter=1024))
    project = values["E"] != values["H"]
    if not project:
        del values["E"]
    return values, {"project": project, "tie": cfg.bool("tie_word_embeddings", default=True)}


FAMILY = Family(
    name="electra",
    title={"en": "ELECTRA", "zh": "ELECTRA"},
    build=build,
    switches=(
        Switch("project", True, en="embeddings_project E·H + H (transformers has it when E ≠ H)",
               zh="嵌入投影层 E·H + H（E ≠ H 时才有）"),
        TIE,
    ),
    heads=HEADS,
    constraints=(HEAD_DIM, FFN_SIZE, PROJECTION),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "embeddings_project", "encoder"),
    config_types=("electra",),
    from_config=from_config,
)

_ELECTRA = dict(V=30522, P=512, S=2, r=4)

PRESETS = (
    Preset("electra-small", "electra", {**_ELECTRA, "E": 128, "H": 256, "L": 12, "A": 4},
           en="ELECTRA-small discriminator (Clark et al. 2020), E=128",
           zh="ELECTRA-small 判别器（Clark 等人，2020），E=128", reference="ElectraModel"),
    Preset("electra-base", "electra", {**_ELECTRA, "H": 768, "L": 12, "A": 12}, {"project": False},
           en="ELECTRA-base discriminator, E = H = 768 (no projection)",
           zh="ELECTRA-base 判别器，E = H = 768（无投影层）", reference="ElectraModel"),
    Preset("electra-large", "electra", {**_ELECTRA, "H": 1024, "L": 24, "A": 16}, {"project": False},
           en="ELECTRA-large discriminator, E = H = 1024 (no projection)",
           zh="ELECTRA-large 判别器，E = H = 1024（无投影层）", reference="ElectraModel"),
)
