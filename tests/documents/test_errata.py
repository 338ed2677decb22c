"""The comparison with the articles: every slip named as politely as the LayerNorm one, and the errata table
telling the one slip apart from the figures it carries into."""

from __future__ import annotations

import pytest

from tests.reference.documents import document

# BERT-base by hand: the article's feed-forward subtotal with its LayerNorm is short by 2 × 3,072 biases
H, FFN_INNER = 768, 3072
ATTENTION = 4 * (H * H + H) + 2 * H                  # with its LayerNorm: 2,363,904
FFN = 2 * H * FFN_INNER + FFN_INNER + H + 2 * H      # 4,723,968
SLIP = FFN - 2 * FFN_INNER                           # the article's 4,717,824
TOTAL, EMBEDDINGS, POOLER = 109_482_240, 23_837_184, 590_592


def _table(text: str, article: str) -> list[list[str]]:
    """The rows of the errata table of the article whose title holds ``article``."""
    section = text[text.index(article):]
    lines = section.split("\n\n|", 1)[1].split("\n\n", 1)[0].splitlines()
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


@pytest.mark.parametrize("lang, wrong, carried", [("en", "**wrong**", "wrong, carried over"),
                                                  ("zh", "**有误**", "有误（沿用前面的错误）")])
def test_the_errata_table_tells_the_slip_from_the_figures_it_carries_into(lang, wrong, carried):
    rows = _table(document("bert-base", "md", lang), "BERT 模型架构初探")
    verdicts = {row[1]: row[3] for row in rows}
    assert [c for c, v in verdicts.items() if v == wrong] == [f"{SLIP:,}"]
    # what the right sums give with the slip in place of the right subtotal, worked out here by hand
    layer = ATTENTION + SLIP
    follows = {f"{layer:,}", f"{12 * layer:,}", f"{12 * SLIP:,}",
               f"{12 * layer * 100 / TOTAL:.2f}%", f"{ATTENTION * 100 / layer:.2f}%", f"{SLIP * 100 / layer:.2f}%"}
    assert {c for c, v in verdicts.items() if v == carried} == follows
    assert EMBEDDINGS + 12 * layer + POOLER == 109_408_512  # the sum the slip leads to, which the text cites


SLIPS = {
    "transformer-base-article": {"en": [("编码器-解码器自注意力", "cross-attention"), ("BERT and GPT", "decoder layers"),
                                        ("引入非线性变换", "are both linear")],
                                 "zh": [("编码器-解码器自注意力", "交叉注意力"), ("BERT 和 GPT", "解码器层"),
                                        ("引入非线性变换", "都是线性运算")]},
    "bert-base": {"en": [("(Transformer, 1027)", "from 2017"), ("至上而下", "自上而下, top-down")],
                  "zh": [("(Transformer, 1027)", "发表于 2017 年"), ("至上而下", "应为“自上而下”")]},
}


@pytest.mark.parametrize("name", SLIPS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_slip_of_wording_is_quoted_and_put_right(name, lang):
    text = document(name, "md", lang)
    notes = text[text.index("## 10."):]
    for quoted, right in SLIPS[name][lang]:
        line = next((line for line in notes.splitlines() if quoted in line), "")
        assert line.startswith("- ") and right in line, (quoted, right)
