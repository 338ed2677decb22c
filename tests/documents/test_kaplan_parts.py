"""Where Kaplan's forward estimate and the exact count part ways: the parts a document names add up to the
difference it prints, and GPT-2's and T5's parts are what their sizes give by hand."""

from __future__ import annotations

import re

import pytest

from tests.reference import ROOT

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.md$", p.name))
GAP = {"en": re.compile(r"this difference is (−?)([\d,]+) FLOPs per token"),
       "zh": re.compile(r"这个差是每个词元 (−?)([\d,]+) 次")}
SENTENCE = {"en": re.compile(r"Where the difference comes from: (.*?)\. In the estimate"),
            "zh": re.compile(r"差值的来源：(.*?)。估计式中")}
PART = {"en": re.compile(r"(add|adds|take away) ([\d,]+)"), "zh": re.compile(r"(多出|减去) ([\d,]+) 次")}
ADDS = {"add", "adds", "多出"}


def parts(text: str, lang: str) -> list[int] | None:
    found = SENTENCE[lang].search(text)
    if found is None:
        return None
    return [(1 if verb in ADDS else -1) * int(n.replace(",", "")) for verb, n in PART[lang].findall(found[1])]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_the_parts_of_kaplans_difference_add_up_to_it(path):
    lang, text = path.name.rsplit(".", 2)[1], path.read_text(encoding="utf-8")
    gap = GAP[lang].search(text)
    said = parts(text, lang)
    if gap is None or said is None:
        return
    assert said and sum(said) == (-1 if gap[1] else 1) * int(gap[2].replace(",", ""))


def test_gpt2_and_t5_say_where_the_difference_comes_from_as_their_sizes_give_it():
    # GPT-2 at s = 1,024: attention's two products 2·2·s·H per layer against Kaplan's 2·s·H; 2N counts the
    # LayerNorms' γ and β (two per layer and a final one) and the biases of c_attn, c_proj, c_fc, c_proj
    h, layers, s = 768, 12, 1024
    norms_and_biases = (2 * layers + 1) * 2 * h + layers * (3 * h + h + 4 * h + h)
    assert parts((ROOT / "docs" / "gpt2.en.md").read_text(encoding="utf-8"), "en") == \
        [4 * s * h * layers - 2 * s * h * layers, -2 * norms_and_biases]
    # T5-base at s = 2,048: every attention (encoder, decoder, cross) runs two products of 2·s·A·D, against one
    # per self-attention layer; the 5L + 2 RMSNorms of H scales (2 per encoder layer, 3 per decoder layer, 2 final)
    a_d, s = 12 * 64, 2048
    for lang in ("en", "zh"):
        assert parts((ROOT / "docs" / f"t5-base.{lang}.md").read_text(encoding="utf-8"), lang) == \
            [3 * layers * 2 * 2 * s * a_d - 2 * layers * 2 * s * a_d, -2 * (5 * layers + 2) * h]
