"""ALBERT: factorized embeddings and one set of layer weights shared by all L layers.

- Embeddings E wide: word V·E, position P·E, token type S·E, LayerNorm 2E.
- ``encoder.embedding_hidden_mapping_in``: E·H + H (always there, even when E = H).
- ``encoder.albert_layer_groups``: ``num_hidden_groups`` groups of
  ``inner_group_num`` layers each (both 1 in every released checkpoint).  A
  layer: Q, K, V per head, the attention output H·H + H and its LayerNorm,
  ffn H·rH + rH, ffn_output rH·H + H, full_layer_layer_norm.
- ``pooler``: H·H + H (a bare Linear in transformers: ``pooler.weight``).

**Sharing.**  The forward pass runs the L layers through these groups
(layer i uses group ⌊i·G/L⌋), but the weights exist once per group and
layer, not once per pass.  :class:`~symparams.core.blocks.Block` ``repeat``
counts *distinct copies*, so the group's repeat is ``num_hidden_groups``
(switch ``hidden_groups``) and the layer's is ``inner_group_num`` (switch
``inner_groups``) — never L.  L does not appear in the count at all:
albert-base-v2 and a 24-layer ALBERT with the same sizes have the same
number of parameters.  The FLOPs do depend on L: the shared layers run L
times in one pass (``calls`` = L / ``num_hidden_groups`` on each group), so
L is read from the config (and set in the presets) though the count does
not use it.

Heads (as ``AlbertFor*``): ``sequence-classification`` (pooler + H·C + C),
``token-classification`` and ``question-answering`` (H·C + C, no pooler),
``masked-lm`` (``predictions``: dense H·E + E, LayerNorm 2E, bias V, decoder
E→V tied to the word embeddings unless ``tie=false``; no pooler) and
``pretraining`` (the masked-lm head, the pooler and ``sop_classifier``
H·C + C — transformers sizes the sentence-order head by ``num_labels``) and
``multiple-choice`` (pooler + H + 1, one score per choice).

>>> from symparams import model
>>> model("albert-base-v2").count
11683584
>>> model("albert-base-v2", hidden_groups=2).count - model("albert-base-v2").count  # one more layer's weights
7087872
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.blocks import group, layer_norm, linear, product_as_written
from ..core.errors import SymparamsError
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset, Switch
from ..core.symbols import C, E, H, L, r
from ..core.values import parse_value
from . import bert
from .encoder_parts import TIE, attention, embeddings, lm_decoder, qa_outputs, read_sizes, with_head


@dataclass(frozen=True)
class CountSwitch(Switch):
    """A switch that takes a positive whole number (how many distinct copies)."""

    def parse(self, raw):
        try:
            value = int(parse_value("L", raw))  # a positive whole number, parsed as any size is
        except SymparamsError as exc:
            if "digits" in str(exc):
                raise SymparamsError(f"switch {self.name}: {exc}") from None
            raise SymparamsError(f"switch {self.name} takes a positive whole number, not {str(raw)[:40]!r}") from None
        return value


def albert_layer(inter, copies):
    """One layer of a group (``AlbertLayer``), ``copies`` distinct layers per group."""
    return group("albert_layers", [
        attention("attention", "query", "key", "value", "dense", layer_norm("LayerNorm", H)),
        linear("ffn", H, inter, title="ffn_up"),
        linear("ffn_output", inter, H, title="ffn_down"),
        layer_norm("full_layer_layer_norm", H),
    ], repeat=copies, ref="albert_layers.*", title="shared_layer")


def heads(head, tie):
    """The task head's modules as transformers builds them (``AlbertFor*``)."""
    if head in ("sequence-classification", "token-classification", "multiple-choice"):
        return [bert.heads(head)]
    if head == "question-answering":
        return [qa_outputs()]
    if head not in ("masked-lm", "pretraining"):
        return []
    mlm = group("predictions", [linear("dense", H, E, title="mlm_transform"), layer_norm("LayerNorm", E),
                                *lm_decoder(E, tie)], title="mlm_head")
    sop = group("sop_classifier", [linear("classifier", H, C, title="sop_head")], title="sop_head",
                per_sequence=True)  # on the pooled first token
    return [mlm, sop if head == "pretraining" else None]


def build(switches, head):
    inter = product_as_written(r, H)
    groups = sp.Integer(switches["hidden_groups"])
    return group("albert", [
        embeddings(E),
        group("encoder", [
            linear("embedding_hidden_mapping_in", E, H, title="embedding_projection"),
            # L passes through G groups: layer i runs group ⌊i·G/L⌋, so the G groups run L times in all,
            # L/G each on average (all groups have the same shape: the total is exact for any G)
            group("albert_layer_groups", [albert_layer(inter, switches["inner_groups"])],
                  repeat=groups, ref="albert_layer_groups.*", title="layer_group", calls=L / groups),
        ]),
        linear("pooler", H, H, title="pooler", per_sequence=True) if switches["pooler"] else None,
        with_head(heads(head, switches["tie"])),
    ], ref="")


def from_config(cfg):
    """Values from an ``AlbertConfig``; missing keys take its defaults (albert-xxlarge)."""
    # L is not in the count (the layers share their weights) but in the FLOPs: the shared layers run L times
    values = read_sizes(cfg, dict(V=30000, P=512, S=2, E=128, H=4096, L=12, A=64, inter=16384))
    switches = {"hidden_groups": cfg.int("num_hidden_groups", default=1),
                "inner_groups": cfg.int("inner_group_num", default=1),
                "tie": cfg.bool("tie_word_embeddings", default=True)}
    return values, switches


FAMILY = Family(
    name="albert",
    title={"en": "ALBERT", "zh": "ALBERT"},
    build=build,
    switches=(
        bert.FAMILY.switch("pooler"),
        CountSwitch("hidden_groups", 1, en="layer groups with their own weights (num_hidden_groups)",
                    zh="各有一套权重的层组数（num_hidden_groups）"),
        CountSwitch("inner_groups", 1, en="distinct layers in each group (inner_group_num)",
                    zh="每组内不同层的数目（inner_group_num）"),
        TIE,
    ),
    heads=("sequence-classification", "token-classification", "question-answering", "masked-lm", "pretraining",
           "multiple-choice"),
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "encoder", "pooler"),
    resolve_switches=bert._resolve,  # the same heads use the pooler as in BERT
    config_types=("albert",),
    from_config=from_config,
)

_ALBERT = dict(V=30000, P=512, S=2, E=128, r=4)

PRESETS = (
    Preset("albert-base-v2", "albert", {**_ALBERT, "H": 768, "L": 12, "A": 12},
           en="ALBERT-base v2 (Lan et al. 2019), 12 layers sharing one set of weights",
           zh="ALBERT-base v2（Lan 等人，2019），12 层共享一套权重", reference="AlbertModel"),
    Preset("albert-large-v2", "albert", {**_ALBERT, "H": 1024, "L": 24, "A": 16},
           en="ALBERT-large v2, 24 layers sharing one set of weights",
           zh="ALBERT-large v2，24 层共享一套权重", reference="AlbertModel"),
    Preset("albert-xxlarge-v2", "albert", {**_ALBERT, "H": 4096, "L": 12, "A": 64},
           en="ALBERT-xxlarge v2, 12 layers sharing one set of weights",
           zh="ALBERT-xxlarge v2，12 层共享一套权重", reference="AlbertModel"),
)
