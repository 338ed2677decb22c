"""Exact inverse solving: the admissible value of one symbol whose count is nearest a target.

It works from the model's closed form and decides every number with exact
integer arithmetic.

With every other symbol given, the count is a polynomial ``N(x)`` in the
symbol ``x`` solved for.  The values ``x`` may take form a lattice
``x = k·g`` (``k = 1, 2, …``), the step ``g`` coming from the family's
constraints (``A | H`` makes H a multiple of A; ``r·H`` whole makes r a
multiple of 1/H), or a finite set (``A | H`` makes A a divisor of H).  Between
consecutive real roots of ``N(x) − target`` and of ``N′(x)``, ``|N − target|``
is monotone, so the nearest admissible value is one of the lattice points
next to those roots (or the smallest one).  SymPy isolates the roots in exact
rational intervals (``Poly.intervals``); the candidates are then compared
with integer arithmetic.  Ties go to the smaller value.

>>> from symparams import model
>>> s = solve(model("bert-base", L=24, A=16), 1_000_000_000, "H")
>>> s.value, s.count
(1808, 1001384304)
>>> s.below, s.above
((1792, 984236288), (1824, 1018680288))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy as sp

from ..core.algebra import small_divisors
from ..core.display import Displayable
from ..core.errors import SymparamsError
from ..core.formatting import json_number, ratio, table_row, thousands
from ..core.symbols import SYMBOLS
from ..core.values import parse_count, to_python
from ..families.double_entry import Disagreement
from .followers import freed
from .variables import (
    PASS_SIZES,
    QUANTITIES,
    as_model,
    pass_size_or_symbol,
    pass_sizes,
    quantity,
    quantity_of,
    require_values,
)


@dataclass(frozen=True)
class Solution(Displayable):
    """The admissible value of ``symbol`` whose count is nearest ``target``.

    ``below`` and ``above`` are the admissible neighbours ``(value, count)``
    on either side (``None`` at the end of the range).  ``step`` is the
    lattice the values run over (``16`` for H with A = 16), ``None`` for a
    finite set (the divisors of H when solving for A).
    """

    model: str
    symbol: str
    target: int
    value: int | Fraction
    count: int
    below: tuple[int | Fraction, int] | None
    above: tuple[int | Fraction, int] | None
    step: int | Fraction | None
    values: dict[str, Any] = field(default_factory=dict)
    of: str = "parameters"
    follows: dict[str, str] = field(default_factory=dict)  # a config.json's: what follows the symbol, as formulas

    @property
    def difference(self) -> int:
        return self.count - self.target

    def to_dict(self) -> dict[str, Any]:
        def point(p):
            return None if p is None else {"value": json_number(p[0]), "count": p[1], "difference": p[1] - self.target}

        return {
            "model": self.model, "symbol": self.symbol, "target": self.target,
            "value": json_number(self.value), "count": self.count, "difference": self.difference,
            "below": point(self.below), "above": point(self.above),
            "step": None if self.step is None else json_number(self.step),
            "values": {k: json_number(v) for k, v in self.values.items()},
            "of": self.of,
            **({"follows": dict(self.follows)} if self.follows else {}),
        }

    def __str__(self) -> str:
        x = self.symbol
        fixed = " ".join([*(f"{k}={ratio(v)}" for k, v in self.values.items()),
                          *(f"{k}={v}" for k, v in self.follows.items())])
        where = (f"{x} runs over multiples of {ratio(self.step)}" if self.step not in (None, 1) else
                 f"{x} runs over the whole numbers" if self.step == 1 else f"{x} runs over its admissible values")
        what = QUANTITIES[self.of]
        lines = [f"{self.model}: {x} = {ratio(self.value)} gives {thousands(self.count)} {what}, "
                 f"nearest to {thousands(self.target)}",
                 f"  at {fixed}; {where}"]
        cells = self.rows()
        head = (x, what, "vs target", "")
        widths = [max(len(c[i]) for c in [head, *cells]) for i in range(3)]
        lines += [("  " + table_row(c[:3], widths, "rrr") + c[3]).rstrip() for c in [head, *cells]]
        return "\n".join(lines)

    def rows(self) -> list[tuple[str, str, str, str]]:
        """The neighbours and the nearest value as text: value, count, difference from the target, and a mark
        on the nearest."""
        found = [(p, mark) for p, mark in ((self.below, ""), ((self.value, self.count), "  <- nearest"),
                                           (self.above, "")) if p is not None]
        return [(ratio(v), thousands(n), f"{n - self.target:+,}", mark) for (v, n), mark in found]

    def __repr__(self) -> str:
        return f"<Solution {self.model}: {self.symbol} = {ratio(self.value)} gives {self.count:,}>"


def _lcm(a: Fraction, b: Fraction) -> Fraction:
    """The least positive rational whose multiples are multiples of both ``a`` and ``b``."""
    return Fraction(math.lcm(a.numerator, b.numerator), math.gcd(a.denominator, b.denominator))


def _admissible(x, info, base_values, constraints):
    """(step, finite set or None, remaining constraint expressions) for values of ``x``."""
    step = None if info.rational else Fraction(1)
    finite = None
    rest = []
    for c in constraints:
        if not c.expr.free_symbols <= set(base_values) | {x}:
            continue  # a symbol this model does not use (as Model skips it)
        e = sp.expand(c.expr.xreplace(base_values))
        if x not in e.free_symbols:
            continue
        rest.append(e)
        alpha, beta = sp.cancel(e / x), sp.cancel(e * x)
        if alpha.is_Rational and alpha > 0:  # alpha·x whole: x a multiple of 1/alpha
            unit = 1 / Fraction(int(alpha.p), int(alpha.q))
            step = unit if step is None else _lcm(step, unit)
        elif beta.is_Integer and beta > 0:  # beta/x whole: x divides beta
            listed = small_divisors(int(beta))
            if listed is None:
                raise SymparamsError(f"{x} may be any divisor of {_short(beta)}, too many to search")
            divs = set(listed)
            finite = divs if finite is None else finite & divs
    return step, finite, tuple(rest)


def _short(n) -> str:
    text = str(n)
    return text if len(text) <= 30 else f"a {len(text)}-digit number"


def _ok(rest, x, value) -> bool:
    for e in rest:
        v = e.xreplace({x: sp.Rational(value.numerator, value.denominator) if isinstance(value, Fraction) else value})
        if not (v.is_Integer and v > 0):
            return False
    return True


def solve(m, target, symbol: str, of: str = "parameters", seq=None, batch=None) -> Solution:
    """The admissible value of ``symbol`` whose count is nearest ``target``.

    The model's own value for ``symbol`` (a preset's) is ignored; every other
    symbol needs a value.  For a model read from a config.json, ``symbol``
    varies as ``--set`` varies it, with what follows it in the file
    (:mod:`.followers`), and each count shown is the edited file's.  ``of="flops"`` (or ``"training_flops"``) aims the
    FLOPs of a pass over ``batch`` sequences of ``seq`` tokens at the target
    instead; ``symbol`` may then be ``s`` or ``b`` too: the longest sequence
    whose forward pass is nearest 10^12 FLOPs, say.

    >>> from symparams import model
    >>> solve(model("bert-base"), 200_000_000, "L").value  # bert-base layers for 200M
    25
    >>> solve(model("bert-base"), 1e9, "A")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: the count of bert-base does not depend on A: every admissible A gives 109,482,240
    """
    m = as_model(m)
    target = parse_count(target)
    of = quantity(of)
    x = pass_size_or_symbol(m, symbol, of)
    pass_size = x in PASS_SIZES.values()
    freed_model = freed(m, {x})  # from a config.json: the file's fields that stay, and what follows x
    base = freed_model.model
    values = require_values(base, {x, *freed_model.follows}, f"solve for {symbol}")
    values.update(pass_sizes(of, {x}, seq, batch))
    shown = {s.name: to_python(v) for s, v in values.items()}
    values.update(freed_model.follows)
    n_x = sp.expand(quantity_of(base.tree, of).xreplace(values))
    if of == "parameters":
        freed_model.check(n_x)
    if x not in n_x.free_symbols:
        count = n_x if n_x.is_Integer else None
        tail = f": every admissible {symbol} gives {thousands(count)}" if count is not None else ""
        what = "count" if of == "parameters" else QUANTITIES[of]
        raise SymparamsError(f"the {what} of {m.name} does not depend on {symbol}{tail}")
    if pass_size:
        step, finite, rest = Fraction(1), None, ()
    else:
        step, finite, rest = _admissible(x, SYMBOLS[symbol], values, base.family.constraints)
    count = _Count(x, n_x, finite, rest, _file_counts(m, symbol, n_x) if freed_model.points else None)
    if finite is not None:
        best, below, above = _nearest_in_set(count, finite, step, target, symbol)
        step_out = None
    elif step is None:
        raise SymparamsError(f"{symbol} is a ratio and no constraint fixes its step; nothing to settle on")
    else:
        best, below, above = _nearest_on_lattice(count, step, target, m.name, symbol)
        step_out = _norm(step)
    def point(v):  # the count shown is the model's own, at that value (FLOPs: the exact polynomial's)
        if v is None:
            return None
        if of != "parameters":
            return v, count.at(v)
        return v, count.read(v) if count.read is not None else base.subs(**{symbol: v}).count

    return Solution(model=m.name, symbol=symbol, target=target, value=best, count=point(best)[1],
                    below=point(below), above=point(above), step=step_out,
                    values=shown, of=of, follows={s.name: sp.sstr(v) for s, v in freed_model.follows.items()})


def _norm(v) -> int | Fraction:
    v = Fraction(v)
    return int(v) if v.denominator == 1 else v


@dataclass(frozen=True)
class _Count:
    """The count as a function of the value of the symbol solved for ``x``; which values are admissible."""

    x: sp.Symbol
    n_x: sp.Expr
    finite: set | None
    rest: tuple
    read: Any = None  # a model read from a config.json: the count of the file edited to a value (None: refused)

    def at(self, v) -> int | None:
        exact = sp.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else sp.Integer(v)
        n = self.n_x.xreplace({self.x: exact})
        return int(n) if n.is_Integer else None

    def admissible(self, v) -> bool:
        return (v > 0 and (self.finite is None or v in self.finite) and _ok(self.rest, self.x, v)
                and self.at(v) is not None and (self.read is None or self.read(v) is not None))


def _file_counts(m, symbol: str, n_x: sp.Expr):
    """For a model read from a config.json: a value of ``symbol`` → the count of the file edited to it, None where
    the family refuses that file (an odd head width); one that differs from the formula ``n_x`` is an error."""
    cache: dict = {}

    def read(v):
        if v not in cache:
            try:
                cache[v] = m.subs(**{symbol: v}).count
            except Disagreement:
                raise
            except SymparamsError:
                cache[v] = None
            formula = sp.expand(n_x.xreplace({SYMBOLS[symbol].symbol: sp.Rational(Fraction(v))}))
            if cache[v] is not None and formula != cache[v]:
                raise SymparamsError(f"{m.name}: the formula counts {formula} at {symbol}={v}, the file edited to "
                                     f"it {cache[v]}; neither is printed")
        return cache[v]

    return read


def _nearest_in_set(count: _Count, finite, step, target: int, symbol: str):
    """The best of finitely many values (the divisors of H, for A), and its neighbours."""
    candidates = sorted(_norm(v) for v in finite
                        if (step is None or Fraction(v) % step == 0) and count.admissible(v))
    if not candidates:
        raise SymparamsError(f"no admissible value of {symbol} at the other values")
    best = min(candidates, key=lambda v: (abs(count.at(v) - target), v))
    i = candidates.index(best)
    return best, candidates[i - 1] if i > 0 else None, candidates[i + 1] if i + 1 < len(candidates) else None


def _nearest_on_lattice(count: _Count, step: Fraction, target: int, name: str, symbol: str):
    """The best multiple ``k·step`` and its admissible neighbours, from the real roots of N − target and N′."""
    k = sp.Dummy("k", integer=True, positive=True)
    try:
        pk = sp.Poly(count.n_x.xreplace({count.x: k * sp.Rational(step.numerator, step.denominator)}), k)
    except sp.PolynomialError:
        raise SymparamsError(f"the count of {name} is not a polynomial in {symbol}, and {symbol} is not "
                             f"limited to finitely many values; solve settles polynomials") from None
    points = [sp.Integer(1)]
    for p in (pk - target, pk.diff(k)):
        if p.degree() > 0:
            for (lo, hi), _ in p.intervals(eps=sp.Rational(1, 2)):
                points += [sp.floor(lo), sp.ceiling(hi)]
    ks = {kk for p in points for kk in range(int(p) - 1, int(p) + 2) if kk >= 1}

    def nearest_admissible(kk, direction, limit=10_000):
        for _ in range(limit):
            if kk < 1:
                return None
            if count.admissible(kk * step):
                return kk
            kk += direction
        return None

    found = {nearest_admissible(kk, d) for kk in ks for d in (-1, 1)} - {None}
    if not found:
        raise SymparamsError(f"no admissible value of {symbol} found near the target")
    kbest = min(found, key=lambda kk: (abs(count.at(kk * step) - target), kk))
    kb, ka = nearest_admissible(kbest - 1, -1), nearest_admissible(kbest + 1, 1)
    return (_norm(kbest * step), None if kb is None else _norm(kb * step),
            None if ka is None else _norm(ka * step))
