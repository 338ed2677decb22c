"""A subtotal's label says what it adds up (a component, one copy of a layer, a part of one layer), so no two
subtotals of a document share a label: T5's encoder and decoder each have a feed-forward network, and the two
sums are told apart by the layer they sit in."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.reference import ROOT

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.(md|tex)$", p.name))
MARKDOWN = [p for p in DOCUMENTS if p.suffix == ".md"]


def subtotal_labels(text: str) -> list[str]:
    """The labels before a display that adds parts up (``= a + b = n``); not a repeat's "L = 12 copies:"."""
    lines = text.split("\n")
    return [line for line, blank, display in zip(lines, lines[1:], lines[2:])
            if re.search(r"[:：]$", line) and not blank and display.startswith("$$") and " + " in display
            and not line.startswith(("$", "|", "-", "(")) and "copies" not in line and "份" not in line]


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
def test_no_two_subtotals_of_a_document_share_a_label(path):
    labels = subtotal_labels(path.read_text(encoding="utf-8"))
    assert labels and not [label for label, n in Counter(labels).items() if n > 1]


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if ".en." in p.name], ids=lambda p: p.name)
def test_a_subtotal_is_labelled_by_what_it_adds_up_not_by_how(path):
    assert "the parts added up" not in path.read_text(encoding="utf-8")


def test_t5_labels_each_sum_by_the_layer_it_sits_in():
    labels = subtotal_labels((ROOT / "docs" / "t5-base.en.md").read_text(encoding="utf-8"))
    assert "Feed-forward network with its RMSNorm in one encoder layer:" in labels
    assert "Feed-forward network with its RMSNorm in one decoder layer:" in labels
    zh = subtotal_labels((ROOT / "docs" / "t5-base.zh.md").read_text(encoding="utf-8"))
    assert "单个编码器层中，前馈网络（Feed Forward）及其归一化（RMSNorm）小计：" in zh
