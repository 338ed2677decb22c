"""Exact inverse solving and vectorised sweeps (issue 5).

:func:`solve` finds the admissible value of one symbol whose parameter count
is nearest a target; :func:`sweep` evaluates the count over a grid of values.
Both work from the model's simplified closed form and decide every number
with exact integer arithmetic.

Solving
-------
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

Sweeping
--------
The closed form, with the fixed values substituted, is scaled to integer
coefficients (a rational ``r`` on the grid is carried as an integer numerator
over one common denominator), lambdified once and evaluated with NumPy over
the grid, one chunk at a time.  Before choosing the dtype the largest value
any intermediate result can take is bounded with exact arithmetic, node by
node of the expression NumPy evaluates: ``int64`` when the bound is below
2^63, Python integers (object arrays) otherwise, so nothing wraps.  Points
that break a constraint (``A | H``, ``r·H`` whole) are left out and counted.
Without NumPy the same expression is evaluated in pure Python, exactly (and
about a hundred times slower).

A range ``start:stop:step`` includes ``stop`` when the steps reach it
(``256:1024:256`` is 256, 512, 768, 1024); ``start:stop`` steps by 1;
``a,b,c`` lists values.

>>> s = sweep(model("bert-base"), H="768:1024:64", L="12,24")
>>> len(s), s.dtype
(10, 'int64')
>>> for row in s:
...     print(row)
(768, 12, 109482240)
(768, 24, 194536704)
(960, 12, 163579200)
(960, 24, 296439360)
>>> s.skipped()  # 832, 896 and 1024 are not multiples of A = 12
{'H/A': 6}
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator, Mapping, Sequence

import sympy as sp

from .errors import SymparamsError
from .family import parse_value
from .format import ratio, thousands
from .symbols import SYMBOLS

INT64_MAX = 2**63 - 1
#: grids larger than this need ``force=True`` (``--force``)
MAX_POINTS = 10**9
#: points per chunk: the arrays of one chunk stay in the CPU caches (as fast as 2^20, a tenth of the memory)
CHUNK = 1 << 16
#: ``--plot`` draws at most this many points
MAX_PLOT = 100_000


# -- shared helpers -----------------------------------------------------------

def _model_symbol(m, name: str) -> sp.Symbol:
    """The symbol ``name`` of model ``m`` (one-line errors for unknown or unused names)."""
    if name not in SYMBOLS:
        if any(sw.name == name for sw in m.family.switches):
            raise SymparamsError(f"{name} is a switch of {m.family.name}, not a symbol (set it with --set {name}=...)")
        raise SymparamsError(f"unknown symbol {name!r} (known: {' '.join(SYMBOLS)})")
    sym = SYMBOLS[name].symbol
    if sym not in m.symbols:
        raise SymparamsError(f"symbol {name} is not used by {m.name} (its symbols: {' '.join(s.name for s in m.symbols)})")
    return sym


def _without(m, symbols) -> Any:
    """``m`` with the values of ``symbols`` removed (they become free)."""
    from .model import Model

    keep = {s.name: v for s, v in m.values.items() if s not in symbols}
    return Model(m.family, keep, m.switches, m.head, m.name)


def _require(base, free_ok, what: str) -> dict:
    missing = [s.name for s in base.free if s not in free_ok]
    if missing:
        raise SymparamsError(f"{base.name}: no value for {', '.join(missing)}, needed to {what} "
                             f"(give them with --set KEY=VALUE, or start from a preset)")
    return dict(base.values)


def _to_python(v: sp.Expr):
    """An exact SymPy number as ``int`` or ``Fraction``."""
    v = sp.Rational(v)
    return int(v.p) if v.q == 1 else Fraction(int(v.p), int(v.q))


def _show(v) -> str:
    return ratio(sp.Rational(v.numerator, v.denominator)) if isinstance(v, Fraction) else str(v)


def _json_value(v):
    return _show(v) if isinstance(v, Fraction) else v


def parse_count(text) -> int:
    """A parameter count: ``1000000000``, ``1_000_000_000``, ``1,000,000,000`` or ``1e9``.

    >>> parse_count("1e9"), parse_count("1,000,000")
    (1000000000, 1000000)
    >>> parse_count("0")
    Traceback (most recent call last):
    ...
    symparams.errors.SymparamsError: the target must be a positive whole number of parameters, not '0'
    """
    if isinstance(text, bool):
        raise SymparamsError(f"the target must be a whole number, not {text!r}")
    if isinstance(text, int):
        value = text
    else:
        cleaned = str(text).strip().replace("_", "").replace(",", "")
        try:
            if not cleaned or not all(c in "0123456789eE+-." for c in cleaned):
                raise ValueError
            q = Fraction(cleaned)
        except (ValueError, ZeroDivisionError):
            raise SymparamsError(f"the target must be a whole number of parameters, not {str(text)!r}") from None
        if q.denominator != 1:
            raise SymparamsError(f"the target must be a whole number of parameters, not {str(text)!r}")
        value = q.numerator
    if value <= 0:
        raise SymparamsError(f"the target must be a positive whole number of parameters, not {str(text)!r}")
    return value


# -- solve --------------------------------------------------------------------

@dataclass(frozen=True)
class Solution:
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

    @property
    def difference(self) -> int:
        return self.count - self.target

    def to_dict(self) -> dict[str, Any]:
        def point(p):
            return None if p is None else {"value": _json_value(p[0]), "count": p[1], "difference": p[1] - self.target}

        return {
            "model": self.model, "symbol": self.symbol, "target": self.target,
            "value": _json_value(self.value), "count": self.count, "difference": self.difference,
            "below": point(self.below), "above": point(self.above),
            "step": None if self.step is None else _json_value(self.step),
            "values": {k: _json_value(v) for k, v in self.values.items()},
        }

    def __str__(self) -> str:
        x = self.symbol
        fixed = " ".join(f"{k}={_show(v)}" for k, v in self.values.items())
        where = (f"{x} runs over multiples of {_show(self.step)}" if self.step not in (None, 1) else
                 f"{x} runs over the whole numbers" if self.step == 1 else f"{x} runs over its admissible values")
        lines = [f"{self.model}: {x} = {_show(self.value)} gives {thousands(self.count)} parameters, "
                 f"nearest to {thousands(self.target)}",
                 f"  at {fixed}; {where}"]
        rows = [(p, mark) for p, mark in ((self.below, ""), ((self.value, self.count), "  <- nearest"),
                                          (self.above, "")) if p is not None]
        cells = [(_show(v), thousands(n), f"{n - self.target:+,}", mark) for (v, n), mark in rows]
        head = (x, "parameters", "vs target", "")
        widths = [max(len(c[i]) for c in [head, *cells]) for i in range(3)]
        for c in [head, *cells]:
            lines.append(f"  {c[0]:>{widths[0]}}  {c[1]:>{widths[1]}}  {c[2]:>{widths[2]}}{c[3]}".rstrip())
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


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
            divs = set(sp.divisors(int(beta)))
            finite = divs if finite is None else finite & divs
    return step, finite, rest


def _ok(rest, x, value) -> bool:
    for e in rest:
        v = e.xreplace({x: sp.Rational(value.numerator, value.denominator) if isinstance(value, Fraction) else value})
        if not (v.is_Integer and v > 0):
            return False
    return True


def solve(m, target, symbol: str) -> Solution:
    """The admissible value of ``symbol`` whose count is nearest ``target``.

    The model's own value for ``symbol`` (a preset's) is ignored; every other
    symbol needs a value.

    >>> from symparams import model
    >>> solve(model("bert-base"), 200_000_000, "L").value  # bert-base layers for 200M
    25
    >>> solve(model("bert-base"), 1e9, "A")
    Traceback (most recent call last):
    ...
    symparams.errors.SymparamsError: the count of bert-base does not depend on A: every admissible A gives 109,482,240
    """
    target = parse_count(target)
    x = _model_symbol(m, symbol)
    base = _without(m, {x})
    values = _require(base, {x}, f"solve for {symbol}")
    n_x = sp.expand(base.tree.total.xreplace(values))
    if x not in n_x.free_symbols:
        count = m.count if not m.free else None
        tail = f": every admissible {symbol} gives {thousands(count)}" if count is not None else ""
        raise SymparamsError(f"the count of {m.name} does not depend on {symbol}{tail}")
    step, finite, rest = _admissible(x, SYMBOLS[symbol], values, m.family.constraints)

    def count_at(v) -> int | None:
        n = n_x.xreplace({x: sp.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else sp.Integer(v)})
        return int(n) if n.is_Integer else None

    def admissible(v) -> bool:
        return v > 0 and (finite is None or v in finite) and _ok(rest, x, v) and count_at(v) is not None

    def norm(v):
        v = Fraction(v)
        return int(v) if v.denominator == 1 else v

    if finite is not None:
        candidates = sorted(norm(v) for v in finite if (step is None or Fraction(v) % step == 0) and admissible(v))
        if not candidates:
            raise SymparamsError(f"no admissible value of {symbol} at the other values")
        best = min(candidates, key=lambda v: (abs(count_at(v) - target), v))
        i = candidates.index(best)
        below = candidates[i - 1] if i > 0 else None
        above = candidates[i + 1] if i + 1 < len(candidates) else None
        step_out = None
    else:
        if step is None:
            raise SymparamsError(f"{symbol} is a ratio and no constraint fixes its step; nothing to settle on")
        k = sp.Dummy("k", integer=True, positive=True)
        try:
            pk = sp.Poly(n_x.xreplace({x: k * sp.Rational(step.numerator, step.denominator)}), k)
        except sp.PolynomialError:
            raise SymparamsError(f"the count of {m.name} is not a polynomial in {symbol}, and {symbol} is not "
                                 f"limited to finitely many values; solve settles polynomials") from None
        points = [sp.Integer(1)]
        for p in (pk - target, pk.diff(k)):
            if p.degree() > 0:
                for (lo, hi), _ in p.intervals(eps=sp.Rational(1, 2)):
                    points += [sp.floor(lo), sp.ceiling(hi)]
        ks = set()
        for p in points:
            for kk in range(int(p) - 1, int(p) + 2):
                if kk >= 1:
                    ks.add(kk)

        def nearest_admissible(kk, direction, limit=10_000):
            for _ in range(limit):
                if kk < 1:
                    return None
                if admissible(kk * step):
                    return kk
                kk += direction
            return None

        cands = set()
        for kk in ks:
            for d in (-1, 1):
                found = nearest_admissible(kk, d)
                if found is not None:
                    cands.add(found)
        if not cands:
            raise SymparamsError(f"no admissible value of {symbol} found near the target")
        kbest = min(cands, key=lambda kk: (abs(count_at(kk * step) - target), kk))
        best = norm(kbest * step)
        kb, ka = nearest_admissible(kbest - 1, -1), nearest_admissible(kbest + 1, 1)
        below = norm(kb * step) if kb is not None else None
        above = norm(ka * step) if ka is not None else None
        step_out = norm(step)
    return Solution(
        model=m.name, symbol=symbol, target=target, value=best, count=count_at(best),
        below=None if below is None else (below, count_at(below)),
        above=None if above is None else (above, count_at(above)),
        step=step_out, values={s.name: _to_python(v) for s, v in values.items()})


def cmd_solve(m, args) -> None:
    """``symparams solve MODEL --target N --for SYMBOL [--set ...] [--json]``."""
    from .cli import _parse_sets, _print_json

    if args.symbol in _parse_sets(args.set):
        raise SymparamsError(f"{args.symbol} is what --for solves; do not also --set it")
    result = solve(m, args.target, args.symbol)
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result)


# -- sweep ----------------------------------------------------------------------

@dataclass(frozen=True)
class Axis:
    """The values of one grid key: ``start + i·step`` for ``i < count``, or an explicit list.

    Values are kept as integers ``numerator`` over a common ``den``
    (1 for sizes), so a ratio like r = 43/16 is exact.
    """

    key: str
    count: int
    den: int = 1
    start: int = 0
    step: int = 0
    items: tuple[int, ...] | None = None  # numerators when given as a list

    @property
    def max(self) -> int:
        return max(self.items) if self.items is not None else self.start + (self.count - 1) * self.step

    def value(self, i: int):
        n = self.items[i] if self.items is not None else self.start + i * self.step
        return n if self.den == 1 else (Fraction(n, self.den) if n % self.den else n // self.den)

    def values(self) -> list:
        return [self.value(i) for i in range(self.count)]


def _parse_number(key: str, text: str):
    return _to_python(parse_value(key, text))  # positive; whole for sizes, rational for r


def parse_axis(key: str, spec) -> Axis:
    """An :class:`Axis` from ``start:stop:step`` (stop included), ``start:stop``, ``a,b,c``,
    a ``range`` or a sequence of values.

    >>> parse_axis("H", "256:1024:256").values()
    [256, 512, 768, 1024]
    >>> parse_axis("r", "3:4:1/4").values()
    [3, Fraction(13, 4), Fraction(7, 2), Fraction(15, 4), 4]
    >>> parse_axis("H", "1:2:0")
    Traceback (most recent call last):
    ...
    symparams.errors.SymparamsError: H=1:2:0: the step must be positive
    """
    if isinstance(spec, range):
        if spec.step <= 0 or spec.start <= 0:
            raise SymparamsError(f"{key}: a range must start above 0 and step up")
        return Axis(key, len(spec), 1, spec.start, spec.step)
    if isinstance(spec, str):
        text = spec.strip()
        if ":" in text:
            parts = [p.strip() for p in text.split(":")]
            if len(parts) not in (2, 3) or not all(parts):
                raise SymparamsError(f"{key}={spec}: a range is start:stop:step (or start:stop)")
            start, stop = (_parse_number(key, p) for p in parts[:2])
            if len(parts) == 3:
                try:
                    if not all(c in "0123456789/." for c in parts[2]):
                        raise ValueError
                    step = Fraction(parts[2]) if SYMBOLS[key].rational else int(parts[2])
                except (ValueError, ZeroDivisionError):
                    kind = "a positive rational" if SYMBOLS[key].rational else "a positive whole number"
                    raise SymparamsError(f"{key}={spec}: the step must be {kind}, not {parts[2]!r}") from None
            else:
                step = 1
            if step <= 0:
                raise SymparamsError(f"{key}={spec}: the step must be positive")
            start, stop, step = Fraction(start), Fraction(stop), Fraction(step)
            den = math.lcm(start.denominator, step.denominator)
            count = int((stop - start) // step) + 1 if stop >= start else 0
            return Axis(key, count, den, int(start * den), int(step * den))
        items = [p.strip() for p in text.split(",")]
        if not all(items):
            raise SymparamsError(f"{key}={spec}: a list is a,b,c with no empty item")
        values = [_parse_number(key, p) for p in items]
    else:
        try:
            values = [_to_python(parse_value(key, v)) for v in spec]
        except TypeError:
            raise SymparamsError(f"{key}: give values as start:stop:step, a,b,c, a range or a list") from None
    den = math.lcm(*(Fraction(v).denominator for v in values)) if values else 1
    return Axis(key, len(values), den, items=tuple(int(Fraction(v) * den) for v in values))


def _bound(e: sp.Expr, maxima: Mapping[sp.Symbol, int]) -> int:
    """An upper bound on |every intermediate value| NumPy meets evaluating ``e`` node by node.

    Every variable is a positive integer at most ``maxima[v]``, so a node's
    magnitude is at most its bound, built up from the leaves with exact
    integers (a sum's partial sums and a product's partial products included).
    """
    if e.is_Integer:
        return abs(int(e))
    if e.is_Symbol:
        return maxima[e]
    if e.is_Add:
        return sum(_bound(a, maxima) for a in e.args)
    if e.is_Mul:
        return math.prod(max(1, _bound(a, maxima)) for a in e.args)
    if e.is_Pow and e.exp.is_Integer and e.exp >= 0:
        return max(1, _bound(e.base, maxima)) ** int(e.exp)
    raise SymparamsError(f"cannot bound {e} for a sweep")  # not reached for polynomials with integer coefficients


def _integer_form(expr: sp.Expr, variables) -> tuple[sp.Expr, int]:
    """``(F, M)`` with ``expr = F / M``, F with integer coefficients, kept collected when possible."""
    from .model import closed_form

    expanded = sp.expand(expr)
    poly = sp.Poly(expanded, *variables) if variables else None
    if poly is not None:
        denominators = [sp.Rational(c).q for c in poly.coeffs()]
    else:
        denominators = [sp.Rational(expanded).q]
    scale = math.lcm(*map(int, denominators)) if denominators else 1
    scaled = sp.expand(scale * expanded)
    collected = closed_form(scaled)
    if all(a.is_Integer for a in collected.atoms(sp.Number)) and sp.expand(collected - scaled) == 0:
        return collected, scale
    return scaled, scale


def _int_fraction(expr: sp.Expr, variables) -> tuple[sp.Expr, sp.Expr]:
    """``expr = num / den`` with integer-coefficient polynomials, ``den`` positive at positive values."""
    num, den = sp.fraction(sp.together(sp.sympify(expr)))
    try:
        cn, num_p = sp.Poly(num, *variables).clear_denoms()
        cd, den_p = sp.Poly(den, *variables).clear_denoms()
    except sp.PolynomialError:
        raise SymparamsError(f"cannot sweep {sp.sstr(expr)}: not a ratio of polynomials") from None
    num, den = sp.expand(num_p.as_expr() * cd), sp.expand(den_p.as_expr() * cn)
    if any(t.as_coeff_Mul()[0] < 0 for t in sp.Add.make_args(den)):
        num, den = sp.expand(-num), sp.expand(-den)
    if any(t.as_coeff_Mul()[0] < 0 for t in sp.Add.make_args(den)):
        raise SymparamsError(f"cannot sweep {sp.sstr(expr)}: its denominator may change sign")
    return num, den


_RELATIONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
              ">=": operator.ge}


def _condition(cond, variables):
    """A Piecewise condition as a tree over integer polynomials: ``("rel", op, num)`` compares num with 0."""
    if cond is sp.true or cond is sp.false:
        return ("const", bool(cond))
    if isinstance(cond, sp.core.relational.Relational) and cond.rel_op in _RELATIONS:
        num, _ = _int_fraction(cond.lhs - cond.rhs, variables)  # den > 0: the sign is num's
        return ("rel", cond.rel_op, num)
    if isinstance(cond, (sp.And, sp.Or)):
        return ("and" if isinstance(cond, sp.And) else "or", [_condition(a, variables) for a in cond.args])
    if isinstance(cond, sp.Not):
        return ("not", _condition(cond.args[0], variables))
    raise SymparamsError(f"cannot sweep the condition {sp.sstr(cond)}")


def _label(constraint: sp.Expr) -> tuple[str, str]:
    """How a sweep reports a constraint: ``("value", "H/A")`` must be a positive whole number;
    ``("condition", "E != H")`` must hold (a ``Piecewise((1, E ≠ H), (0, True))``)."""
    parts = constraint.args if isinstance(constraint, sp.Piecewise) else ()
    if len(parts) == 2 and parts[1][1] is sp.true and parts[0][0].is_Integer and parts[0][0] > 0 \
            and parts[1][0].is_Integer and parts[1][0] <= 0:
        cond = parts[0][1]
        if isinstance(cond, sp.core.relational.Relational):
            return "condition", f"{sp.sstr(cond.lhs)} {cond.rel_op} {sp.sstr(cond.rhs)}"
        return "condition", sp.sstr(cond)
    return "value", sp.sstr(constraint)


class _Check:
    """A constraint compiled for a sweep: where the piece whose condition holds first is a positive
    whole number ``num/den`` (one unconditional piece for the usual ``H/A``)."""

    def __init__(self, constraint: sp.Expr, expr: sp.Expr, variables):
        self.kind, self.label = _label(constraint)
        folded = sp.piecewise_fold(expr)
        parts = folded.args if isinstance(folded, sp.Piecewise) else ((folded, sp.true),)
        self.pieces = [(_condition(c, variables), *_int_fraction(e, variables)) for e, c in parts]

    @property
    def trivial(self) -> bool:
        """One unconditional piece, ``den = 1``, positive coefficients: always a positive whole number."""
        if len(self.pieces) != 1 or self.pieces[0][0] != ("const", True):
            return False
        _, num, den = self.pieces[0]
        return _always_positive_integer(num, den)

    def polynomials(self):
        def walk(c):
            if c[0] == "rel":
                yield c[2]
            elif c[0] in ("and", "or"):
                for a in c[1]:
                    yield from walk(a)
            elif c[0] == "not":
                yield from walk(c[1])
        for cond, num, den in self.pieces:
            yield num
            yield den
            yield from walk(cond)

    def compile(self, variables, modules, np):
        def fn(e):
            return sp.lambdify(variables, e, modules=modules)

        def cond(c):
            kind = c[0]
            if kind == "const":
                return lambda *cols: c[1]
            if kind == "rel":
                f, op = fn(c[2]), _RELATIONS[c[1]]
                return lambda *cols: op(f(*cols), 0)
            if kind == "not":
                inner = cond(c[1])
                neg = np.logical_not if np is not None else operator.not_
                return lambda *cols: neg(inner(*cols))
            parts = [cond(a) for a in c[1]]
            join = operator.and_ if kind == "and" else operator.or_
            return lambda *cols: functools.reduce(join, (p(*cols) for p in parts))

        self._compiled = [(None if c == ("const", True) else cond(c), fn(num), fn(den)) for c, num, den in self.pieces]

    def passes(self, cols, n: int | None, np):
        """A boolean array (NumPy, ``n`` points) or a bool (pure Python, one point)."""
        if np is None:
            for cond, fn_n, fn_d in self._compiled:
                if cond is None or cond(*cols):
                    num, den = fn_n(*cols), fn_d(*cols)
                    return den > 0 and num > 0 and num % den == 0
            return False
        good = np.zeros(n, dtype=bool)
        remaining = np.ones(n, dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            for cond, fn_n, fn_d in self._compiled:
                num, den = fn_n(*cols), fn_d(*cols)
                piece = np.broadcast_to((den > 0) & (num > 0) & (num % den == 0), (n,))
                if cond is None:
                    return good | (remaining & piece)
                chosen = remaining & np.broadcast_to(np.asarray(cond(*cols), dtype=bool), (n,))
                good |= chosen & piece
                remaining &= ~chosen
        return good


def _always_positive_integer(num: sp.Expr, den: sp.Expr) -> bool:
    """``num/den`` with ``den = 1`` and positive coefficients: positive and whole at positive integers."""
    if den != 1:
        return False
    terms = sp.Add.make_args(sp.expand(num))
    return all(t.as_coeff_Mul()[0] > 0 and t.as_coeff_Mul()[0].is_Integer for t in terms)


@dataclass
class Chunk:
    """The admissible points of one slice of the grid.

    ``columns`` hold the grid values as integer numerators (divide by
    ``Axis.den`` for a ratio); ``counts`` the exact parameter counts;
    ``skipped`` how many points of the slice broke each constraint.
    NumPy arrays (``int64`` or Python-integer ``object``), or lists without
    NumPy.
    """

    axes: tuple[Axis, ...]
    columns: list
    counts: Any
    skipped: dict[str, int]

    def __len__(self) -> int:
        return len(self.counts)

    def rows(self) -> Iterator[tuple]:
        """``(value, …, count)`` per point, as Python ``int`` (``Fraction`` for ratios)."""
        cols = []
        for axis, col in zip(self.axes, self.columns):
            col = col.tolist() if hasattr(col, "tolist") else col
            cols.append(col if axis.den == 1 else [Fraction(n, axis.den) if n % axis.den else n // axis.den
                                                   for n in col])
        counts = self.counts.tolist() if hasattr(self.counts, "tolist") else self.counts
        return zip(*cols, counts)

    def text_columns(self) -> list[list[str]]:
        """Every column as text (ratios as ``43/16``), for CSV."""
        out = []
        for axis, col in zip([*self.axes, None], [*self.columns, self.counts]):
            values = col.tolist() if hasattr(col, "tolist") else col
            if axis is not None and axis.den != 1:
                out.append([_show(Fraction(n, axis.den)) for n in values])
            else:
                out.append(list(map(str, values)))
        return out


class Sweep:
    """The count of a model over a grid of values of some of its symbols.

    Parameters
    ----------
    m : Model
        The model; its values for the grid keys are replaced by the grid.
    grid : mapping of symbol name to spec
        A spec is ``"start:stop:step"`` (stop included), ``"start:stop"``,
        ``"a,b,c"``, a ``range`` or a sequence of values.
    force : bool
        Allow grids over 10^9 points.
    chunk : int
        Points evaluated at a time (memory stays bounded by a few arrays of
        this length).

    Iterating yields ``(value, …, count)`` for every admissible point, the
    last grid key varying fastest.
    """

    def __init__(self, m, grid: Mapping[str, Any], force: bool = False, chunk: int = CHUNK, numpy: bool = True):
        if not grid:
            raise SymparamsError("an empty grid: give at least one KEY=SPEC (--grid H=256:1024:256)")
        self.model = m
        self.chunk = max(1, int(chunk))
        symbols = [_model_symbol(m, key) for key in grid]
        self.axes = tuple(parse_axis(key, spec) for key, spec in grid.items())
        self.keys = tuple(a.key for a in self.axes)
        self.points = math.prod(a.count for a in self.axes)
        empty = [a.key for a in self.axes if a.count == 0]
        if empty:
            raise SymparamsError(f"an empty grid: {', '.join(empty)} has no values (a range runs up from start to stop)")
        if self.points > MAX_POINTS and not force:
            raise SymparamsError(f"the grid has {thousands(self.points)} points, over 10^9; pass --force to sweep it")
        if self.points > INT64_MAX:
            raise SymparamsError(f"the grid has {thousands(self.points)} points, more than can be indexed")
        base = _without(m, set(symbols))
        self.values = _require(base, set(symbols), "sweep")
        self.fixed = {s.name: _to_python(v) for s, v in self.values.items()}
        # integer variables: a ratio on the grid is its numerator over the axis' denominator
        self._vars = [sp.Symbol(f"_{a.key}", integer=True, positive=True) for a in self.axes]
        to_int = {s: v / a.den for s, v, a in zip(symbols, self._vars, self.axes)}
        self.total = sp.expand(base.tree.total.xreplace(self.values))
        try:
            self._f, self._scale = _integer_form(self.total.xreplace(to_int), self._vars)
        except sp.PolynomialError:
            raise SymparamsError(f"cannot sweep {m.name}: its count is not a polynomial in {', '.join(self.keys)}") \
                from None
        # constraints: a positive whole number at every point kept
        self._checks = []
        for c in m.family.constraints:
            if not c.expr.free_symbols <= set(self.values) | set(symbols):
                continue  # a symbol this model does not use (as Model skips it)
            e = c.expr.xreplace(self.values)
            if not e.free_symbols & set(symbols):
                continue
            check = _Check(c.expr, e.xreplace(to_int), self._vars)
            if not check.trivial:
                self._checks.append(check)
        #: how each label in ``skipped`` reads: "value" (must be a positive whole number) or "condition"
        self.labels = {c.label: c.kind for c in self._checks}
        maxima = {v: a.max for v, a in zip(self._vars, self.axes)}
        self.bound = _bound(self._f, maxima)
        widest = max([self.bound, *(_bound(e, maxima) for c in self._checks for e in c.polynomials()),
                      *maxima.values()])
        self._np = _numpy() if numpy else None
        self.dtype = ("int64" if widest <= INT64_MAX else "object") if self._np is not None else "python"
        self._compile()

    def __len__(self) -> int:
        return self.points

    def _compile(self):
        modules = "numpy" if self._np is not None else "math"
        self._fn = sp.lambdify(self._vars, self._f, modules=modules)
        for check in self._checks:
            check.compile(self._vars, modules, self._np)

    # -- evaluation -----------------------------------------------------------
    def chunks(self) -> Iterator[Chunk]:
        """The grid, evaluated ``chunk`` points at a time."""
        if self._np is None:
            yield from self._chunks_python()
            return
        np = self._np
        dtype = np.int64 if self.dtype == "int64" else object
        sizes = [a.count for a in self.axes]
        lists = [np.array(a.items, dtype=dtype) if a.items is not None else None for a in self.axes]
        for start in range(0, self.points, self.chunk):
            stop = min(start + self.chunk, self.points)
            rem = np.arange(start, stop, dtype=np.int64)
            cols = [None] * len(self.axes)
            for j in range(len(self.axes) - 1, -1, -1):
                if j:
                    rem, idx = np.divmod(rem, sizes[j])
                else:
                    idx = rem
                a = self.axes[j]
                if lists[j] is not None:
                    cols[j] = lists[j][idx]
                else:
                    col = idx.astype(dtype) * a.step if a.step != 1 else idx.astype(dtype)
                    cols[j] = col + a.start if a.start else col
            n = stop - start
            values = self._fn(*cols)
            if np.ndim(values) == 0:
                values = np.full(n, values, dtype=dtype)
            ok = np.ones(n, dtype=bool) if self._checks or self._scale != 1 else None
            skipped = {}
            checks = [(c.label, c.passes(cols, n, np)) for c in self._checks]
            if self._scale != 1:
                checks.append(("count", (values % self._scale) == 0))
            for label, good in checks:
                bad = int(np.count_nonzero(ok & ~good))
                if bad:
                    skipped[label] = bad
                ok &= good
            if self._scale != 1:
                values = values // self._scale
            if ok is not None and not ok.all():
                cols = [c[ok] for c in cols]
                values = values[ok]
            yield Chunk(self.axes, cols, values, skipped)

    def _chunks_python(self) -> Iterator[Chunk]:
        ranges = [a.items if a.items is not None else range(a.start, a.start + a.count * a.step, a.step)
                  for a in self.axes]
        points = itertools.product(*ranges)
        while True:
            block = list(itertools.islice(points, self.chunk))
            if not block:
                return
            cols = [[] for _ in self.axes]
            counts = []
            skipped: dict[str, int] = {}
            for p in block:
                failed = None
                for check in self._checks:
                    if not check.passes(p, None, None):
                        failed = check.label
                        break
                value = self._fn(*p)
                if failed is None and value % self._scale:
                    failed = "count"
                if failed is not None:
                    skipped[failed] = skipped.get(failed, 0) + 1
                    continue
                for c, v in zip(cols, p):
                    c.append(v)
                counts.append(value // self._scale)
            yield Chunk(self.axes, cols, counts, skipped)

    def __iter__(self) -> Iterator[tuple]:
        for chunk in self.chunks():
            yield from chunk.rows()

    def skipped(self) -> dict[str, int]:
        """Points left out, per broken constraint (``{"H/A": 3}``); evaluates the grid."""
        out: dict[str, int] = {}
        for chunk in self.chunks():
            for k, v in chunk.skipped.items():
                out[k] = out.get(k, 0) + v
        return out

    def counts(self):
        """Every admissible count, in grid order (a NumPy array; a list without NumPy)."""
        parts = [c.counts for c in self.chunks()]
        if self._np is None:
            return [n for p in parts for n in p]
        return self._np.concatenate(parts) if parts else self._np.array([], dtype=object)


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def sweep(m, grid: Mapping[str, Any] | None = None, *, force: bool = False, chunk: int = CHUNK,
          **axes) -> Sweep:
    """The count of ``m`` over a grid: ``sweep(m, H="256:4096:256", L=[12, 24])``.

    See :class:`Sweep`; ``grid`` and keywords may be combined.
    """
    merged = dict(grid or {})
    for key, spec in axes.items():
        if key in merged:
            raise SymparamsError(f"{key} is given twice")
        merged[key] = spec
    return Sweep(m, merged, force=force, chunk=chunk)


# -- the command ------------------------------------------------------------------

def _parse_grid(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, spec = item.partition("=")
        key = key.strip()
        if not sep or not key or not spec.strip():
            raise SymparamsError(f"--grid takes KEY=SPEC (start:stop:step or a,b,c), not {item!r}")
        if key in out:
            raise SymparamsError(f"--grid {key} is given twice")
        out[key] = spec
    return out


def cmd_sweep(m, args) -> None:
    """``symparams sweep MODEL --grid KEY=SPEC ... [--set ...] [--csv PATH | --json] [--plot PATH.svg]``."""
    from .cli import _parse_sets

    grid = _parse_grid(args.grid)
    both = sorted(set(grid) & set(_parse_sets(args.set)))
    if both:
        raise SymparamsError(f"{', '.join(both)} given both by --set and by --grid")
    if args.csv and args.json:
        raise SymparamsError("choose one of --csv and --json")
    plotter = _plotter(args.plot) if args.plot else None
    s = Sweep(m, grid, force=args.force)
    if plotter is not None and s.points > MAX_PLOT:
        raise SymparamsError(f"--plot draws at most {thousands(MAX_PLOT)} points; this grid has {thousands(s.points)}")
    kept, skipped, plotted = 0, {}, []

    def consume(chunk):
        nonlocal kept
        kept += len(chunk)
        for k, v in chunk.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
        if plotter is not None:
            plotted.extend(chunk.rows())

    if args.json:
        _write_json(s, consume)
    elif args.csv:
        _write_csv(s, args.csv, consume)
    else:
        _write_table(s, consume)
    if plotter is not None:
        plotter(s, plotted)
    def why(label):
        if label == "count":
            return "the count is not whole"
        if s.labels.get(label) == "condition":
            return f"{label} does not hold"
        return f"{label} is not a positive whole number"

    note = "; ".join(f"{v:,} points where {why(k)}" for k, v in skipped.items())
    if args.csv:
        print(f"wrote {kept:,} rows to {args.csv}" + (f" (left out {note})" if note else ""))
    elif note and not args.json:
        print(f"symparams: left out {note}", file=sys.stderr)
    if plotter is not None:
        print(f"drew {len(plotted):,} points into {args.plot}")


def _header(s: Sweep) -> list[str]:
    return [*s.keys, "parameters"]


def _write_table(s: Sweep, consume) -> None:
    widths = [max(len(k), max(len(_show(v)) for v in _sample(a))) for k, a in zip(s.keys, s.axes)]
    widths.append(max(len("parameters"), len(thousands(s.bound))))
    out = sys.stdout
    out.write("  ".join(f"{h:>{w}}" for h, w in zip(_header(s), widths)) + "\n")
    for chunk in s.chunks():
        consume(chunk)
        lines = []
        for row in chunk.rows():
            cells = [_show(v) for v in row[:-1]] + [thousands(row[-1])]
            lines.append("  ".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
        if lines:
            out.write("\n".join(lines) + "\n")


def _sample(axis: Axis) -> list:
    """The values that decide a column's width (the ends of a range, or the list)."""
    if axis.items is not None:
        return axis.values()
    return [axis.value(0), axis.value(axis.count - 1)]


def _write_csv(s: Sweep, path: str, consume) -> None:
    try:
        fh = open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise SymparamsError(f"cannot write {path}: {exc.strerror}") from None
    with fh:
        fh.write(",".join(_header(s)) + "\n")
        for chunk in s.chunks():
            consume(chunk)
            cols = chunk.text_columns()
            if cols[0]:
                fh.write("\n".join(map(",".join, zip(*cols))) + "\n")


def _write_json(s: Sweep, consume) -> None:
    import json

    m = s.model
    out = sys.stdout
    head = {
        "model": m.name, "family": m.family.name, "head": m.head,
        "values": {k: _json_value(v) for k, v in s.fixed.items()}, "switches": dict(m.switches),
        "grid": {a.key: [_json_value(v) for v in a.values()] if a.items is not None else
                 {"start": _json_value(a.value(0)), "stop": _json_value(a.value(a.count - 1)),
                  "step": _json_value(Fraction(a.step, a.den) if a.step % a.den else a.step // a.den),
                  "count": a.count} for a in s.axes},
        "points": s.points, "dtype": s.dtype,
    }
    text = json.dumps(head, indent=2, ensure_ascii=False)
    out.write(text[:-2] + ',\n  "rows": [')
    first = True
    skipped: dict[str, int] = {}
    for chunk in s.chunks():
        consume(chunk)
        for k, v in chunk.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
        parts = []
        for row in chunk.rows():
            item = {k: _json_value(v) for k, v in zip(s.keys, row[:-1])}
            item["parameters"] = row[-1]
            parts.append(json.dumps(item))
        if parts:
            out.write(("\n    " if first else ",\n    ") + ",\n    ".join(parts))
            first = False
    out.write(("\n  ]" if not first else "]") + ',\n  "skipped": ' + json.dumps(skipped) + "\n}\n")


def _plotter(path: str):
    """A function drawing the sweep into ``path`` (SVG); checks matplotlib first."""
    if not path.lower().endswith(".svg"):
        raise SymparamsError(f"--plot writes SVG: give a path ending in .svg, not {path!r}")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise SymparamsError("--plot needs matplotlib: pip install 'symparams[plot]'") from None

    def draw(s: Sweep, rows: list[tuple]) -> None:
        from .symbols import describe

        fig = Figure(figsize=(7, 4.5))
        ax = fig.add_subplot()
        series: dict[tuple, list] = {}
        for row in rows:
            series.setdefault(tuple(row[1:-1]), []).append((row[0], row[-1]))
        for label, points in series.items():
            points.sort()
            name = ", ".join(f"{k} = {_show(v)}" for k, v in zip(s.keys[1:], label)) or s.model.name
            ax.plot([float(x) for x, _ in points], [float(n) for _, n in points], marker=".", label=name)
        ax.set_xlabel(f"{s.keys[0]} ({describe(s.keys[0])})")
        ax.set_ylabel("parameters")
        ax.set_title(f"{s.model.name}: parameters against {s.keys[0]}")
        ax.grid(True, alpha=0.3)
        if len(series) > 1 or len(s.keys) > 1:
            ax.legend()
        fig.tight_layout()
        try:
            fig.savefig(path, format="svg", metadata={"Date": None})
        except OSError as exc:
            raise SymparamsError(f"cannot write {path}: {exc.strerror}") from None

    return draw
