"""The source articles' figures, as data.

Each of the three source articles counts one model by hand.  :data:`ARTICLES` records which preset reproduces it (values *and*
switches: the Transformer article counts weights only) and every figure it
claims, with the component the figure refers to, so a document can check
each claim against the model tree and name the ones that are wrong.

A claim's figure is read from the model, never typed in twice: ``parts``
are block paths whose counts are added (``scope="copy"``: one copy, e.g.
one encoder layer; ``"all"``: every copy in the model), ``of`` the paths of
the denominator of a share (empty: the whole model).

>>> from symparams import model
>>> [n.article.key for n in notes_for(model("bert-base"))]
['bert-parameter-count', 'bert-architecture-and-parameters']
>>> wrong = [c for c in notes_for(model("bert-base"))[1].claims if c.status == "wrong"]
>>> [(c.claimed_text, c.right_text) for c in wrong][:3]
[('4,717,824', '4,723,968'), ('7,081,728', '7,087,872'), ('84,980,736', '85,054,464')]
>>> notes_for(model("bert-large"))
()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import sympy as sp

from ..core.formatting import percent, thousands
from ..core.values import parse_value
from ..families.lookup import model
from ..families.presets import all_presets

__all__ = ["ARTICLES", "Article", "Claim", "ClaimCheck", "Note", "notes_for", "related_for"]

TOTAL = "<total>"
TRAINABLE = "<trainable>"


@dataclass(frozen=True)
class Claim:
    """A figure an article states, and the component it refers to.

    ``claimed`` is the article's figure: an ``int`` count, a percentage
    string (``"77.62%"``), or, with ``approx=True``, a rounded figure as the
    article writes it (``"about 60M"``).
    """

    key: str
    en: str                            # what the figure is (catalog mini-markup: $math$, `code`)
    zh: str
    claimed: int | str
    parts: tuple[str, ...]
    scope: str = "all"                 # "all" copies in the model, or one "copy"
    of: tuple[str, ...] = ()           # denominator of a share; () = the whole model
    approx: bool = False
    switches: Mapping[str, object] = field(default_factory=dict)  # evaluate on this variant
    why_en: str = ""
    why_zh: str = ""
    claimed_zh: str = ""               # a rounded figure as the Chinese article words it ("大约为60M")
    follows: str = ""                  # the key of the slip this figure inherits (a knock-on error)

    @property
    def is_share(self) -> bool:
        return isinstance(self.claimed, str) and self.claimed.endswith("%")


@dataclass(frozen=True)
class Article:
    key: str
    file: str
    title: str            # the article's own (Chinese) title
    title_en: str         # the title in English, for the English documents' headings
    en: str               # what it is, in English
    zh: str
    preset: str           # the preset that reproduces its accounting
    accounting_en: str
    accounting_zh: str
    claims: tuple[Claim, ...]
    remarks: tuple[tuple[str, str], ...] = ()   # (en, zh), with $math$: points of wording, not figures
    related: tuple[str, ...] = ()               # presets of the same model in full accounting


@dataclass(frozen=True)
class ClaimCheck:
    claim: Claim
    value: int | sp.Rational      # the right figure (a count or an exact share)
    claimed_text: str
    right_text: str
    status: str                   # "ok", "wrong" or "approx"

    def claimed_in(self, lang: str) -> str:
        """The claimed figure as a document in ``lang`` quotes it (the Chinese article's own words in Chinese)."""
        return self.claim.claimed_zh if lang == "zh" and self.claim.claimed_zh else self.claimed_text


@dataclass(frozen=True)
class Note:
    article: Article
    claims: tuple[ClaimCheck, ...]

    @property
    def wrong(self) -> tuple[ClaimCheck, ...]:
        return tuple(c for c in self.claims if c.status == "wrong")


# -- the articles ---------------------------------------------------------------------

_LAYER = "encoder.layer"
_FFN = (f"{_LAYER}.intermediate", f"{_LAYER}.output.dense")
_FFN_LN = (f"{_LAYER}.intermediate", f"{_LAYER}.output")
_WORD, _POS, _SEG, _ELN = ("embeddings.word_embeddings", "embeddings.position_embeddings",
                           "embeddings.token_type_embeddings", "embeddings.LayerNorm")

BERT_PARAMETER_COUNT = Article(
    key="bert-parameter-count", file="bert-parameter-count.zh.txt", title="Bert系列之模型参数计算",
    title_en="BERT series: counting the model's parameters",
    en="a section-by-section count of BERT-base: Embedding, Encoder, Pooling",
    zh="按 Embedding、Encoder、Pooling 三部分逐层计算 BERT-base 的参数量",
    preset="bert-base",
    accounting_en="every weight, bias and LayerNorm parameter, as transformers' BertModel holds them",
    accounting_zh="计入全部权重、偏置和 LayerNorm 参数，与 transformers 的 BertModel 一致",
    claims=(
        Claim("token_segment_position", "token, segment and position embeddings", "词、句子、位置三种 embedding",
              23_835_648, (_WORD, _SEG, _POS)),
        Claim("embedding_layer_norm", "LayerNorm of the embeddings", "Embedding 层的 layer normalization",
              1_536, (_ELN,)),
        Claim("embeddings", "Embedding layer", "Embedding 层", 23_837_184, ("embeddings",)),
        Claim("qkv", "Q, K, V of all heads, one layer", "所有头的 Q、K、V 矩阵（一层）", 1_771_776,
              (f"{_LAYER}.attention.self",), scope="copy"),
        Claim("multi_head_attention", "multi-head attention with $W^O$, one layer",
              "Multi_Head Attention 连同 $W^O$（一层）", 2_362_368,
              (f"{_LAYER}.attention.self", f"{_LAYER}.attention.output.dense"), scope="copy"),
        Claim("add_norm", "Add & Norm after attention, one layer", "注意力之后的 Add&Norm（一层）", 1_536,
              (f"{_LAYER}.attention.output.LayerNorm",), scope="copy"),
        Claim("feed_forward", "feed-forward network, one layer", "前馈网络 Feed Forward（一层）", 4_722_432,
              _FFN, scope="copy"),
        Claim("encoder", "Encoder layer (12 layers)", "Encoder 层（12 层）", 85_054_464, ("encoder",)),
        Claim("pooling", "Pooling layer", "Pooling 层", 590_592, ("pooler",)),
        Claim("total", "BERT-base in total", "BERT-base 总参数量", 109_482_240, (TOTAL,)),
    ),
    remarks=(
        ("The article says LayerNorm's parameters are a mean and a variance; they are a scale $\\gamma$ and a "
         "shift $\\beta$, $H$ each. The mean and variance are computed from each input, not learned. The count, "
         "$2H$, is right.",
         "原文说 layer normalization 的参数是均值和方差；实际上它的参数是缩放 $\\gamma$ 和平移 $\\beta$（各 $H$ 个），"
         "均值和方差是对每个输入现算的，并不需要学习。参数个数 $2H$ 是对的。"),
        ("Its reference list dates “Attention Is All You Need” as “(Transformer, 1027)”: the paper is from 2017 "
         "(Vaswani et al., arXiv:1706.03762).",
         "参考文献把《Attention Is All You Need》标为“(Transformer, 1027)”：这篇论文发表于 2017 年（Vaswani 等人，"
         "arXiv:1706.03762）。"),
        ("Its closing sentence counts the variants “至上而下”; the word meant is 自上而下, top-down, the order this "
         "note counts in.",
         "结尾“通过这种至上而下的方式”中的“至上而下”应为“自上而下”，也就是本文计算的顺序。"),
    ),
)

BERT_ARCHITECTURE = Article(
    key="bert-architecture-and-parameters", file="bert-architecture-and-parameters.zh.txt",
    title="BERT 模型架构初探（embedding + encoder + pooler）",
    title_en="A first look at BERT's architecture (embedding + encoder + pooler)",
    en="a walk through BertModel's module tree, with tables of shapes, counts and shares",
    zh="沿 BertModel 的模块树讲解 BERT 架构，并列出各组件的形状、参数量和占比",
    preset="bert-base",
    accounting_en="every parameter of transformers' BertModel (total = trainable)",
    accounting_zh="transformers 中 BertModel 的全部参数（总参数 = 可学习参数）",
    claims=(
        Claim("total", "total parameters", "总参数", 109_482_240, (TOTAL,)),
        Claim("trainable", "learnable parameters", "可学习参数", 109_482_240, (TRAINABLE,)),
        Claim("about_110m", "BERT-base in the variants table", "变体对比表中的 BERT-base", "110M", (TOTAL,),
              approx=True),
        Claim("word_embeddings", "`word_embeddings`", "`word_embeddings`", 23_440_896, (_WORD,)),
        Claim("word_embeddings_share", "`word_embeddings`, share", "`word_embeddings` 占比", "21.41%", (_WORD,)),
        Claim("position_embeddings", "`position_embeddings`", "`position_embeddings`", 393_216, (_POS,)),
        Claim("position_embeddings_share", "`position_embeddings`, share", "`position_embeddings` 占比", "0.36%",
              (_POS,)),
        Claim("token_type_embeddings", "`token_type_embeddings`", "`token_type_embeddings`", 1_536, (_SEG,)),
        Claim("token_type_embeddings_share", "`token_type_embeddings`, share", "`token_type_embeddings` 占比",
              "0.0014%", (_SEG,)),
        Claim("embedding_layer_norm", "LayerNorm of the embeddings", "嵌入层 LayerNorm", 1_536, (_ELN,)),
        Claim("embedding_layer_norm_share", "LayerNorm of the embeddings, share", "嵌入层 LayerNorm 占比",
              "0.0014%", (_ELN,)),
        Claim("embeddings", "Embeddings", "Embeddings 层", 23_837_184, ("embeddings",)),
        Claim("embeddings_share", "Embeddings, share", "Embeddings 层占比", "21.77%", ("embeddings",)),
        Claim("word_in_embeddings", "`word_embeddings` within the embeddings", "词嵌入占嵌入层参数的比例",
              "98.34%", (_WORD,), of=("embeddings",)),
        Claim("attention_with_norm", "attention with its LayerNorm, one layer", "注意力部分小计（一层）",
              2_363_904, (f"{_LAYER}.attention",), scope="copy"),
        Claim("ffn_with_norm", "feed-forward network with its LayerNorm, one layer", "前馈网络小计（一层）",
              4_717_824, _FFN_LN, scope="copy",
              why_en="the article's own line items (two weight matrices, their biases, the LayerNorm) add up "
                     "to the right figure; its subtotal is 6,144 = 2 × 3,072 short",
              why_zh="按原文自己列出的各项（两个权重矩阵、偏置、LayerNorm）相加即得正确数字，"
                     "小计少了 6,144 = 2 × 3,072"),
        Claim("one_layer", "one encoder layer", "单层总计", 7_081_728, (_LAYER,), scope="copy",
              follows="ffn_with_norm"),
        Claim("encoder", "12 encoder layers", "12 层 Encoder 总参数", 84_980_736, ("encoder",),
              why_en="with it the components add up to 23,837,184 + 84,980,736 + 590,592 = 109,408,512, not the "
                     "article's own total 109,482,240",
              why_zh="用它的话，各部分相加是 23,837,184 + 84,980,736 + 590,592 = 109,408,512，"
                     "不等于原文自己给出的总参数量 109,482,240",
              follows="ffn_with_norm"),
        Claim("encoder_share", "encoder, share of the total", "Encoder 占总参数比例", "77.62%", ("encoder",),
              follows="ffn_with_norm"),
        Claim("attention_12_layers", "attention of the 12 layers", "12 层注意力参数", 28_366_848,
              (f"{_LAYER}.attention",)),
        Claim("ffn_12_layers", "feed-forward networks of the 12 layers", "12 层前馈网络参数", 56_613_888, _FFN_LN,
              follows="ffn_with_norm"),
        Claim("attention_share_of_layer", "attention, share of a layer", "注意力占单层比例", "33.38%",
              (f"{_LAYER}.attention",), scope="copy", of=(_LAYER,), follows="ffn_with_norm"),
        Claim("ffn_share_of_layer", "feed-forward network, share of a layer", "前馈网络占单层比例", "66.62%",
              _FFN_LN, scope="copy", of=(_LAYER,), follows="ffn_with_norm"),
        Claim("pooler", "Pooler", "Pooler 层", 590_592, ("pooler",)),
        Claim("pooler_share", "Pooler, share", "Pooler 层占比", "0.54%", ("pooler",)),
    ),
)

TRANSFORMER_PARAMETER_COUNT = Article(
    key="transformer-parameter-count", file="transformer-parameter-count.zh.txt",
    title="自己动手计算Transformer模型参数，深入了解模型内部机制",
    title_en="Count the Transformer's parameters yourself, and see how the model works inside",
    en="the base model of Attention Is All You Need, counted by hand",
    zh="手工计算《Attention Is All You Need》中 base 模型的参数量",
    preset="transformer-base-article",
    accounting_en="weights only (no biases, no LayerNorm), V = 32,000, learned positions, output tied to the "
                  "embedding",
    accounting_zh="只计权重（不计偏置和 LayerNorm），V = 32,000，可学习位置编码，输出层与词嵌入共享权重",
    claims=(
        Claim("word_embedding", "word embedding", "词嵌入", 16_384_000, ("embeddings.shared",)),
        Claim("positions", "learned positional encoding", "可学习位置编码", 262_144, ("embeddings.positions",)),
        Claim("encoder", "encoder (6 layers)", "编码器（6 层）", 18_874_368, ("encoder",)),
        Claim("decoder", "decoder (6 layers)", "解码器（6 层）", 25_165_824, ("decoder",)),
        Claim("output_untied", "output layer, if not shared", "输出层（若不共享权重）", "16.38 million",
              ("output",), approx=True, switches={"tie": False}, claimed_zh="大约 16.38 百万"),
        Claim("total", "Transformer base in total", "Transformer Base 总参数量", "about 60M", (TOTAL,),
              approx=True, claimed_zh="大约为60M"),
    ),
    remarks=(
        ("The paper's English–German model shares a vocabulary of about 37,000 byte-pair tokens; its "
         "English–French model uses 32,000 word pieces, the size the article takes.",
         "论文中英德模型共享约 37,000 个 BPE 词元的词表；英法模型用 32,000 个 word-piece，原文取的正是这个数。"),
        ("The paper's base model uses fixed sinusoidal positional encodings, which hold no parameters; the "
         "article counts learned ones, 262,144 parameters, its own choice (it notes that the paper found both "
         "about as good).",
         "论文的 base 模型用固定的正弦位置编码，没有参数；原文按可学习位置编码计入 262,144 个参数，这是原文自己的"
         "选择（原文也提到论文发现两者效果几乎没有区别）。"),
        ("The article's accounting leaves out the biases and the LayerNorms (a scale and a shift of $H$ each per "
         "norm): the model has them, and the preset `transformer-base` counts them.",
         "原文的口径不计偏置和 LayerNorm（每个归一化有 $H$ 个缩放参数和 $H$ 个平移参数，共 $2H$ 个）：模型里有这些参数，预设 "
         "`transformer-base` 把它们计算在内。"),
        ("It calls the decoder's second attention “编码器-解码器自注意力”, encoder–decoder self-attention. It is "
         "cross-attention: its queries come from the decoder, its keys and values from the encoder's output. Its "
         "count is as the article has it: four $H \\times H$ projections, $4H^2$ in this accounting.",
         "原文把解码器的第二个注意力称为“编码器-解码器自注意力”；它其实是交叉注意力，不是自注意力：查询来自解码器，键和值来自"
         "编码器的输出。它的参数量与原文一致：四个 $H \\times H$ 的投影，在这个口径下共 $4H^2$ 个。"),
        ("It says classic Transformer models such as BERT and GPT usually use 12 encoder layers. BERT-base has 12 "
         "encoder layers (BERT-large 24); GPT's 12 layers are decoder layers, masked self-attention without "
         "cross-attention and without an encoder. The model the article counts has 6 encoder and 6 decoder layers.",
         "原文说经典的 Transformer 模型（如 BERT 和 GPT）通常使用 12 层编码器。BERT-base 确实是 12 层编码器（BERT-large "
         "是 24 层）；GPT 的 12 层则是解码器层：只有掩蔽自注意力，没有交叉注意力，也没有编码器。原文计算的模型是 6 层编码器"
         "加 6 层解码器。"),
        ("It says the concatenation and linear transformation that end multi-head attention “introduce a "
         "non-linear transformation” (引入非线性变换). Concatenating the heads and multiplying by $W^O$ are both "
         "linear; the non-linearities are the softmax inside each head and the feed-forward network's activation. "
         "The count does not change.",
         "原文说多头注意力最后的拼接和线性变换“引入非线性变换”。拼接各个头、再乘以 $W^O$，都是线性运算；非线性来自每个头内部的"
         " softmax 和前馈网络的激活函数。参数量不受影响。"),
    ),
    related=("transformer-base",),
)

ARTICLES: tuple[Article, ...] = (BERT_PARAMETER_COUNT, BERT_ARCHITECTURE, TRANSFORMER_PARAMETER_COUNT)


# -- checking -------------------------------------------------------------------------------

def _contributions(m) -> dict[str, tuple[int, int]]:
    """Relative path → (one copy's count, every copy's count), from the model's exact evaluation."""
    out = {}

    def visit(block, rel: str, copies: int) -> None:
        counts = m.counts_of(block)
        copies *= counts.repeat
        out[rel] = (counts.total, copies * counts.total)
        for child in block.children:
            visit(child, f"{rel}.{child.name}" if rel else child.name, copies)

    visit(m.tree, "", 1)
    return out


def value_of(claim: Claim, m) -> int | sp.Rational:
    """The right figure for ``claim`` on model ``m`` (exact)."""
    if claim.switches:
        m = m.with_switches(**claim.switches)
    parts = _contributions(m)

    def amount(paths):
        total = 0
        for p in paths:
            if p == TOTAL:
                total += m.count
            elif p == TRAINABLE:
                total += m.trainable
            else:
                one, every = parts[p]
                total += one if claim.scope == "copy" else every
        return total

    value = amount(claim.parts)
    if claim.is_share:
        return sp.Rational(value, amount(claim.of) if claim.of else m.count)
    return value


def check(claim: Claim, m) -> ClaimCheck:
    value = value_of(claim, m)
    if claim.is_share:
        right = percent(value)
        status = "ok" if right == claim.claimed else "wrong"
        claimed = claim.claimed
    elif claim.approx:
        right = thousands(value)
        status = "approx"
        claimed = str(claim.claimed)
    else:
        right = thousands(value)
        status = "ok" if value == claim.claimed else "wrong"
        claimed = thousands(claim.claimed)
    return ClaimCheck(claim, value, claimed, right, status)


def reproduces(m, preset_name: str) -> bool:
    """True when ``m`` is the preset's model: same family, values, switches, and no head."""
    preset = all_presets().get(preset_name)
    if preset is None or m.family.name != preset.family or m.head is not None:
        return False
    values = {k: parse_value(k, v) for k, v in preset.values.items()}
    if {s.name: v for s, v in m.values.items()} != {k: v for k, v in values.items()
                                                     if any(s.name == k for s in m.symbols)}:
        return False
    return m.switches == m.family.resolve(dict(preset.switches), None)


def notes_for(m) -> tuple[Note, ...]:
    """The article notes that apply to ``m`` (those whose preset it reproduces)."""
    return tuple(Note(a, tuple(check(c, m) for c in a.claims)) for a in ARTICLES if reproduces(m, a.preset))


def related_for(m) -> tuple[dict, ...]:
    """Articles that count ``m``'s model in another accounting: article, its preset and both totals."""
    out = []
    for a in ARTICLES:
        if any(reproduces(m, p) for p in a.related):
            other = model(a.preset)
            claimed = next((c for c in a.claims if c.parts == (TOTAL,)), None)
            out.append({"key": a.key, "file": a.file, "title": a.title, "title_en": a.title_en, "preset": a.preset,
                        "accounting_en": a.accounting_en, "accounting_zh": a.accounting_zh,
                        "claimed_en": str(claimed.claimed) if claimed else "",
                        "claimed_zh": (claimed.claimed_zh or str(claimed.claimed)) if claimed else "",
                        "preset_total": other.count, "total": m.count, "difference": m.count - other.count})
    return tuple(out)
