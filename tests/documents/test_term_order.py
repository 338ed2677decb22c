"""A subtotal prints its numbers in the order of its formula's terms: ``X = a + b + c = n_a + n_b + n_c``, each
number the value of the term above it, not ``n_c + n_a + n_b``."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.documents.test_formula_roundtrip import ours, parse
from tests.reference import ROOT

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.md$", p.name))
SUM_OF_NUMBERS = re.compile(r"^\$\$(.+) = ((?:[\d{},]+ \+ )+[\d{},]+) = ([\d{},]+)\$\$$", re.M)
SYMBOL_ROW = re.compile(r"^\| \$([^$]+)\$ \| [^|]+ \| \$([^$]+)\$ \|$", re.M)


def top_level_terms(tex: str) -> list[str]:
    """``tex`` cut at its top-level `` + `` (outside parentheses and braces)."""
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(tex):
        depth += ch in "({[" or tex.startswith(r"\left", i)
        depth -= ch in ")}]" or tex.startswith(r"\right", i)
        if depth == 0 and tex.startswith(" + ", i):
            terms.append(tex[start:i])
            start = i + 3
    return [t.strip() for t in terms + [tex[start:]]]


def term_groups(formula: str) -> list[list[str]]:
    """The ways ``formula`` reads as a sum of terms: its top-level terms, and for a product of a factor and a
    parenthesised sum (``H \\left(P + V\\right)``), the factor times each term of the sum."""
    groups = [top_level_terms(formula)]
    product = re.fullmatch(r"(.+?) \\left\((.+)\\right\)|\\left\((.+)\\right\) (.+)", formula)
    if product and "\\left(" not in (product[1] or product[4]):
        factor, inner = (product[1], product[2]) if product[1] else (product[4], product[3])
        groups.append([f"{factor} \\left({term}\\right)" for term in top_level_terms(inner)])
    return groups


def values(text: str) -> dict:
    return {ours(parse(symbol)).free_symbols.pop(): parse(value) for symbol, value in SYMBOL_ROW.findall(text)}


def misordered(text: str) -> list[str]:
    """The sums whose numbers are their terms' values in another order."""
    at, out = values(text), []
    for formula, numbers, _ in SUM_OF_NUMBERS.findall(text):
        printed = [int(n.replace("{,}", "")) for n in numbers.split(" + ")]
        for terms in term_groups(formula):
            if len(terms) != len(printed):
                continue
            try:
                evaluated = [ours(parse(term)).xreplace(at) for term in terms]
            except Exception:  # a term the parser cannot read is not one this check can judge
                continue
            if all(v.is_Integer for v in evaluated) and Counter(map(int, evaluated)) == Counter(printed) \
                    and list(map(int, evaluated)) != printed:
                out.append(f"{formula} = {numbers}")
    return out


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_a_sum_prints_its_numbers_in_the_order_of_its_terms(path):
    assert misordered(path.read_text(encoding="utf-8")) == []


def test_the_check_sees_numbers_out_of_order():
    text = "| $V$ | vocabulary | $10$ |\n| $H$ | hidden | $2$ |\n\n$$V H + 2 H = 4 + 20 = 24$$\n"
    assert misordered(text) == ["V H + 2 H = 4 + 20"]
    assert misordered(text.replace("4 + 20", "20 + 4")) == []
    factored = text.replace("V H + 2 H = 4 + 20", "H \\left(2 + V\\right) = 20 + 4")
    assert misordered(factored) == ["H \\left(2 + V\\right) = 20 + 4"]
