"""Closed forms as integer polynomials: what exact evaluation over a grid (or in a browser) needs.

A count with a rational ``r`` becomes ``F / M`` with ``F`` an integer
polynomial; a constraint ``num / den``; a ``Piecewise`` condition a tree of
sign tests on integer polynomials.  Sweeps evaluate these with NumPy, the
live HTML page with JavaScript ``BigInt``.
"""

from __future__ import annotations

import math
import operator
from typing import Mapping

import sympy as sp

from ..core.algebra import closed_form
from ..core.errors import SymparamsError


def bound(e: sp.Expr, maxima: Mapping[sp.Symbol, int]) -> int:
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
        return sum(bound(a, maxima) for a in e.args)
    if e.is_Mul:
        return math.prod(max(1, bound(a, maxima)) for a in e.args)
    if e.is_Pow and e.exp.is_Integer and e.exp >= 0:
        return max(1, bound(e.base, maxima)) ** int(e.exp)
    raise SymparamsError(f"cannot bound {e} for a sweep")  # not reached for polynomials with integer coefficients


def integer_form(expr: sp.Expr, variables) -> tuple[sp.Expr, int]:
    """``(F, M)`` with ``expr = F / M``, F with integer coefficients, kept collected when possible."""
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


def int_fraction(expr: sp.Expr, variables) -> tuple[sp.Expr, sp.Expr]:
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


RELATIONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
              ">=": operator.ge}


def condition_tree(cond, variables):
    """A Piecewise condition as a tree over integer polynomials: ``("rel", op, num)`` compares num with 0."""
    if cond is sp.true or cond is sp.false:
        return ("const", bool(cond))
    if isinstance(cond, sp.core.relational.Relational) and cond.rel_op in RELATIONS:
        num, _ = int_fraction(cond.lhs - cond.rhs, variables)  # den > 0: the sign is num's
        return ("rel", cond.rel_op, num)
    if isinstance(cond, (sp.And, sp.Or)):
        return ("and" if isinstance(cond, sp.And) else "or", [condition_tree(a, variables) for a in cond.args])
    if isinstance(cond, sp.Not):
        return ("not", condition_tree(cond.args[0], variables))
    raise SymparamsError(f"cannot sweep the condition {sp.sstr(cond)}")
