"""No half-blank page and no stranded conclusion in a compiled document.

Every page but the last is at least 60 % full: a page's fill is how far down its text area its lowest line
of text reaches (the word boxes ``pdftotext -bbox`` gives, against the text area that geometry writes to the
log).  A heading pushed to the next page, a table or chart that did not fit below the text, or a figure
waiting for room all leave a short page.

The last page holds the whole conclusion, heading and text, and something before it: the template forbids a
page break inside the conclusion and before its heading, so the last lines of the paragraph before it come
along.  Without that rule T5-base's conclusion left its last three lines alone on a page (6 % full) and
Mixtral's stood alone on one.

Compiled: the documents whose layout differs, in both languages where the languages break differently:
T5-base, Llama 3 8B, Mixtral 8x7B, DeepSeek-V3 and GPT-2 in English and Chinese (encoder–decoder,
grouped-query attention, experts, two kinds of layers and the largest diagram and summary table, a classic
decoder), BERT-base in both (the review found a 40 % gap before a table in Chinese and a stranded heading
in English; its errata tables come before the conclusion) and the article's Transformer in Chinese (a second
encoder–decoder, with the article's errata).  One test a document compiles it, so that two workers share
the work (about 3.5 s of processor time a document, 13 in all; BERT-base in both languages and DeepSeek-V3
in Chinese are compiled for the compile checks too, once per worker).  Nothing is skipped: a missing TeX is a failure.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.reference.documents import document
from tests.reference.latex import compile_all

pytestmark = pytest.mark.tex

CASES = {
    f"{preset}.{lang}": (preset, lang)
    for preset in ("t5-base", "llama-3-8b", "mixtral-8x7b", "deepseek-v3", "gpt2", "bert-base")
    for lang in ("en", "zh")
} | {"transformer-base-article.zh": ("transformer-base-article", "zh")}

#: a page that is not the last must reach this far down its text area
FULL_ENOUGH = 0.6

_PT_PER_BP = 72.27 / 72  # TeX points per PDF point
_PAGE = re.compile(r"<page [^>]*>(.*?)</page>", re.S)
_WORD = re.compile(r'<word [^>]*yMin="([\d.]+)" [^>]*yMax="([\d.]+)">([^<]*)</word>')
_CONCLUSION = re.compile(r"\\section\*\{(\d+)\.\\quad ([^}]*)\}\\label\{sec:conclusion\}")


class Word(NamedTuple):
    text: str
    top: float
    bottom: float


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


def pages(pdf: Path, log: str) -> list[list[Word]]:
    """The words of each page, top to bottom, inside the text area (the page number in the footer, below
    it, is left out)."""
    top, height = text_area(log)
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout
    return [[Word(text, float(y0), float(y1)) for y0, y1, text in _WORD.findall(page) if float(y1) <= top + height + 2]
            for page in _PAGE.findall(boxes)]


def page_fill(pdf: Path, log: str) -> list[float]:
    """How far down its text area each page's lowest line reaches (0 empty, 1 full)."""
    top, height = text_area(log)
    return [round((max((w.bottom for w in words), default=top) - top) / height, 3) for words in pages(pdf, log)]


def lines_above_the_conclusion(source: str, pdf: Path, log: str) -> int | None:
    """How many words the last page holds above the conclusion's heading; None if the heading (``\\section*``
    labelled ``sec:conclusion`` in the source) is not on the last page."""
    number, title = _CONCLUSION.search(source).groups()
    last = pages(pdf, log)[-1]
    for before, word in zip(last, last[1:]):
        if before.text == f"{number}." and word.text == title:
            return sum(w.bottom <= before.top for w in last)
    return None


def compiled(name: str) -> tuple[str, Path, str]:
    """(LaTeX source, PDF, log) of one case, compiled in this worker."""
    preset, lang = CASES[name]
    source = document(preset, "tex", lang)
    rc, log, pdf = compile_all({name: source})[name]
    assert rc == 0, (name, log[-2000:])
    return source, pdf, log


@pytest.mark.parametrize("name", list(CASES))
def test_no_page_but_the_last_is_less_than_60_percent_full_and_the_last_ends_the_conclusion(name):
    # one test a document: two workers splitting a document's checks would each compile it
    source, pdf, log = compiled(name)
    fills = page_fill(pdf, log)
    assert len(fills) > 3, fills
    short = {number: fill for number, fill in enumerate(fills[:-1], 1) if fill < FULL_ENOUGH}
    assert not short, f"{name}: pages less than {FULL_ENOUGH:.0%} full: {short} (all: {fills})"
    above = lines_above_the_conclusion(source, pdf, log)
    assert above is not None, f"{name}: the conclusion does not start on the last page"
    assert above > 0, f"{name}: the conclusion stands alone on the last page"


SHORT_PAGE = r"""\documentclass[11pt,a4paper]{article}
\usepackage[margin=2.5cm]{geometry}
\begin{document}
\noindent\rule{1pt}{0.3\textheight}\par Text on a third of the first page.
\clearpage
\noindent\rule{1pt}{0.9\textheight}\par Text at the foot of a full page.
\clearpage
\section*{3.\quad Conclusion}\label{sec:conclusion}
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


def test_the_conclusion_check_finds_a_conclusion_alone_on_its_page_and_one_after_text():
    rc, log, pdf = compile_all({"short": SHORT_PAGE})["short"]
    assert lines_above_the_conclusion(SHORT_PAGE, pdf, log) == 0
    assert lines_above_the_conclusion(SHORT_PAGE.replace("Conclusion}", "Summary}"), pdf, log) is None
    after_text = SHORT_PAGE.replace("{0.9\\textheight}", "{0.5\\textheight}") \
        .replace("\\clearpage\n\\section", "\\section")
    rc, log, pdf = compile_all({"after text": after_text})["after text"]
    assert rc == 0, log[-2000:]
    assert lines_above_the_conclusion(after_text, pdf, log) > 0
