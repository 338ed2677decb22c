"""Exact rational fitting: a quantity seen at sample points, written as a combination of basis terms.

A :class:`Term` is a monomial with integer exponents (negative ones give
Laurent terms such as ``x/y``), optionally times ``floor(num/den)``.  The
bases grow level by level (constant, linear, quadratic, Laurent, floors,
fixed layer periods, floors of differences, cubic, halves of products, floors of sums, floors of products, layers
at a fixed place in every d);
:func:`fit` keeps the first level whose terms reproduce every point
exactly, solved by Gauss–Jordan elimination over :class:`fractions.Fraction`,
so no float ever comes near a count.

>>> points = [{"h": h, "a": a} for h in range(8, 13) for a in range(1, 5)]
>>> found = fit(points, [p["a"] * (p["h"] // p["a"]) + 3 for p in points], ["h", "a"])
>>> sorted((str(t), str(c)) for t, c in found.items())
[('1', '3'), ('a*floor(h/a)', '1')]
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace
from fractions import Fraction
from math import prod
from typing import Iterable, Mapping, Sequence

import sympy as sp

#: surplus equations a fit must satisfy beyond the rank of its terms, so a fit is never exact by accident
SURPLUS = 3


@dataclass(frozen=True, order=True)
class Term:
    """``Π var**exp`` (exponents may be negative), times ``floor(num/den)**floor_power`` when ``floor`` is set
    (squared: the patches of a square image, ``floor(image_size/patch_size)**2``); the denominator may be a
    whole number (a fixed layer period), and the numerator a difference (``floor((L - S)/6)``: the full-attention
    layers among the first L - S, the last S reusing other layers' keys and values)."""

    powers: tuple[tuple[str, int], ...] = ()
    floor: tuple[str, str | int] | None = None
    floor_power: int = 1
    ceiling: bool = False  # ceil(num/den) instead: the layers 0, f, 2f, … of L, one in every f from the first
    less: str | None = None  # the numerator is floor[0] minus this variable
    shift: int = 0  # and plus this: the layers 2, 7, 12, … of L, at 2 in every 5, number floor((L + 2)/5)
    halved: str | None = None  # times floor(halved/2): with floor(b/2) or b, half a product of two widths
    more: str | None = None  # and plus this variable: layers of two kinds, one in every d of all of them sparse
    times: str | None = None  # the numerator times this variable: floor(a*b/d), a product of two widths split in d

    def value(self, point: Mapping[str, int]) -> Fraction:
        """The term at ``point`` (a mapping of variable names to whole numbers), exactly."""
        out = Fraction(prod(Fraction(point[v]) ** e for v, e in self.powers))
        if self.floor is not None:
            num = _value(self.floor[0], point) * (point[self.times] if self.times else 1) \
                - (point[self.less] if self.less else 0) + self.shift + (point[self.more] if self.more else 0)
            den = _value(self.floor[1], point)
            out *= (-(-num // den) if self.ceiling else num // den) ** self.floor_power
        if self.halved is not None:
            out *= point[self.halved] // 2
        return out

    def expr(self, symbols: Mapping[str, sp.Symbol]) -> sp.Expr:
        """The term as a SymPy expression in ``symbols`` (variable name → symbol)."""
        out = sp.Mul(*(symbols[v] ** e for v, e in self.powers))
        if self.floor is not None:
            rounded = sp.ceiling if self.ceiling else sp.floor
            num = _value(self.floor[0], symbols) * (symbols[self.times] if self.times else 1) \
                - (symbols[self.less] if self.less else 0) + self.shift + (symbols[self.more] if self.more else 0)
            out *= rounded(num / _value(self.floor[1], symbols)) ** self.floor_power
        if self.halved is not None:
            out *= sp.floor(symbols[self.halved] / 2)
        return out

    def __str__(self) -> str:
        return str(self.expr({v: sp.Symbol(v) for v in self.names()}))

    def key(self) -> tuple:
        """A sort key (the dataclass order cannot compare a floor with none)."""
        floor = tuple(map(str, self.floor or ()))
        return (self.powers, floor, self.floor_power, self.ceiling, self.less or "", self.shift, self.halved or "",
                self.more or "", self.times or "")

    def names(self) -> set[str]:
        return {v for v, _ in self.powers} | {v for v in (*(self.floor or ()), self.less, self.halved, self.more,
                                                                  self.times)
                                                if isinstance(v, str)}


def _value(name_or_number, values: Mapping):
    """A variable's value (or symbol) in ``values``; a whole number (a fixed period, a fixed numerator) is
    itself."""
    return name_or_number if isinstance(name_or_number, int) else values[name_or_number]


def _monomial(*names: str) -> Term:
    powers: dict[str, int] = {}
    for name in names:
        powers[name] = powers.get(name, 0) + 1
    return Term(tuple(sorted(powers.items())))


def _families(names: list[str], binary: frozenset, layers: frozenset = frozenset()) -> dict[str, list[Term]]:
    sizes = [n for n in names if n not in binary]
    pairs = [(n, d) for n in sizes for d in sizes if n != d]
    counts = [n for n in sizes if n in layers]  # layer counts: the numerators of a period, alone or less another
    return {
        "constant": [Term()],
        "linear": [_monomial(n) for n in names],
        "quadratic": [_monomial(a, b) for a, b in itertools.combinations_with_replacement(names, 2)
                      if not (a == b and a in binary)],
        "laurent": [Term(((d, -1),)) for d in sizes]
        + [Term(tuple(sorted(((n, 1), (d, -1))))) for n in names for d in sizes if n != d],
        "floor": [Term(floor=p) for p in pairs] + [Term(((z, 1),), p) for p in pairs for z in names],
        "rounded": [Term(floor=p, floor_power=2) for p in pairs] + [Term(floor=p, ceiling=True) for p in pairs],
        # one layer in every c, for a period the modeling code fixes (Gemma 4: a full-attention layer in every 6)
        "periodic": [Term(floor=(n, c), ceiling=up) for n in sizes for c in DIVISORS for up in (False, True)],
        # the layers at one place in every c, counted from the first: floor((n + c - 1 - place)/c)
        **{f"period {c}": [Term(floor=(n, c), ceiling=up) for n in counts for up in (False, True)]
           + [Term(floor=(n, c), shift=j) for n in counts for j in range(1, c - 1)] for c in PERIODS},
        **{f"offset {c}": [Term(floor=(n, c), ceiling=up, less=m) for n in counts for m in counts if m != n
                           for up in (False, True)] for c in PERIODS},
        # one layer in every d from an offset m (Jamba: an attention layer where i % period == offset): floor((n -
        # m - 1)/d) + 1 of n layers, d and m fields of the config
        "stride": [Term(floor=(n, d), less=m, shift=j) for n in counts for m in sizes for d in sizes
                   if len({n, m, d}) == 3 for j in (0, -1)],
        # half a product of two widths, floor(a*b/2) (ZAYA's value projection, half the key/value width): it is
        # a*floor(b/2) + b*floor(a/2) - 2*floor(a/2)*floor(b/2), since a*b is odd only when both are
        "halved": [Term(((a, 1),), (b, 2)) for a in sizes for b in sizes if a != b]
        + [Term(floor=(a, 2), halved=b) for a, b in itertools.combinations(sizes, 2)],
        # one layer in every d of the layers of two kinds together (Qwen3-Next: an expert layer where (i + 1) % d
        # == 0, the layers of linear and of full attention counted apart): floor((n + m)/d)
        "summed": [Term(floor=(n, d), more=m) for n, m in itertools.combinations(counts, 2) for d in sizes
                   if d not in (n, m)],
        # the layers at a fixed place p in every d, d a field, counted from the first: floor((n - p - 1)/d) + 1 of n
        # (Switch Transformers: a sparse layer where i % sparse_step == 1); place 0 is ceil(n/d), a rounded term
        "placed": [Term(floor=(n, d), shift=-(place + 1)) for n in counts for d in sizes if d != n
                   for place in PLACES],
        # a product of two widths split into d groups, floor(a*b/d) (DeepSeek-V4's grouped output projection: each
        # of its o_groups groups takes floor(heads*head_dim/o_groups) inputs)
        "product": [Term(floor=(a, d), times=b) for a, b in itertools.combinations(sizes, 2) for d in sizes
                    if d not in (a, b)],
        # the layers up to and including layer n, one in every d (ERNIE 4.5: experts where (i + 1) % d == 0 up to
        # the last expert layer n): floor((n + 1)/d), with the plain floors of the first layer's
        "through": [Term(floor=p) for p in pairs] + [Term(floor=(n, d), shift=1) for n in counts for d in sizes
                                                     if d != n],
        # among the first c layers a fixed list keeps apart, those at one in every d (Flint: layers 0 and 1 dense,
        # experts where (i + 1) % d == 0): floor(c/d), with the plain floors of the layers
        **{f"first {c}": [Term(floor=p) for p in pairs] + [Term(floor=(c, d)) for d in sizes] for c in PERIODS_FROM_1},
        # one layer in every c of the layers of two kinds together, c fixed (Beam: a full-attention layer where
        # (i + 1) % 6 == 0 and the last, of its dense and sparse layers): floor or ceil((n + m)/c)
        **{f"summed period {c}": [Term(floor=(n, c), more=m, ceiling=up) for n, m in itertools.combinations(counts, 2)
                                  for up in (False, True)] for c in PERIODS},
        "cubic": [_monomial(*c) for c in itertools.combinations_with_replacement(names, 3)
                  if not any(c.count(b) > 1 for b in binary)]
        + [Term(tuple(sorted(((a, 1), (b, 1), (d, -1))))) for a, b in itertools.combinations(names, 2)
           for d in sizes if d not in (a, b)],
    }


#: the fixed periods a layer pattern may have (a layer of one kind in every c): each alone first (a count of one
#: layer count needs as many distinct layer counts as its basis has terms), then all together
PERIODS = range(2, 9)
#: the places past the first a layer of one kind may take in every d layers (d a field of the config)
PLACES = (1, 2)
#: the lengths of a fixed list of first layers (kept dense, say) a period may count in
PERIODS_FROM_1 = range(1, 9)
#: the fixed numbers a size may be divided by and rounded: the periods, and Mamba's 16 (a time-step rank of
#: ceil(hidden_size/16))
DIVISORS = (*PERIODS, 16)
#: the bases, smallest first: each a union of term families (a floor basis leaves the quadratic terms out, so it
#: stays small enough to solve on a few dozen points); the cubic one, the largest, last but the floors of two layer
#: counts together (added after it, so that no earlier fit changes)
LEVELS = (("constant",), ("constant", "linear"), ("constant", "linear", "quadratic"),
          ("constant", "linear", "laurent"), ("constant", "linear", "quadratic", "laurent"),
          ("constant", "linear", "floor"), ("constant", "linear", "quadratic", "floor"),
          ("constant", "linear", "rounded"),
          *(("constant", "linear", f"period {c}") for c in PERIODS), ("constant", "linear", "periodic"),
          *(("constant", "linear", f"period {c}", f"offset {c}") for c in PERIODS),
          ("constant", "linear", "stride"), ("constant", "linear", "quadratic", "laurent", "cubic"),
          ("constant", "linear", "halved"), ("constant", "linear", "summed"), ("constant", "linear", "product"),
          ("constant", "linear", "placed"), ("constant", "linear", "through"),
          *(("constant", "linear", f"first {c}") for c in PERIODS_FROM_1),
          *(("constant", "linear", f"summed period {c}") for c in PERIODS))
#: the levels after this many are a last resort (see :data:`LAST_RESORT`): a fit tries them only when asked, so
#: that no target an earlier level or another field fits changes
BOUNDED = LEVELS.index(("constant", "linear", "through"))
#: the levels a sparse fit chooses its terms from: those before the halves of products and the floors of sums (added
#: later, so that the pairs of terms tried, in order, stay those tried before)
SPARSE_LEVELS = LEVELS.index(("constant", "linear", "quadratic", "laurent", "cubic")) + 1


def basis(names: Sequence[str], level: int, binary: frozenset = frozenset(),
          layers: frozenset = frozenset()) -> list[Term]:
    """The terms of basis ``level`` (an index into :data:`LEVELS`) in ``names``.

    ``binary`` variables are 0/1 flags: never squared, never divided by.  ``layers`` are the layer counts: only
    they are divided by a fixed period, alone or less another (a pattern of layers is one of layers).

    >>> [str(t) for t in basis(["x", "y"], 2)]
    ['1', 'x', 'y', 'x**2', 'x*y', 'y**2']
    >>> [str(t) for t in basis(["x", "f"], 3, binary=frozenset({"f"}))]
    ['1', 'x', 'f', '1/x', 'f/x']
    """
    return list(_basis(tuple(names), level, frozenset(binary), frozenset(layers) & frozenset(names)))


@functools.lru_cache(maxsize=4096)
def _basis(names: tuple, level: int, binary: frozenset, layers: frozenset) -> tuple[Term, ...]:
    """:func:`basis`, once per names and level: a fit tries every level for every target, a type has thousands."""
    families = _families_of(names, binary, layers)
    return tuple(dict.fromkeys(t for family in LEVELS[level] for t in families[family]))


@functools.lru_cache(maxsize=1024)
def _families_of(names: tuple, binary: frozenset, layers: frozenset) -> dict[str, list[Term]]:
    return _families(list(names), binary, layers)


def solve(rows: list[list[Fraction]], rhs: list[Fraction]) -> tuple[list[Fraction], int] | None:
    """A solution of ``rows · x = rhs`` (free unknowns 0) and the rank, or None when there is none.

    >>> solve([[Fraction(1), Fraction(1)], [Fraction(1), Fraction(2)]], [Fraction(3), Fraction(5)])
    ([Fraction(1, 1), Fraction(2, 1)], 2)
    >>> solve([[Fraction(1)], [Fraction(1)]], [Fraction(1), Fraction(2)]) is None
    True
    """
    if not _consistent_modulo(rows, rhs):
        return None  # most bases tried have no solution: whole numbers modulo a prime say so far faster
    width = len(rows[0]) if rows else 0
    matrix = [list(r) + [b] for r, b in zip(rows, rhs)]
    pivots: list[int] = []
    rank = 0
    for col in range(width):
        pivot = next((i for i in range(rank, len(matrix)) if matrix[i][col] != 0), None)
        if pivot is None:
            continue
        matrix[rank], matrix[pivot] = matrix[pivot], matrix[rank]
        lead = matrix[rank][col]
        matrix[rank] = [x / lead for x in matrix[rank]]
        for i, row in enumerate(matrix):
            if i != rank and row[col] != 0:
                factor = row[col]
                matrix[i] = [x - factor * y for x, y in zip(row, matrix[rank])]
        pivots.append(col)
        rank += 1
    if any(row[width] != 0 for row in matrix[rank:]):
        return None
    solution = [Fraction(0)] * width
    for i, col in enumerate(pivots):
        solution[col] = matrix[i][width]
    return solution, rank


#: a prime (2^61 - 1) the quick consistency check works modulo
PRIME = (1 << 61) - 1


def _consistent_modulo(rows: list[list[Fraction]], rhs: list[Fraction]) -> bool:
    """Whether ``rows · x = rhs`` has a solution modulo :data:`PRIME` (a rational solution is one there too,
    unless the prime divides one of its denominators: then the exact solve is skipped and the fit fails, never
    holds wrongly).

    >>> _consistent_modulo([[Fraction(1, 2)], [Fraction(1)]], [Fraction(1), Fraction(2)])
    True
    >>> _consistent_modulo([[Fraction(1)], [Fraction(1)]], [Fraction(1), Fraction(2)])
    False
    """
    # taken modulo the prime row by row, as the check reaches them: most systems fail within a few rows
    return _consistent_residues(([_residue(x) for x in row] for row in rows), (_residue(b) for b in rhs))


def _residue(x: Fraction) -> int:
    """``x`` modulo :data:`PRIME`."""
    return x.numerator % PRIME * pow(x.denominator, -1, PRIME) % PRIME


def _consistent_residues(rows: Iterable[list[int]], rhs: Iterable[int]) -> bool:
    """:func:`_consistent_modulo` of rows and right-hand sides already taken modulo :data:`PRIME`: the rows are
    reduced one at a time against the pivots found so far, and the first that reduces to ``0 = b ≠ 0`` ends it
    (most bases a fit tries fail within a few rows).

    >>> _consistent_residues([[1, 2], [2, 4], [0, 1]], [3, 6, 1]), _consistent_residues([[1, 2], [2, 4]], [3, 7])
    (True, False)
    """
    pivots: list[tuple[int, list[int], int]] = []  # (column, row scaled to 1 there, its right-hand side)
    for row, b in zip(rows, rhs):
        row = list(row)
        for col, pivot, pivot_b in pivots:
            factor = row[col]
            if factor:
                row = [(x - factor * y) % PRIME for x, y in zip(row, pivot)]
                b = (b - factor * pivot_b) % PRIME
        lead = next((col for col, x in enumerate(row) if x), None)
        if lead is None:
            if b:
                return False
            continue
        inverse = pow(row[lead], -1, PRIME)
        pivots.append((lead, [x * inverse % PRIME for x in row], b * inverse % PRIME))
    return True


def _distinct(points: Sequence[Mapping[str, int]], values: Sequence[int], names: Sequence[str]
              ) -> tuple[list[dict[str, int]], list[int]] | None:
    """The distinct points (their values of ``names``) and the value at each; None where one point has two values:
    no function of these names."""
    seen: dict[tuple, int] = {}
    for p, v in zip(points, values):
        if seen.setdefault(tuple((n, p[n]) for n in names), v) != v:
            return None
    return [dict(k) for k in seen], list(seen.values())


def fit(points: Sequence[Mapping[str, int]], values: Sequence[int], names: Sequence[str],
        binary: frozenset = frozenset(), max_level: int = BOUNDED - 1,
        layers: frozenset = frozenset(), independent: bool = False, min_level: int = 0) -> dict[Term, Fraction] | None:
    """The nonzero coefficients of the first basis level in ``names`` that gives every value exactly, else None
    (``binary``, ``layers``: see :func:`basis`).

    A level is tried only when the points outnumber its terms by :data:`SURPLUS`, and once (a period level
    without a layer count among ``names`` is the linear one again); with ``independent``, only when its terms
    are independent on the points too (points that vary along a few directions only fit a large basis by
    accident).
    """
    found = _distinct(points, values, names)
    if found is None:
        return None
    points, values = found
    tried = set()
    for level in range(min_level, max_level + 1):
        columns = _columns(basis(names, level, binary, layers), points)
        terms = list(columns)
        if len(terms) + SURPLUS > len(points) or frozenset(terms) in tried:
            continue
        tried.add(frozenset(terms))
        rows = [list(row) for row in zip(*columns.values())]
        solved = solve(rows, [Fraction(v) for v in values])
        if solved is None:
            continue
        coefficients, rank = solved
        if independent and rank < len(terms):
            continue
        found = {t: c for t, c in zip(terms, coefficients) if c != 0}
        if _unpinned_phase(found, columns):
            continue
        return found
    return _sparse(points, values, names, binary, max_level, layers)


def fit_terms(points: Sequence[Mapping[str, int]], values: Sequence[int], names: Sequence[str],
              terms: Sequence[Term]) -> dict[Term, Fraction] | None:
    """The nonzero coefficients of ``terms`` that give every value exactly, else None: as :func:`fit` tries one
    level with ``independent``, on the distinct points (their values of ``names``), held to :data:`SURPLUS`
    more of them than terms and to terms independent on them.

    >>> points = [{"s": s, "b": b} for s in range(3, 12) for b in (1, 2, 3)]
    >>> terms = [Term(), Term((("b", 1),)), Term((("b", 1),), ("s", 2), ceiling=True)]
    >>> {str(t): str(c) for t, c in fit_terms(points, [p["b"] * -(-p["s"] // 2) for p in points], "sb", terms).items()}
    {'b*ceiling(s/2)': '1'}
    """
    found = _distinct(points, values, names)
    if found is None:
        return None
    rows, targets = found
    columns = _columns(terms, rows)
    if len(columns) + SURPLUS > len(rows):
        return None
    solved = solve([list(row) for row in zip(*columns.values())], [Fraction(v) for v in targets])
    if solved is None or solved[1] < len(columns):
        return None
    return {t: c for t, c in zip(columns, solved[0]) if c != 0}


def _unpinned_phase(found: Mapping[Term, Fraction], columns: Mapping[Term, list[Fraction]]) -> bool:
    """Whether a term of ``found`` that counts the layers of a pattern from a field's offset (Jamba's attention
    layers, where ``i % period == offset``) equals, at every point, the same term rounded the other way or
    shifted by one: the points never met the layer count where the two part (``L - offset`` a multiple of the
    period), so where the pattern starts is unknown, and the solver's pick between them a guess."""
    for term in found:
        if term.less is None:
            continue
        for other, column in columns.items():
            if other != term and replace(other, shift=term.shift, ceiling=term.ceiling) == term \
                    and column == columns[term]:
                return True
    return False


def _columns(terms: Sequence[Term], points: Sequence[Mapping[str, int]]) -> dict[Term, list[Fraction]]:
    """Each term's values at the points, for the terms defined at every point (a field at 0, a layer offset,
    divides none)."""
    out = {}
    for term in terms:
        try:
            out[term] = [term.value(p) for p in points]
        except ZeroDivisionError:
            continue
    return out


#: the most terms a sparse fit combines, and the most variables it is tried in (pairs of terms grow fast)
SPARSE = 2
SPARSE_NAMES = 2


def _sparse(points, values, names, binary, max_level, layers=frozenset()) -> dict[Term, Fraction] | None:
    """A fit of one or two terms of a basis too large for the points (``L/g`` seen at nine points of a layer
    count moving in steps of its group size); it too must hold at :data:`SURPLUS` more points than terms.

    >>> points = [{"l": l, "g": g} for l, g in [(4, 4), (8, 4), (8, 8), (12, 4), (16, 8), (24, 8), (24, 12), (16, 16)]]
    >>> {str(t): str(c) for t, c in _sparse(points, [p["l"] // p["g"] for p in points], ["l", "g"], frozenset(),
    ...                                   3).items()}
    {'l/g': '1'}
    """
    if len(names) > SPARSE_NAMES:
        return None
    columns = _columns(list(dict.fromkeys(t for level in range(min(max_level + 1, SPARSE_LEVELS))
                                          for t in basis(names, level, binary, layers))), points)
    targets = [Fraction(v) for v in values]
    # each term's values computed once, not per pair, and taken modulo the prime once: most pairs fail there
    residues = {t: [_residue(x) for x in column] for t, column in columns.items()}
    target_residues = [_residue(v) for v in targets]
    for size in range(1, SPARSE + 1):
        if size + 2 * SURPLUS > len(points):  # few terms chosen from many: twice the surplus against chance
            return None
        for chosen in itertools.combinations(columns, size):
            if not _consistent_residues([list(r) for r in zip(*(residues[t] for t in chosen))], target_residues):
                continue
            solved = solve([list(row) for row in zip(*(columns[t] for t in chosen))], targets)
            if solved is not None:
                return {t: c for t, c in zip(chosen, solved[0]) if c != 0}
    return None


#: the most terms a fit of products of distinct variables combines
PRODUCTS = 2


def products_of_names(points: Sequence[Mapping[str, int]], values: Sequence[int], names: Sequence[str]
                      ) -> dict[Term, Fraction] | None:
    """A fit of one or two products of distinct variables of ``names``, of any degree (the unmatched backward of
    a chunked kernel: ``b·h·c·(k + v)`` over the batch, the heads, the chunks and two head widths, a degree no
    basis reaches); it too must hold at twice :data:`SURPLUS` more distinct points than terms.

    >>> points = [{"a": a, "b": b, "c": c, "d": d} for a in (1, 2, 3) for b in (2, 5) for c in (1, 4) for d in (3, 7)]
    >>> found = products_of_names(points, [p["a"] * p["b"] * (p["c"] + 2 * p["d"]) for p in points], "abcd")
    >>> sorted((str(t), str(c)) for t, c in found.items())
    [('a*b*c', '1'), ('a*b*d', '2')]
    """
    found = _distinct(points, values, names)
    if found is None:
        return None
    rows, targets = found[0], [Fraction(v) for v in found[1]]
    terms = [_monomial(*c) for size in range(len(names) + 1) for c in itertools.combinations(names, size)]
    columns = _columns(terms, rows)
    for size in range(1, PRODUCTS + 1):
        if size + 2 * SURPLUS > len(rows):
            return None
        for chosen in itertools.combinations(columns, size):
            solved = solve([list(row) for row in zip(*(columns[t] for t in chosen))], targets)
            if solved is not None:
                return {t: c for t, c in zip(chosen, solved[0]) if c != 0}
    return None


def expression(found: Mapping[Term, Fraction], symbols: Mapping[str, sp.Symbol]) -> sp.Expr:
    """The fitted combination as a SymPy expression (coefficients exact rationals)."""
    return sp.Add(*(sp.Rational(c.numerator, c.denominator) * t.expr(symbols)
                    for t, c in sorted(found.items(), key=lambda item: item[0].key())))
