"""DeBERTa-v2 and DeBERTa-v3 (He et al. 2021), as transformers' ``DebertaV2Model`` builds them.

BERT's encoder with *disentangled* attention: content and relative
position are attended to apart, the relative positions coming from one
table shared by all layers.

- ``embeddings``: ``word_embeddings`` V·E; ``position_embeddings`` P·E only
  with ``position_biased_input`` (switch ``positions``; the released v2/v3
  checkpoints have none); ``token_type_embeddings`` S·E only when
  ``type_vocab_size`` > 0 (switch ``segments``); ``embed_proj`` E·H, no bias,
  only when ``embedding_size`` ≠ ``hidden_size`` (switch ``project``; else
  the tables are H wide); ``LayerNorm`` 2H.
- ``encoder.layer.*``: ``attention.self`` — ``query_proj``, ``key_proj``,
  ``value_proj`` written per head, ``A·(H·(H/A) + H/A)``; without
  ``share_att_key`` also ``pos_key_proj`` (with ``c2p`` in ``pos_att_type``)
  and ``pos_query_proj`` (with ``p2c``), per head as well — then BERT's
  attention output, intermediate and output (:mod:`.bert`).
- ``encoder.rel_embeddings``: with ``relative_attention`` (switch
  ``relative``), 2B·H, B the ``position_buckets`` (else
  ``max_relative_positions``, else ``max_position_embeddings``);
  ``encoder.LayerNorm`` 2H on that table when ``norm_rel_ebd`` holds
  ``layer_norm`` (switch ``rel_norm``; transformers builds it even without
  the table).

No pooler in the base model.  Heads: ``masked-lm`` (``legacy``:
``cls.predictions`` — transform dense H·E + E, LayerNorm 2E, bias V and the
decoder E→V, tied to the word embeddings unless ``tie=false``; not legacy:
``lm_predictions.lm_head`` — dense H·H + H, LayerNorm 2H, bias V, no
decoder), ``sequence-classification`` and ``multiple-choice``
(``ContextPooler`` dense H·H + H, then ``classifier`` H·C + C, or H + 1),
``token-classification`` (H·C + C), ``question-answering`` (H·C + C).

>>> from symparams import model
>>> model("deberta-v3-base").count
183831552
>>> model("deberta_v2").tree.find("encoder.rel_embeddings").count
2*B*H
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import sympy as sp

from ..core.blocks import (
    embedding,
    group,
    layer_norm,
    linear,
    parameter,
    per_head_linear,
    product_as_written,
    sum_as_written,
)
from ..core.compute import BATCH, SEQ, Attention, Product
from ..core.errors import SymparamsError
from ..core.family import FFN_SIZE, HEAD_DIM, Constraint, Family, Preset, Switch
from ..core.symbols import A, B, C, E, H, P, S, V, r
from . import bert
from .encoder_parts import TIE, lm_decoder, qa_outputs, with_head
from .seq2seq_parts import check_padding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("DebertaV2Model", None),
    "masked-lm": ("DebertaV2ForMaskedLM", "deberta."),
    "sequence-classification": ("DebertaV2ForSequenceClassification", "deberta."),
    "token-classification": ("DebertaV2ForTokenClassification", "deberta."),
    "question-answering": ("DebertaV2ForQuestionAnswering", "deberta."),
    "multiple-choice": ("DebertaV2ForMultipleChoice", "deberta."),
}

#: transformers builds ``embed_proj`` only when embedding_size ≠ hidden_size: 1 when E ≠ H, else 0 (refused)
PROJECTION = Constraint(
    sp.Piecewise((sp.Integer(1), sp.Ne(E, H)), (sp.Integer(0), True)),
    "E={E} equals H={H}: transformers builds no embed_proj then (use project=false)",
    (r"E \neq H", "E differs from H: only then is there a projection E→H",
     "E 不等于 H：只有这时才有 E→H 的投影层"))

SWITCHES = (
    Switch("positions", False, en="absolute position embeddings P·E in the input (position_biased_input)",
           zh="输入端有绝对位置嵌入 P·E（position_biased_input）"),
    Switch("segments", False, en="token type embeddings S·E (type_vocab_size > 0)",
           zh="有句子类型嵌入 S·E（type_vocab_size > 0）"),
    Switch("project", False, en="embed_proj E·H maps embeddings of width E to H (embedding_size ≠ hidden_size)",
           zh="嵌入投影层 embed_proj E·H 把 E 维嵌入映射到 H 维（embedding_size ≠ hidden_size）"),
    Switch("relative", True, en="relative position embeddings rel_embeddings 2B·H (relative_attention)",
           zh="相对位置嵌入表 rel_embeddings 2B·H（relative_attention）"),
    Switch("rel_norm", True, en="a LayerNorm on the relative position embeddings (norm_rel_ebd = layer_norm)",
           zh="相对位置嵌入之后有一个 LayerNorm（norm_rel_ebd = layer_norm）"),
    Switch("share_att_key", True, en="relative positions are projected by the content key and query maps "
                                     "(no pos_key_proj, pos_query_proj)",
           zh="相对位置复用内容的键、查询投影（没有 pos_key_proj、pos_query_proj）"),
    Switch("c2p", True, en="content-to-position attention (c2p in pos_att_type)",
           zh="内容到位置的注意力（pos_att_type 含 c2p）"),
    Switch("p2c", True, en="position-to-content attention (p2c in pos_att_type)",
           zh="位置到内容的注意力（pos_att_type 含 p2c）"),
    Switch("legacy", True, en="the masked-LM head is the legacy one (cls.predictions, with a tied decoder)",
           zh="掩码语言模型头为旧式（cls.predictions，解码矩阵共享词嵌入）"),
    TIE,
)


def embeddings(switches):
    width = E if switches["project"] else H
    rows = [V, P if switches["positions"] else 0, S if switches["segments"] else 0]
    names = ("word_embeddings", "position_embeddings", "token_type_embeddings")
    tables = [embedding(n, k, width) for n, k in zip(names, rows) if k != 0]
    return group("embeddings", [
        *tables,
        linear("embed_proj", E, H, bias=False, title="embedding_projection") if switches["project"] else None,
        layer_norm("LayerNorm", H),
    ], written=sum_as_written(product_as_written(sum_as_written(*rows), width),
                              product_as_written(E, H) if switches["project"] else 0, product_as_written(2, H)))


def disentangled_attention(switches):
    """``attention.self``: content Q, K, V and, without ``share_att_key``, the position projections.

    What eager ``DisentangledSelfAttention`` multiplies, per layer, besides Q, K, V on the b·s positions:

    - the content scores ``Q·Kᵀ`` and the weighted sum ``softmax(·)·V``, A heads H/A wide (:class:`Attention`);
    - with ``relative``, the relative-position table (all its 2B rows, whatever s) projected to keys and
      queries: with ``share_att_key`` by ``key_proj`` and ``query_proj`` both, each 2·2B·H·H, whichever of
      c2p, p2c is on (the one whose kind is off is computed but unused: no gradient flows back through it,
      backward factor 0); else by ``pos_key_proj`` (c2p) and ``pos_query_proj`` (p2c).  Those two maps run
      on the table only, never on the positions: their leaves run 0 times (``calls=0``) and their matmul on
      the 2B rows is declared here as a :class:`Product`;
    - c2p, content to position: ``bmm(Q, pos_Kᵀ)``, [b·A, s, H/A] @ [b·A, H/A, 2B]: 2·b·A·s·2B·(H/A);
    - p2c, position to content: ``bmm(K, pos_Qᵀ)``, the same size.

    Every one of these used has two inputs that need a gradient (the table is a parameter): backward factor 2.
    The gathers that pick each pair's relative bucket, and the scale, are not matmuls.
    """
    relative = switches["relative"]
    own_pos = not switches["share_att_key"] and relative
    names = ["query_proj", "key_proj", "value_proj"]
    names += [n for n, on in (("pos_key_proj", switches["c2p"]), ("pos_query_proj", switches["p2c"])) if own_pos and on]
    titles = {"query_proj": "query", "key_proj": "key", "value_proj": "value",
              "pos_key_proj": "position_key", "pos_query_proj": "position_query"}
    projections = [per_head_linear(n, H, A, H / A, title=titles[n]) for n in names]
    projections = [replace(p, calls=sp.Integer(0)) if p.name.startswith("pos_") else p for p in projections]
    computes = [Attention(A, H / A, H / A)]
    if relative:
        table = 2 * B  # rows of rel_embeddings, all projected
        projection = 2 * table * H * (A * (H / A))
        for kind in ("c2p", "p2c"):  # c2p: the table's keys, p2c: its queries
            if switches["share_att_key"]:  # computed either way; unused (no backward) when its kind is off
                computes.append(Product(projection, backward=2 if switches[kind] else 0))
            elif switches[kind]:
                computes.append(Product(projection))
        pair = 2 * BATCH * A * SEQ * table * (H / A)  # c2p or p2c: [b·A, s, H/A] @ [b·A, H/A, 2B]
        computes += [Product(pair)] * (int(switches["c2p"]) + int(switches["p2c"]))
    return group("self", projections, title="disentangled_attention", computes=tuple(computes))


def encoder(switches):
    relative = switches["relative"]
    return group("encoder", [
        bert.encoder_layer(product_as_written(r, H), disentangled_attention(switches)),
        embedding("rel_embeddings", 2 * B, H, title="relative_position_embeddings") if relative else None,
        # transformers builds it from norm_rel_ebd alone, with or without the relative table
        layer_norm("LayerNorm", H, title="relative_position_norm") if switches["rel_norm"] else None,
    ])


def mlm_head(switches):
    """``cls.predictions`` (legacy: its decoder maps from the embedding width) or ``lm_predictions.lm_head``
    (no decoder: the logits are taken against the word embeddings themselves)."""
    if not switches["legacy"]:  # logits = matmul(hidden, word_embeddings.weightᵀ): no Linear holds it
        return group("lm_predictions", [group("lm_head", [
            linear("dense", H, H, title="mlm_transform"), layer_norm("LayerNorm", H),
            parameter("bias", V, title="decoder_bias")], title="mlm_head",
            computes=(Product(2 * BATCH * SEQ * H * V),))], title="mlm_head")
    width = E if switches["project"] else H
    return group("cls", [group("predictions", [
        group("transform", [linear("dense", H, width, title="mlm_transform"), layer_norm("LayerNorm", width)],
              title="mlm_transform"),
        *lm_decoder(width, switches["tie"]),
    ], title="mlm_head")], title="mlm_head")


def heads(head, switches):
    """The task head's modules as transformers builds them (``DebertaV2For*``)."""
    if head == "masked-lm":
        return [mlm_head(switches)]
    if head in ("sequence-classification", "multiple-choice"):  # ContextPooler on the first token, then one
        # score per label/choice
        return [group("pooler", [linear("dense", H, H, title="pooler")], per_sequence=True),
                linear("classifier", H, C if head == "sequence-classification" else 1, title="classifier",
                       per_sequence=True)]
    if head == "token-classification":
        return [bert.heads(head)]
    if head == "question-answering":
        return [qa_outputs()]
    return []


def build(switches, head):
    return group("deberta_v2", [embeddings(switches), encoder(switches), with_head(heads(head, switches))], ref="")


def _pos_att_type(cfg):
    """``pos_att_type``: null, a list of names or a ``|``-separated string (``"p2c|c2p"``), as transformers reads it."""
    raw = cfg.get("pos_att_type")
    if raw is None:
        return []
    if isinstance(raw, str):
        return [x.strip() for x in raw.lower().split("|")]
    if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        return raw
    raise SymparamsError(f"{cfg.source}: key pos_att_type must be a list of names or a string such as \"p2c|c2p\"")


def _buckets(cfg, positions):
    """B: ``position_buckets`` when positive, else ``max_relative_positions`` when positive, else P."""
    buckets = cfg.int("position_buckets", default=-1, minimum=-(2**63))
    if buckets > 0:
        return buckets
    furthest = cfg.int("max_relative_positions", default=-1, minimum=-(2**63))
    return furthest if furthest >= 1 else positions


def from_config(cfg):
    """Values from a ``DebertaV2Config`` (missing keys: its defaults, deberta-v2-xlarge's sizes without its
    relative attention, and the keys transformers reads with ``getattr``: ``share_att_key`` false,
    ``position_buckets`` -1, ``norm_rel_ebd`` none, ``embedding_size`` = ``hidden_size``).

    Refused, with the key named: ``conv_kernel_size`` > 0 (the convolution of deberta-v2-xlarge and
    -xxlarge), an ``attention_head_size`` other than hidden/heads, and under the heads that hold a
    ``ContextPooler`` a ``pooler_hidden_size`` other than ``hidden_size``.
    """
    hidden = cfg.int("hidden_size", default=1536)
    heads = cfg.int("num_attention_heads", default=24)
    width = cfg.int("embedding_size", default=hidden)
    positions = cfg.int("max_position_embeddings", default=512)
    segments = cfg.int("type_vocab_size", default=0, minimum=0)
    values = dict(V=cfg.int("vocab_size", default=128100), H=hidden, L=cfg.int("num_hidden_layers", default=24),
                  A=heads, r=Fraction(cfg.int("intermediate_size", default=6144), hidden), C=cfg.labels())
    types = _pos_att_type(cfg)
    norms = [x.strip() for x in cfg.str("norm_rel_ebd", default="none").lower().split("|")]
    switches = dict(positions=cfg.bool("position_biased_input", default=True), segments=segments > 0,
                    project=width != hidden, relative=cfg.bool("relative_attention", default=False),
                    rel_norm="layer_norm" in norms, share_att_key=cfg.bool("share_att_key", default=False),
                    c2p="c2p" in types, p2c="p2c" in types, legacy=cfg.bool("legacy", default=True),
                    tie=cfg.bool("tie_word_embeddings", default=True))
    for on, symbol, value in ((switches["positions"], "P", positions), (switches["segments"], "S", segments),
                              (switches["project"], "E", width),
                              (switches["relative"], "B", _buckets(cfg, positions))):
        if on:
            values[symbol] = value
    _refuse_what_is_not_modelled(cfg, hidden, heads)
    check_padding(cfg, 0, ("vocab_size", values["V"]))
    return values, switches


def _refuse_what_is_not_modelled(cfg, hidden, heads):
    if cfg.int("conv_kernel_size", default=0, minimum=0) > 0:
        raise SymparamsError(f"{cfg.source}: key conv_kernel_size={cfg.data['conv_kernel_size']} (a convolution "
                             "after the first layer) is not modelled by symparams' deberta_v2 family")
    if cfg.has("attention_head_size") and cfg.int("attention_head_size") * heads != hidden:
        raise SymparamsError(f"{cfg.source}: key attention_head_size={cfg.data['attention_head_size']} is not "
                             f"hidden_size/num_attention_heads; symparams' deberta_v2 family counts heads H/A wide")
    if cfg.head in ("sequence-classification", "multiple-choice") and \
            cfg.int("pooler_hidden_size", default=hidden) != hidden:
        raise SymparamsError(f"{cfg.source}: key pooler_hidden_size={cfg.data['pooler_hidden_size']} differs from "
                             f"hidden_size={hidden}; symparams' deberta_v2 family counts a pooler H wide")


FAMILY = Family(
    name="deberta_v2",
    title={"en": "DeBERTa-v2 / v3", "zh": "DeBERTa-v2 / v3"},
    build=build,
    switches=SWITCHES,
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, FFN_SIZE, PROJECTION),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "encoder"),
    config_types=("deberta-v2",),
    from_config=from_config,
)

#: DeBERTa-v3: 128,100 tokens, no absolute positions, no token types, 256 relative buckets (2·256 rows)
_V3 = dict(V=128100, B=256, r=4)

PRESETS = (
    Preset("deberta-v3-base", "deberta_v2", {**_V3, "H": 768, "L": 12, "A": 12},
           en="DeBERTa-v3-base (He et al. 2021): 86M backbone and 98M embedding parameters",
           zh="DeBERTa-v3-base（He 等人，2021）：主干 86M、嵌入 98M 参数", reference="DebertaV2Model"),
    Preset("deberta-v3-large", "deberta_v2", {**_V3, "H": 1024, "L": 24, "A": 16},
           en="DeBERTa-v3-large: 304M backbone and 131M embedding parameters",
           zh="DeBERTa-v3-large：主干 304M、嵌入 131M 参数", reference="DebertaV2Model"),
)
