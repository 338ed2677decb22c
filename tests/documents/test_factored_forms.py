"""Count formulas kept as the model is built: no SymPy expansion into negative terms.

DeepSeek's first ``L_f`` layers are dense and the other ``L − L_f`` have
experts; expanded, the count reads ``H(3FL_f − 3F_eL_fN_e − … + L(…))``,
terms no part of the model holds.  Every count display of every generated
document (docs/, kept equal to a fresh rendering by test_regenerate.py) is read
here: a minus may only stand in a difference of two sizes, ``(L − L_f)``.
"""

import re

import pytest
import sympy as sp

from symparams import model
from symparams.core.algebra import closed_form
from symparams.core.symbols import L, L_f
from tests.reference import ROOT

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.md$", p.name))

_DISPLAY = re.compile(r"\$\$\n?(.*?)\n?\$\$", re.S)
#: the displays that give a count: N, N(A), the FLOPs, LoRA's parameters, and the summary's long formulas
_COUNT = re.compile(r"^(?:\\begin\{aligned\}\s*)?(?:N|N\(A\)|\\mathrm\{FLOPs\}\(s, b\)|P_\{\\text\{LoRA\}\})\s*&?=")
_FOOTNOTE = re.compile(r"^\(\d+\) .+: $")
#: a difference of two sizes or numbers in parentheses: (L - L_{f}), (61 - 3)
_OPEN = re.compile(r"\\(?:left|bigl|Bigl|biggl|Biggl)\(")
_CLOSE = re.compile(r"\\(?:right|bigr|Bigr|biggr|Biggr)\)")
_DIFFERENCE = re.compile(r"\((?:[A-Za-z]|\d+)(?:_\{\w+\})? - (?:[A-Za-z]|\d+)(?:_\{\w+\})?\)")


def negative_terms(text: str) -> list[str]:
    """The count displays of a Markdown document that subtract anything but a difference of two sizes."""
    found = []
    for mo in _DISPLAY.finditer(text):
        body = mo.group(1).strip()
        before = text[:mo.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if not (_COUNT.match(body) or _FOOTNOTE.match(before)):
            continue
        if not _COUNT.match(body) and not body.startswith(r"\begin{aligned}") and "=" in body:
            continue
        rhs = body.split("=", 1)[1] if _COUNT.match(body) else body
        rhs = _CLOSE.sub(")", _OPEN.sub("(", rhs))
        if re.search(r"(^|[=(&{])\s*-|\s-\s", _DIFFERENCE.sub("D", rhs)):
            found.append(body[:80])
    return found


def test_the_documents_are_read():
    assert len(DOCUMENTS) >= 2 * 80


def test_no_count_formula_is_expanded_into_negative_terms():
    assert not {p.name: n for p in DOCUMENTS if (n := negative_terms(p.read_text(encoding="utf-8")))}


def test_the_check_finds_what_deepseek_printed_before():
    closed = "\n".join([r"$$", r"\begin{aligned}",
                        r"N &= H \bigl(3 F L_{f} - 3 F_{e} L_{f} N_{e} - 3 F_{e} L_{f} N_{s} \\",
                        r"&\quad + L (A D_{v} + N_{e} + 2) - L_{f} N_{e} + V + 1\bigr)", r"\end{aligned}", r"$$"])
    footnote = "(1) Decoder: \n\n$$\n\\begin{aligned}\n&H + 1 \\\\\n&\\quad - L_{f} N_{e}\n\\end{aligned}\n$$"
    assert negative_terms(closed) and negative_terms(footnote)
    kept = "$$N = H (V + 1) + L_{f} (H + 3 F) + (L - L_{f}) (H + N_{e}) + (61 - 3) \\times 2$$"
    assert not negative_terms(kept)
    assert negative_terms(r"$$N(A) = V \cdot H + \left(-1 + L\right) H$$")  # ModernBERT's, before
    assert not negative_terms(r"$$N(A) = V \cdot H + \left(L - 1\right) H$$")


@pytest.mark.parametrize("name", ["deepseek-v3", "deepseek-v2-lite"])
def test_the_kept_form_is_the_count_with_each_kind_of_layer_once_and_no_negative_term(name):
    m = model(name)
    for total in (m.tree.total, m.tree.active_total):
        kept = closed_form(total)
        assert sp.expand(kept - total) == 0
        kinds = [f for t in sp.Add.make_args(kept) for f in sp.Mul.make_args(t) if f in (L_f, L - L_f)]
        assert sorted(kinds, key=str) == sorted([L_f, L - L_f], key=str)  # one dense layer, one with experts
        per_copy = [sp.expand(t / f) for t in sp.Add.make_args(kept) for f in sp.Mul.make_args(t) if f in kinds]
        assert not any(u.could_extract_minus_sign() for p in per_copy for u in sp.Add.make_args(p))


def test_a_difference_of_two_sizes_is_never_cut_across_two_lines():
    """A long display is broken between terms; ``(L - L_{f})`` is one factor and stays on one line."""
    cut = re.compile(r"\((?:[A-Za-z]|\d+)(?:_\{\w+\})? \\\\\n&\\quad - ")
    assert cut.search("+ (L \\\\\n&\\quad - L_{f}) \\bigl(2 A b s")  # how DeepSeek's FLOPs broke
    assert not {p.name for p in DOCUMENTS if cut.search(p.read_text(encoding="utf-8"))}
