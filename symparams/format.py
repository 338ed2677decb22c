"""Exact number formatting shared by the CLI and the documents.

No float touches a count or a share: shares are ``Rational`` and are
rounded with integer arithmetic.

>>> thousands(109482240)
'109,482,240'
>>> percent(sp.Rational(23837184, 109482240))
'21.77%'
>>> percent(sp.Rational(1536, 109482240))
'0.0014%'
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp


def thousands(n, sep: str = ",") -> str:
    """``n`` with thousands separators (symbolic values are printed as is)."""
    if isinstance(n, sp.Basic) and not n.is_Integer:
        return sp.sstr(n)
    return f"{int(n):,}".replace(",", sep)


def _fraction(q) -> Fraction:
    """An exact Fraction from a SymPy Rational, a Fraction or an int."""
    if isinstance(q, sp.Rational):
        return Fraction(int(q.p), int(q.q))
    return Fraction(q)


def round_rational(q, digits: int) -> tuple[int, int]:
    """``q`` rounded half-up to ``digits`` decimals, as (integer part, fraction digits)."""
    scaled = _fraction(q) * 10**digits + Fraction(1, 2)
    return divmod(scaled.numerator // scaled.denominator, 10**digits)


def decimal(q: sp.Rational, digits: int = 2) -> str:
    whole, frac = round_rational(q, digits)
    return f"{whole}.{frac:0{digits}d}" if digits else str(whole)


def percent(share, digits: int = 2) -> str:
    """An exact share as a percentage string."""
    if share is None:
        return ""
    share = _fraction(share) * 100
    if share and round_rational(share, digits) == (0, 0):
        while digits < 8 and round_rational(share, digits) == (0, 0):
            digits += 1
        digits += 1  # a tiny share keeps two significant digits (0.0014%)
    return decimal(share, digits) + "%"


def ratio(q) -> str:
    """A rational value as users write it: ``4`` or ``43/16``."""
    q = sp.Rational(q)
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"
