"""Each formula a document shows, parsed back with SymPy's LaTeX parser (ANTLR), is the model's expression.

The expected expressions are taken from the Block tree directly (``as_written``,
``count``, ``total``), not from the derivation that printed the formulas.  The
numbers-substituted forms must parse to the count the document states, and
that count must be the tree's.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pytest
import sympy as sp
from sympy.parsing.latex import parse_latex

from symparams import model
from symparams.core.symbols import SYMBOLS
from symparams.documents.derivation import derive, presented
from symparams.families.presets import all_presets
from tests.reference.documents import derived
from tests.reference.variants import one_preset_per_variant

PRESETS = all_presets()


#: a space between two factors, as the documents print products (``2 H``, ``H \\left(r + 1\\right)``)
_JUXTAPOSED = re.compile(r"(\\[A-Za-z]+|[\w})])\s+(?=[\w(]|\\left|\\frac)")


def explicit(tex: str) -> str:
    r"""``tex`` with every product written out as ``\cdot`` and thousands separators dropped: the parser
    reads ``H \left(r + 1\right)`` as a function call and does not know ``23{,}837{,}184``."""
    def product(mo):
        before = mo.group(1)
        return mo.group(0) if before in (r"\times", r"\cdot") else before + r" \cdot "
    return _JUXTAPOSED.sub(product, tex.replace("{,}", ""))


@lru_cache(maxsize=None)
def parse(tex: str) -> sp.Expr:
    expr = parse_latex(explicit(tex)).doit()
    assert isinstance(expr, sp.Basic), f"ambiguous or unparsed: {tex!r} -> {expr!r}"
    return expr


_BY_NAME = {}
for info in SYMBOLS.values():
    _BY_NAME[info.name] = info.symbol
    _BY_NAME[sp.latex(info.symbol)] = info.symbol  # L_d prints as L_{d}


def ours(expr: sp.Expr) -> sp.Expr:
    """``expr`` with the parser's plain symbols mapped back to symparams' symbols by name."""
    # the ANTLR parser reads a subscript of several letters as their product: R_{kv} comes back as R_{k*v}
    return expr.xreplace({s: _BY_NAME[s.name.replace("*", "")] for s in expr.free_symbols})


def same(tex: str, expected) -> bool:
    return sp.expand(ours(parse(tex)) - sp.expand(sp.sympify(expected).doit())) == 0


def one_per_family():
    seen = {}
    for name, preset in PRESETS.items():
        seen.setdefault(preset.family, name)
    return sorted(seen.values())


def test_products_are_read_as_products():
    assert explicit(r"2 H^{2} \left(r + 1\right) + 3 \times 768") == r"2 \cdot H^{2} \cdot \left(r + 1\right) + 3 \times 768"
    assert explicit(r"H \frac{H}{A} + 1{,}536") == r"H \cdot \frac{H}{A} + 1536"


def test_parser_reads_the_per_head_form_and_the_substituted_sum():
    assert same(r"3 \cdot A \cdot \left(H \cdot \frac{H}{A} + \frac{H}{A}\right)", 3 * _BY_NAME["H"] ** 2
                + 3 * _BY_NAME["H"])
    assert parse(r"\left(30522 + 512 + 2\right) \times 768 + 2 \times 768") == 23_837_184
    assert not same(r"V \cdot H + 1", _BY_NAME["V"] * _BY_NAME["H"])


def test_bert_base_embedding_formula_round_trips_to_the_article_figure():
    d = derive(model("bert-base"))
    emb = d.sections[0]
    V, P, S, H = (_BY_NAME[k] for k in "VPSH")
    assert same(emb.formula, (V + P + S) * H + 2 * H)
    assert parse(emb.substituted) == 23_837_184  # the article's (30522+2+512)*768+768*2


@pytest.mark.parametrize("name", one_preset_per_variant())
def test_every_symbolic_formula_is_the_tree_expression(name):
    m = model(name)
    d = derived(name)
    tree = presented(m.tree)  # the tree as the document walks it: its modules are the model's
    for item in d.items:
        block = tree.find(item.block_path)
        if item.leaf:
            expected = item.multiplicity * block.as_written.doit()
        else:
            expected = block.count  # one copy of the group
        assert same(item.formula, expected), (item.path, item.formula)
        outer = tree.find(item.path)
        if item.repeat != 1:
            # all copies of the item: the outer block's total (tied blocks total 0; their formula is the tied size)
            expected_total = item.multiplicity * outer.repeat * expected if outer is block else outer.total
            if not item.tied_to:
                assert same(item.total_formula, expected_total), (item.path, item.total_formula)
    assert same(d.closed_formula, m.tree.total)
    assert same(d.proof.closed, m.tree.total)


@pytest.mark.parametrize("name", one_per_family())
def test_every_substituted_formula_gives_the_count_of_the_tree(name):
    m = model(name)
    d = derived(name)
    tree = presented(m.tree)
    for item in d.items:
        block = tree.find(item.block_path)
        one = item.multiplicity * m.evaluate(block.as_written.doit() if item.leaf else block.count)
        if item.substituted:
            assert parse(item.substituted) == one, (item.path, item.substituted)
        if item.tied_to:
            assert item.count == 0
        else:
            assert item.count == one
    assert parse(d.closed_substituted) == m.count


@pytest.mark.parametrize("name", one_per_family())
def test_summary_formulas_are_each_rows_count(name):
    m = model(name)
    d = derived(name)
    for row in d.summary:
        if row.tied_to:
            assert row.count == 0
            continue
        assert m.evaluate(ours(parse(row.formula))) == row.count, (row.path, row.formula)
