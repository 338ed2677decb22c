"""What every document would repeat is said once, in docs/documents.md, and linked; what stays is about the model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.reference.documents import document

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "documents.md"

#: sentences every document used to carry, whatever its model (each language's own wording)
MOVED = {"en": ["a good test of knowing the model", "FlopCounterMode", "KEY=VALUE",
                "The formula holds for any sizes", "Other variants are counted the same way"],
         "zh": ["理所应当", "FlopCounterMode", "KEY=VALUE", "这个公式对任意尺寸都成立", "其余的变种也可以"]}
SAMPLE = ["bert-base", "t5-base", "deepseek-v3", "llama-3-8b"]


@pytest.fixture(scope="session")
def docs():
    return {(name, lang, fmt): document(name, fmt, lang)
            for name in SAMPLE for lang in ("en", "zh") for fmt in ("md", "tex")}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_the_shared_text_is_in_the_guide_and_linked_not_repeated(docs, lang, fmt):
    for name in SAMPLE:
        text = docs[name, lang, fmt].split("\\begin{document}")[-1]  # the LaTeX preamble is no prose
        assert [s for s in MOVED[lang] if s in text] == [], name
        assert ("[docs/documents.md](documents.md)" if fmt == "md" else r"\texttt{docs/documents.md}") in text
    guide = GUIDE.read_text(encoding="utf-8")
    reworded = ("Other variants are counted the same way", "其余的变种也可以", "The formula holds for any sizes",
                "这个公式对任意尺寸都成立")
    assert all(s in guide for s in MOVED[lang] if s not in reworded)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_only_the_bert_documents_start_the_head_count_from_the_bert_article(docs, lang):
    cites = {"en": "bert-parameter-count.zh.txt", "zh": "《Bert系列之模型参数计算》一文的结尾"}[lang]
    heads = {name: docs[name, lang, "md"].split("## 5.")[1].split("## 6.")[0]
             for name in SAMPLE}
    assert [name for name, text in heads.items() if cites in text] == ["bert-base"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_mixture_of_experts_aside_is_only_where_the_model_has_experts(docs, lang):
    aside = {"en": "of a mixture of experts, those a token uses", "zh": "混合专家模型取一个词元用到的部分"}[lang]
    assert [name for name in SAMPLE if aside in docs[name, lang, "md"]] == ["deepseek-v3"]


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", SAMPLE)
def test_the_kaplan_difference_is_read_at_the_documents_sequence(docs, name, lang):
    """The sentence after the difference formula gives exact − estimate at the document's s, and its share."""
    text = docs[name, lang, "md"]
    pattern = {"en": r"([\d,]+) FLOPs here, against the exact ([\d,]+)\.",  # noqa: E501
               "zh": r"这里每个词元是 ([\d,]+) 次，精确值是 ([\d,]+) 次"}[lang]
    estimate, exact = map(_number, re.search(pattern, text).groups())
    gap = {"en": r"this difference is (−?)([\d,]+) FLOPs per token", "zh": r"这个差是每个词元 (−?)([\d,]+) 次"}[lang]
    sign, size = re.search(gap, text).groups()
    assert (-1 if sign else 1) * _number(size) == exact - estimate
    share = f"{abs(exact - estimate) * 100 / exact:.2f}%"
    assert share in text.split(size, 1)[1][:120]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bert_explains_its_layernorm_once_and_as_a_scale_and_a_shift(docs, lang):
    text = docs["bert-base", lang, "md"]
    about = {"en": "A learned scale $\\gamma$ and a learned shift $\\beta$ for each feature",
             "zh": "给每个维度一个可学习的缩放 $\\gamma$ 和一个可学习的平移 $\\beta$"}[lang]
    assert text.count(about) == 1
    assert "usually, a shift" not in text and "通常还有一个平移" not in text


def test_a_layernorm_without_a_shift_is_not_said_to_have_one():
    """Cohere's LayerNorms have no bias: the document says a scale only."""
    text = document("command-r-plus", "md", "en")
    assert "and here no shift" in text and "a learned shift $\\beta$" not in text


def test_a_cancelling_head_count_is_pointed_out_once():
    text = document("transformer-base-article", "md", "zh")
    assert text.count("可以看到 $A$ 被约掉了") == 1
