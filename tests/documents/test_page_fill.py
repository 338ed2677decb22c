"""No page but the last is left mostly blank: every other page of a compiled document is at least 60 % full.

A page's fill is how far down its text area its lowest line of text reaches: the word boxes ``pdftotext
-bbox`` gives, against the text area that geometry writes to the log.  A heading pushed to the next page, a
table or chart that did not fit below the text, or a figure waiting for room all leave a short page.

Compiled: BERT-base in both languages (the review found a 40 % gap before a table in Chinese and a
stranded heading in English), Llama 3 8B in Chinese (its chart was separated from its lead) and
DeepSeek-V3 in English (the largest diagram and summary table).  Nothing is skipped: a missing TeX is a
failure.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.reference.documents import document
from tests.reference.latex import compile_all

pytestmark = pytest.mark.tex

CASES = {
    "bert-base.en": ("bert-base", "en"),
    "bert-base.zh": ("bert-base", "zh"),
    "llama-3-8b.zh": ("llama-3-8b", "zh"),
    "deepseek-v3.en": ("deepseek-v3", "en"),
}

#: a page that is not the last must reach this far down its text area
FULL_ENOUGH = 0.6

_PT_PER_BP = 72.27 / 72  # TeX points per PDF point
_PAGE = re.compile(r"<page [^>]*>(.*?)</page>", re.S)
_WORD_BOTTOM = re.compile(r'<word [^>]*yMax="([\d.]+)"')


def _length(log: str, name: str) -> float:
    """A length geometry reports in the log (``* \\textheight=702.78308pt``), in TeX points."""
    found = re.search(r"^\* \\" + name + r"=(-?[\d.]+)pt$", log, flags=re.M)
    assert found, f"geometry reports no \\{name} in the log"
    return float(found.group(1))


def text_area(log: str) -> tuple[float, float]:
    """(top, height) of the text area in PDF points, from the page layout in the log."""
    top = 72.27 + _length(log, "voffset") + _length(log, "topmargin") + _length(log, "headheight") \
        + _length(log, "headsep")
    return top / _PT_PER_BP, _length(log, "textheight") / _PT_PER_BP


def page_fill(pdf: Path, log: str) -> list[float]:
    """How far down its text area each page's lowest line reaches (0 empty, 1 full); the page number in
    the footer, below the text area, is left out."""
    top, height = text_area(log)
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout
    fills = []
    for page in _PAGE.findall(boxes):
        bottoms = [float(y) for y in _WORD_BOTTOM.findall(page) if float(y) <= top + height + 2]
        fills.append(round((max(bottoms, default=top) - top) / height, 3))
    return fills


@pytest.fixture(scope="session")
def fills():
    sources = {name: document(preset, "tex", lang) for name, (preset, lang) in CASES.items()}
    compiled = compile_all(sources)
    out = {}
    for name, (rc, log, pdf) in compiled.items():
        assert rc == 0, (name, log[-2000:])
        out[name] = page_fill(pdf, log)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_no_page_but_the_last_is_less_than_60_percent_full(fills, name):
    pages = fills[name]
    assert len(pages) > 3, pages
    short = {number: fill for number, fill in enumerate(pages[:-1], 1) if fill < FULL_ENOUGH}
    assert not short, f"{name}: pages less than {FULL_ENOUGH:.0%} full: {short} (all: {pages})"


SHORT_PAGE = r"""\documentclass[11pt,a4paper]{article}
\usepackage[margin=2.5cm]{geometry}
\begin{document}
\noindent\rule{1pt}{0.3\textheight}\par Text on a third of the first page.
\clearpage
\noindent\rule{1pt}{0.9\textheight}\par Text at the foot of a full page.
\clearpage
A last line.
\end{document}
"""


def test_the_fill_measure_finds_a_short_page_and_a_full_one():
    rc, log, pdf = compile_all({"short": SHORT_PAGE})["short"]
    assert rc == 0, log[-2000:]
    first, second, last = page_fill(pdf, log)
    assert 0.3 < first < FULL_ENOUGH  # the rule and one line below it
    assert second > 0.9
    assert last < 0.1
