"""The documents of an inferred model (no hand-written family): module paths, shapes, the closed form, the proof.

OLMo-1B's inferred formula holds a whole-number division, the head width
⌊H/A⌋, and its tree declares no attention: the documents must say "closed
form" (not "polynomial"), show no derivative of a floor, no FLOPs section and
no article's story, and the live page must divide as transformers does.
"""

from __future__ import annotations

import json

import pytest

from symparams.documents.render import render
from symparams.families.inferred import model as inferred_model
from tests.documents.test_html_page import cli, open_in_chromium
from tests.reference import ROOT

OLMO_PATH = ROOT / "tests" / "fixtures" / "allenai" / "OLMo-1B-hf.json"
OLMO = json.loads(OLMO_PATH.read_text())


@pytest.fixture(scope="module")
def olmo():
    return inferred_model(OLMO, source="OLMo-1B-hf")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_markdown_walks_the_module_paths_and_adds_up(olmo, lang):
    text = render(olmo, format="md", lang=lang).replace("{,}", ",")  # math writes 1{,}024
    assert "`layers.*`" in text and "`embed_tokens`" in text  # a stack is named by its list, not by "*"
    assert "`*`" not in text
    # hand arithmetic: embeddings V·H, one layer 3FH + 4H² (GQA off: G = A), L = 16 layers
    embeddings, layer = 50304 * 2048, 3 * 8192 * 2048 + 4 * 2048 * 2048
    assert f"{embeddings:,}" in text and f"{layer:,}" in text and f"{embeddings + 16 * layer:,}" in text
    assert embeddings + 16 * layer == olmo.count == 1_176_764_416


def test_the_english_markdown_says_only_what_holds_for_a_floor(olmo):
    text = render(olmo, format="md", lang="en")
    assert "closed form in the sizes" in text and "polynomial" not in text
    assert "derivative" not in text  # ∂N/∂A of ⌊H/A⌋ would be a formal object, not a check
    assert "bert-parameter-count" not in text  # no article tells this model's story
    # the costs traced from transformers' builds, for one sequence of its P = 2,048 positions (the base model, no
    # head): per layer 4H² + 3FH weights on s positions and two s × s products of A heads of 128 (hand arithmetic)
    assert "**4,947,802,324,992** FLOPs" in text
    assert 2 * 2048 * 16 * (4 * 2048**2 + 3 * 8192 * 2048) + 16 * 2 * (2 * 16 * 2048**2 * 128) == 4_947_802_324_992
    # the counterexample: A = 32 with G = 16 kept, the K and V projections halve (hand arithmetic)
    assert "1,109,655,552" in text
    assert 1_176_764_416 - 16 * 2 * 2048 * 1024 == 1_109_655_552


def test_the_chinese_markdown_says_closed_form(olmo):
    text = render(olmo, format="md", lang="zh")
    assert "闭式公式" in text and "多项式" not in text and "《Bert系列之模型参数计算》" not in text


@pytest.mark.browser
def test_the_live_page_divides_as_transformers(tmp_path):
    path = tmp_path / "olmo.html"
    cli("derive", "--config", str(OLMO_PATH), "--format", "html", "-o", str(path))
    dom = open_in_chromium(path, "H=3072&A=24&G=8")
    expected = cli("count", "--config", str(OLMO_PATH), "--set", "H=3072", "--set", "A=24", "--set", "G=8",
                   "--json")
    # head width 3072 // 24 = 128: embeddings V·H, per layer 3FH + 2·(A + G)·128·H
    by_hand = 50304 * 3072 + 16 * (3 * 8192 * 3072 + 2 * (24 + 8) * 128 * 3072)
    assert expected["total"] == by_hand
    assert dom.outputs["total"] == f"{by_hand:,}" == dom.outputs["live-total"]
    assert dom.warnings == ""
