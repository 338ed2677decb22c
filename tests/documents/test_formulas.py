"""Formulas a student reads as what they are: a coefficient in front of the letters it multiplies, a sum that is
multiplied in parentheses.

``L 2 H (2AD + F + 1)`` renders as "L2H(…)"; ``3 L + 6 L_d (H² + H)`` says
3L + 6L_d(H² + H).  The generated documents (docs/, kept equal to a fresh
rendering by test_regenerate.py) are read here for the first, and the printer
is checked on the second.
"""

import re

import pytest
import sympy as sp

from symparams.core.symbols import H, L, L_d
from symparams.documents.formulas import latex, product_latex
from tests.reference import ROOT

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.(md|tex)$", p.name))

#: math: $…$, $$…$$, \[…\] and align blocks
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$|\\\[.*?\\\]|\\begin\{align\*?\}.*?\\end\{align\*?\}", re.S)
#: a letter (with a subscript or a power), or a closing parenthesis, then a number: a coefficient after a symbol
_NUMBER_AFTER_SYMBOL = re.compile(r"(?<![\\A-Za-z])(?:[A-Za-z](?:_\{\w+\})?(?:\^\{\w+\})?|\\right\)|\\biggr\)|\\Bigr\)) \d")


def numbers_after_symbols(text: str) -> list:
    return [m.group(0) for math in _MATH.findall(text) for m in _NUMBER_AFTER_SYMBOL.finditer(math)]


def test_the_documents_are_read():
    assert len(DOCUMENTS) >= 4 * 80


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_no_document_prints_a_coefficient_after_a_symbol(path):
    assert not numbers_after_symbols(path.read_text(encoding="utf-8"))


def test_the_check_finds_what_the_documents_printed_before():
    assert numbers_after_symbols(r"$$L 2 H \left(2 A D + F + 1\right) = 12 \times 7{,}079{,}424$$") == ["L 2"]
    assert numbers_after_symbols(r"$N_{e} 3 F_{e} H$ and $H^{2} 4$") == ["N_{e} 3", "H^{2} 4"]
    assert numbers_after_symbols(r"$\approx 12 L H^{2}$ and $2 \times 768$ and Llama 2") == []


def test_copies_of_a_count_put_the_coefficient_first_and_a_sum_in_parentheses():
    one_layer = sp.Mul(2, H, sp.Symbol("F") + 1, evaluate=False)
    assert latex(sp.Mul(L, one_layer, evaluate=False)) == r"2 L H \left(F + 1\right)"
    assert product_latex(3 * L + 6 * L_d, H**2 + H) == r"\left(3 L + 6 L_{d}\right) \left(H^{2} + H\right)"
    assert product_latex(1, H**2 + H) == "H^{2} + H"
