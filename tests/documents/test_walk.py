"""The documents walk a model as its article does: BERT's layer as multi-head attention, Add & Norm,
feed-forward, Add & Norm, with named subtotals and a running total."""

from __future__ import annotations

import pytest

from symparams import model
from symparams.documents.derivation import derive, presented
from symparams.documents.render import render
from tests.reference.variants import one_preset_per_variant

# BERT-base as Devlin et al. give it: V = 30522, P = 512, S = 2, H = 768, L = 12, intermediate 3072
H, INTER = 768, 3072
ATTENTION = 4 * (H * H + H)                     # Q, K, V and W^O, each a weight and a bias
FEED_FORWARD = (H * INTER + INTER) + (INTER * H + H)
LAYER = ATTENTION + 2 * H + FEED_FORWARD + 2 * H


def test_the_article_subtotals_by_hand():
    assert (ATTENTION, FEED_FORWARD, LAYER) == (2_362_368, 4_722_432, 7_087_872)  # the article's figures


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bert_walkthrough_shows_the_article_subtotals_before_the_errata(lang):
    text = render(model("bert-base"), format="md", lang=lang)
    walk = text[text.index("## 2."):text.index("## 3.")]
    for figure in (ATTENTION, FEED_FORWARD, LAYER):
        assert f"{figure:,}".replace(",", "{,}") in walk
    titles = {"en": ["Multi-head attention", "Add & Norm", "Feed-forward network", "Add & Norm"],
              "zh": ["多头注意力", "Add & Norm", "前馈网络", "Add & Norm"]}[lang]
    headings = [line for line in walk.splitlines() if line.startswith("#### ")]
    assert [next(t for t in titles if t in h) for h in headings[-4:]] == titles


def test_bert_layer_steps_name_the_transformers_modules():
    layer = derive(model("bert-base")).sections[1]
    assert [step.names for step in layer.children] == [
        ("attention.self", "attention.output.dense"), ("attention.output.LayerNorm",),
        ("intermediate.dense", "output.dense"), ("output.LayerNorm",)]
    assert [step.count for step in layer.children] == [ATTENTION, 2 * H, FEED_FORWARD, 2 * H]


@pytest.mark.parametrize("name", one_preset_per_variant())
def test_the_walk_holds_every_module_once_and_runs_up_to_the_total(name):
    m = model(name)
    leaves = sorted(id(b) for _, b, _ in m.tree.walk() if b.is_leaf)
    assert sorted(id(b) for _, b, _ in presented(m.tree).walk() if b.is_leaf) == leaves
    sections = derive(m).sections
    assert sections[-1].running == m.count
    assert [s.running for s in sections] == [sum(s.contribution for s in sections[:i + 1])
                                             for i in range(len(sections))]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_parts_carry_no_share_of_their_own(lang):
    """Shares belong to the summary table; the walk states one per component."""
    text = render(model("llama-3-8b"), format="md", lang=lang)
    walk = text[text.index("## 2."):text.index("## 3.")]
    share = {"en": "of the whole model", "zh": "占总参数的"}[lang]
    assert walk.count(share) == len(derive(model("llama-3-8b")).sections)
