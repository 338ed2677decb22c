"""Vectorised sweeps: the count of a model over a grid of values, exactly.

The closed form, with the fixed values substituted, is scaled to integer
coefficients (a rational ``r`` on the grid is carried as an integer numerator
over one common denominator), lambdified once and evaluated with NumPy over
the grid, one chunk at a time.  Before choosing the dtype the largest value
any intermediate result can take is bounded with exact arithmetic, node by
node of the expression NumPy evaluates: ``int64`` when the bound is below
2^63, Python integers (object arrays) otherwise, so nothing wraps.  Points
that break a constraint (``A | H``, ``r·H`` whole) are left out and counted.
A model with routed experts gets its active count (what one token uses) at
every point too, computed the same way and bounded with the total.
Without NumPy the same expression is evaluated in pure Python, exactly (and
about a hundred times slower).

A range ``start:stop:step`` includes ``stop`` when the steps reach it
(``256:1024:256`` is 256, 512, 768, 1024); ``start:stop`` steps by 1;
``a,b,c`` lists values.

>>> from symparams import model
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
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator, Mapping

import sympy as sp

from ..core.display import Displayable
from ..core.errors import SymparamsError
from ..core.family import Constraint
from ..core.formatting import ratio, thousands
from ..core.symbols import SYMBOLS, A, H
from ..core.values import parse_value, parse_whole, to_python
from .followers import freed
from .integer_forms import RELATIONS, bound, condition_tree, int_fraction, integer_form
from .variables import (
    PASS_SIZES,
    as_model,
    pass_size_or_symbol,
    pass_sizes,
    quantity,
    quantity_of,
    require_values,
)

INT64_MAX = 2**63 - 1
#: grids larger than this need ``force=True`` (``--force``)
MAX_POINTS = 10**9
#: points per chunk: the arrays of one chunk stay in the CPU caches (as fast as 2^20, a tenth of the memory)
CHUNK = 1 << 16


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
    if key in PASS_SIZES:
        return parse_whole(key, text)
    return to_python(parse_value(key, text))  # positive; whole for sizes, rational for r


def _parse_end(key: str, spec: str, what: str, text: str):
    """A range's start or stop, an error naming which it is (``H=1:0:1``: the stop is 0, not a value of H)."""
    try:
        return _parse_number(key, text)
    except SymparamsError as exc:
        raise SymparamsError(f"{key}={spec}: the {what}: {exc}") from None


def _rational(key: str) -> bool:
    return key not in PASS_SIZES and SYMBOLS[key].rational


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
    symparams.SymparamsError: H=1:2:0: the step must be positive
    """
    if isinstance(spec, (bytes, bytearray)):
        raise SymparamsError(f"{key}: give values as text (start:stop:step or a,b,c), a range or a list, not bytes")
    if isinstance(spec, range):
        if spec.step <= 0 or spec.start <= 0:
            raise SymparamsError(f"{key}: a range must start above 0 and step up")
        return Axis(key, max(0, -(-(spec.stop - spec.start) // spec.step)), 1, spec.start, spec.step)
    if isinstance(spec, str):
        text = spec.strip()
        if ":" in text:
            parts = [p.strip() for p in text.split(":")]
            if len(parts) not in (2, 3) or not all(parts):
                raise SymparamsError(f"{key}={spec}: a range is start:stop:step (or start:stop)")
            start, stop = (_parse_end(key, spec, what, p) for what, p in zip(("start", "stop"), parts))
            if len(parts) == 3:
                try:
                    if not all(c in "0123456789/." for c in parts[2]):
                        raise ValueError
                    step = Fraction(parts[2]) if _rational(key) else int(parts[2])
                except (ValueError, ZeroDivisionError):
                    kind = "a positive rational" if _rational(key) else "a positive whole number"
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
            values = [_parse_number(key, v) for v in spec]
        except TypeError:
            raise SymparamsError(f"{key}: give values as start:stop:step, a,b,c, a range or a list") from None
    den = math.lcm(*(Fraction(v).denominator for v in values)) if values else 1
    return Axis(key, len(values), den, items=tuple(int(Fraction(v) * den) for v in values))



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
        self.pieces = [(condition_tree(c, variables), *int_fraction(e, variables)) for e, c in parts]

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
                f, op = fn(c[2]), RELATIONS[c[1]]
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
    ``active`` the exact active counts (``None`` for a model without routed
    experts); ``skipped`` how many points of the slice broke each constraint.
    NumPy arrays (``int64`` or Python-integer ``object``), or lists without
    NumPy.
    """

    axes: tuple[Axis, ...]
    columns: list
    counts: Any
    skipped: dict[str, int]
    active: Any = None

    def __len__(self) -> int:
        return len(self.counts)

    def _results(self) -> list:
        return [self.counts] if self.active is None else [self.counts, self.active]

    def rows(self) -> Iterator[tuple]:
        """``(value, …, count)`` per point, then the active count when there is one, as Python ``int``
        (``Fraction`` for ratios)."""
        cols = []
        for axis, col in zip(self.axes, self.columns):
            col = col.tolist() if hasattr(col, "tolist") else col
            cols.append(col if axis.den == 1 else [Fraction(n, axis.den) if n % axis.den else n // axis.den
                                                   for n in col])
        results = [r.tolist() if hasattr(r, "tolist") else r for r in self._results()]
        return zip(*cols, *results)

    def text_columns(self) -> list[list[str]]:
        """Every column as text (ratios as ``43/16``), for CSV."""
        out = []
        results = self._results()
        for axis, col in zip([*self.axes, *[None] * len(results)], [*self.columns, *results]):
            values = col.tolist() if hasattr(col, "tolist") else col
            if axis is not None and axis.den != 1:
                out.append([ratio(Fraction(n, axis.den)) for n in values])
            else:
                out.append(list(map(str, values)))
        return out


class Sweep(Displayable):
    """The count of a model over a grid of values of some of its symbols.

    Parameters
    ----------
    m : Model
        The model; its values for the grid keys are replaced by the grid (as ``--set`` does: :mod:`.followers`).
    grid : mapping of symbol name to spec
        A spec is ``"start:stop:step"`` (stop included), ``"start:stop"``,
        ``"a,b,c"``, a ``range`` or a sequence of values.
    force : bool
        Allow grids over 10^9 points.
    chunk : int
        Points evaluated at a time (memory stays bounded by a few arrays of
        this length).
    head_width : int or None
        Hold the width of a head fixed: the head count A follows H (A = H /
        head_width) instead of keeping its value, and points where H is not a
        multiple of the width are left out.

    Iterating yields ``(value, …, count)`` for every admissible point, the
    last grid key varying fastest; a model with routed experts (``routed``)
    adds its active count, ``(value, …, count, active)``.  ``columns`` names
    the items of a row.
    """

    def __init__(self, m, grid: Mapping[str, Any], force: bool = False, chunk: int = CHUNK, numpy: bool = True,
                 head_width: int | None = None, of: str = "parameters", seq=None, batch=None):
        self.model = m = as_model(m)
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
            raise SymparamsError(f"chunk must be a whole number of points, 1 or more, not {chunk!r}")
        self.chunk = chunk
        self.of = quantity(of)
        symbols = [self._grid_symbol(m, key) for key in grid]
        self.axes = _axes(grid, force)
        self.keys = tuple(a.key for a in self.axes)
        self.points = math.prod(a.count for a in self.axes)
        self.head_width = _head_width(m, head_width, symbols)
        varying = set(symbols) | ({A} if self.head_width else set())
        freed_model = freed(m, varying)  # from a config.json: the file's fields that stay, and what follows
        base = freed_model.model
        self.values = require_values(base, varying | set(freed_model.follows), "sweep")
        self.fixed = {s.name: to_python(v) for s, v in self.values.items()}
        # a config.json's: what follows the grid (a width the file gives over H), the switches read away from it
        self.follows, self.switches = freed_model.follows, base.switches
        self.values.update(self.follows)
        # integer variables: a ratio on the grid is its numerator over the axis' denominator
        self._vars = [sp.Symbol(f"_{a.key}", integer=True, positive=True) for a in self.axes]
        to_int = {s: v / a.den for s, v, a in zip(symbols, self._vars, self.axes)}
        constraints = base.family.constraints
        if self.head_width:  # A follows H: A = H / width, a positive whole number
            to_int[A] = H.xreplace({**self.values, **to_int}) / self.head_width
            constraints = (*constraints, Constraint(H / self.head_width, ""))
            symbols = [*symbols, A]
        self.values.update(pass_sizes(self.of, symbols, seq, batch))
        self.total = sp.expand(quantity_of(base.tree, self.of).xreplace(self.values))
        if self.of == "parameters":
            freed_model.check(self.total)
        self._f, self._scale = self._integer_form(self.total, to_int)
        #: whether the model has routed experts: then every row has the active count after the total
        self.routed = base.routed and self.of == "parameters"  # FLOPs already count the routed experts only
        self.active_total = sp.expand(base.tree.active_total.xreplace(self.values)) if self.routed else None
        if self.routed:
            self._active_f, self._active_scale = self._integer_form(self.active_total, to_int)
        self.columns = (*self.keys, self.of, *(("active",) if self.routed else ()))
        self._checks = _checks(constraints, self.values, symbols, to_int, self._vars)
        #: how each label in ``skipped`` reads: "value" (must be a positive whole number) or "condition"
        self.labels = {c.label: c.kind for c in self._checks}
        maxima = {v: a.max for v, a in zip(self._vars, self.axes)}
        self.bound = bound(self._f, maxima)
        self.active_bound = bound(self._active_f, maxima) if self.routed else None
        widest = max([self.bound, *([self.active_bound] if self.routed else []),
                      *(bound(e, maxima) for c in self._checks for e in c.polynomials()), *maxima.values()])
        self._np = _numpy() if numpy else None
        self.dtype = ("int64" if widest <= INT64_MAX else "object") if self._np is not None else "python"
        self._compile()

    def __repr__(self) -> str:
        grid = ", ".join(f"{a.key} ({a.count:,} values)" for a in self.axes)
        return f"<Sweep {self.model.name}: {self.of} over {grid}, {self.points:,} points>"

    def __len__(self) -> int:
        return self.points

    def _grid_symbol(self, m, key: str) -> sp.Symbol:
        return pass_size_or_symbol(m, key, self.of)

    def _integer_form(self, count: sp.Expr, to_int) -> tuple[sp.Expr, int]:
        try:
            return integer_form(count.xreplace(to_int), self._vars)
        except sp.PolynomialError:
            raise SymparamsError(f"cannot sweep {self.model.name}: its count is not a polynomial in "
                                 f"{', '.join(self.keys)}") from None

    def _compile(self):
        modules = "numpy" if self._np is not None else "math"
        #: what each point gets, in row order: (the label of a point left out when it is not whole, F, scale M)
        self._results = [("count", sp.lambdify(self._vars, self._f, modules=modules), self._scale)]
        if self.routed:
            self._results.append(("active count", sp.lambdify(self._vars, self._active_f, modules=modules),
                                  self._active_scale))
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
            results = [_full(fn(*cols), n, dtype, np) for _, fn, _ in self._results]
            ok = np.ones(n, dtype=bool) if self._checks or any(s != 1 for _, _, s in self._results) else None
            skipped = {}
            checks = [(c.label, c.passes(cols, n, np)) for c in self._checks]
            checks += [(label, (r % scale) == 0) for r, (label, _, scale) in zip(results, self._results)
                       if scale != 1]
            for label, good in checks:
                bad = int(np.count_nonzero(ok & ~good))
                if bad:
                    skipped[label] = bad
                ok &= good
            results = [r // scale if scale != 1 else r for r, (_, _, scale) in zip(results, self._results)]
            if ok is not None and not ok.all():
                cols = [c[ok] for c in cols]
                results = [r[ok] for r in results]
            yield self._chunk(cols, results, skipped)

    def _chunks_python(self) -> Iterator[Chunk]:
        ranges = [a.items if a.items is not None else range(a.start, a.start + a.count * a.step, a.step)
                  for a in self.axes]
        points = itertools.product(*ranges)
        while True:
            block = list(itertools.islice(points, self.chunk))
            if not block:
                return
            cols = [[] for _ in self.axes]
            results = [[] for _ in self._results]
            skipped: dict[str, int] = {}
            for p in block:
                failed = next((check.label for check in self._checks if not check.passes(p, None, None)), None)
                values = [fn(*p) for _, fn, _ in self._results]
                if failed is None:
                    failed = next((label for v, (label, _, scale) in zip(values, self._results) if v % scale),
                                  None)
                if failed is not None:
                    skipped[failed] = skipped.get(failed, 0) + 1
                    continue
                for c, v in zip(cols, p):
                    c.append(v)
                for r, v, (_, _, scale) in zip(results, values, self._results):
                    r.append(v // scale)
            yield self._chunk(cols, results, skipped)

    def _chunk(self, cols, results, skipped) -> Chunk:
        """A chunk of the kept points: ``results`` are the counts, then the active counts when routed."""
        return Chunk(self.axes, cols, results[0], skipped, results[1] if self.routed else None)

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
        return self._gather("counts")

    def active_counts(self):
        """Every admissible point's active count, as :meth:`counts` (a model with routed experts only)."""
        if not self.routed:
            raise SymparamsError(f"{self.model.name} has no routed experts: its active count is its count")
        return self._gather("active")

    def _gather(self, name: str):
        parts = [getattr(c, name) for c in self.chunks()]
        if self._np is None:
            return [n for p in parts for n in p]
        return self._np.concatenate(parts) if parts else self._np.array([], dtype=object)


def _full(values, n: int, dtype, np):
    """``values`` as an array of ``n`` points (a count that does not vary over the grid comes back a scalar)."""
    return np.full(n, values, dtype=dtype) if np.ndim(values) == 0 else values


def _head_width(m, width, grid_symbols) -> int | None:
    """The fixed head width asked for, checked: a whole number, for a model with heads A not on the grid."""
    if width is None:
        return None
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise SymparamsError(f"the head width must be a positive whole number, not {width!r}")
    if A not in m.symbols or H not in m.symbols:
        raise SymparamsError(f"{m.name} has no head count A to follow H")
    if A in grid_symbols:
        raise SymparamsError("A follows H with a fixed head width: it cannot be on the grid too")
    return width


def _axes(grid: Mapping[str, Any], force: bool) -> tuple[Axis, ...]:
    """The grid's axes, checked: none empty, at most 10^9 points unless forced."""
    if not grid:
        raise SymparamsError("an empty grid: give at least one KEY=SPEC (--grid H=256:1024:256)")
    axes = tuple(parse_axis(key, spec) for key, spec in grid.items())
    points = math.prod(a.count for a in axes)
    empty = [a.key for a in axes if a.count == 0]
    if empty:
        raise SymparamsError(f"an empty grid: {', '.join(empty)} has no values (a range runs up from start to stop)")
    if points > MAX_POINTS and not force:
        raise SymparamsError(f"the grid has {thousands(points)} points, over 10^9; pass --force to sweep it")
    if points > INT64_MAX:
        raise SymparamsError(f"the grid has {thousands(points)} points, more than can be indexed")
    return axes


def _checks(constraints, values, symbols, to_int, variables) -> list["_Check"]:
    """The constraints a point of the grid must meet (a positive whole number at every point kept)."""
    checks = []
    for c in constraints:
        if not c.expr.free_symbols <= set(values) | set(symbols):
            continue  # a symbol this model does not use (as Model skips it)
        e = c.expr.xreplace(values)
        if not e.free_symbols & set(symbols):
            continue
        check = _Check(c.expr, e.xreplace(to_int), variables)
        if not check.trivial:
            checks.append(check)
    return checks


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def sweep(m, grid: Mapping[str, Any] | None = None, *, force: bool = False, chunk: int = CHUNK,
          head_width: int | None = None, of: str = "parameters", seq=None, batch=None, **axes) -> Sweep:
    """The count of ``m`` over a grid: ``sweep(m, H="256:4096:256", L=[12, 24])``.

    ``of="flops"`` (or ``"training_flops"``) sweeps the FLOPs of a pass
    instead (:mod:`symparams.analysis.flops`), over ``b`` sequences of ``s``
    tokens given as ``seq``/``batch`` or put on the grid:

    >>> from symparams import model
    >>> [row for row in sweep(model("bert-base"), of="flops", s="128,512")]
    [(128, 22348431360), (512, 96637943808)]

    See :class:`Sweep`; ``grid`` and keywords may be combined.
    """
    if grid is not None and not isinstance(grid, Mapping):
        raise SymparamsError(f"a grid is a mapping of symbols to values (or keywords), not {type(grid).__name__}")
    merged = dict(grid or {})
    for key, spec in axes.items():
        if key in merged:
            raise SymparamsError(f"{key} is given twice")
        merged[key] = spec
    return Sweep(m, merged, force=force, chunk=chunk, head_width=head_width, of=of, seq=seq, batch=batch)
