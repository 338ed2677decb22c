"""A traced width written with the widths the parameter count already found.

A product's factor is most often a width of the weight it multiplies by, and
a fused projection's width is a sum of per-head widths: Phi-3's ``qkv_proj``
has ``A·⌊H/A⌋ + 2·G·⌊H/A⌋`` outputs, GPTBigCode's ``c_attn`` ``H + 2·⌊H/A⌋``.
The generic bases hold those terms only among hundreds of others (a floor of
every pair of fields times every field), more than a few dozen traces can
fit; the parameter formula names the few that occur.  So a target no basis
fits is tried as a combination of at most :data:`MOST` of the terms of the
parameters' dimensions, over the fields that move it, with twice
:data:`~.fitting.SURPLUS` more distinct points than terms so that a fit is
never exact by accident (the fresh traces of the verification check it again).

>>> H, A, G = sp.symbols("H A G", positive=True, integer=True)
>>> sorted(map(str, width_terms([(H, A * sp.floor(H / A) + 2 * G * sp.floor(H / A))])))
['A', 'A*floor(H/A)', 'G', 'G*floor(H/A)', 'H', 'floor(H/A)']
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Mapping

import sympy as sp

from .fitting import SURPLUS, solve

#: the most terms one width combines (Phi-3's fused projection: two, with the per-head width of the queries)
MOST = 3


@dataclass(frozen=True)
class Width:
    """One term of a parameter's dimension, coefficient 1 (``G·⌊H/A⌋``), read at fit points by field name."""

    form: sp.Expr
    fields: tuple[tuple[str, sp.Symbol], ...]  # (field name, its symbol) of the fields the term holds

    def value(self, point: Mapping[str, int]) -> Fraction:
        exact = self.form.xreplace({s: sp.Integer(point[n]) for n, s in self.fields})
        return Fraction(int(exact.p), int(exact.q))

    def expr(self, symbols: Mapping[str, sp.Symbol]) -> sp.Expr:
        return self.form

    def key(self) -> tuple:
        """Sorts with :class:`~.fitting.Term`'s keys (a formula's terms are written in this order)."""
        return (), (str(self.form),), 1, False, "", 0

    def __str__(self) -> str:
        return str(self.form)


def width_terms(shapes: Iterable[tuple[sp.Expr, ...]]) -> set[sp.Expr]:
    """The distinct terms (coefficients dropped) of every dimension of ``shapes``, and the products of some of
    each term's factors: the attention's matmuls multiply by the per-head width ``⌊H/A⌋`` of a weight's
    ``A·⌊H/A⌋``."""
    out = set()
    for shape in shapes:
        for dimension in shape:
            for term in sp.Add.make_args(sp.expand(dimension)):
                factors = sp.Mul.make_args(term.as_coeff_Mul()[1])
                for size in range(1, len(factors) + 1):
                    out.update(sp.Mul(*part) for part in itertools.combinations(factors, size))
    return {t for t in out if t.free_symbols}


def fit_widths(points: list, values: list, names: list, terms: Iterable[sp.Expr],
               symbols: Mapping[str, sp.Symbol], whole: bool = False, surplus: int = 2 * SURPLUS) -> dict | None:
    """``values`` at ``points`` as a constant plus at most :data:`MOST` of ``terms`` in the fields ``names`` (the
    fields that move the target), the fewest that hold on ``surplus`` more distinct points than terms; None when
    none does.  ``whole``: only combinations with whole coefficients (a width that is a whole number at every
    value of its fields)."""
    names = [n for n in names if n in symbols]  # a field tied to one of them is no variable of the fit
    by_symbol = {symbols[n]: n for n in names}
    usable = sorted((t for t in terms if t.free_symbols <= by_symbol.keys()), key=str)
    widths = [Width(sp.Integer(1), ())] + [Width(t, tuple(sorted((by_symbol[s], s) for s in t.free_symbols)))
                                           for t in usable]
    distinct: dict = {}
    for p, v in zip(points, values):
        if distinct.setdefault(tuple(sorted((n, p[n]) for n in names)), v) != v:
            return None  # one point, two values: no function of these fields
    rows = [dict(k) for k in distinct]
    right = [Fraction(v) for v in distinct.values()]
    columns = {w: [w.value(r) for r in rows] for w in widths}
    for size in range(1, MOST + 2):  # the constant and MOST terms
        if size + surplus > len(rows):
            return None
        for chosen in itertools.combinations(widths, size):
            solved = solve([list(row) for row in zip(*(columns[w] for w in chosen))], right)
            if solved is not None and solved[1] == size and (not whole or all(c.denominator == 1 for c in solved[0])):
                return {w: c for w, c in zip(chosen, solved[0]) if c != 0}
    return None
