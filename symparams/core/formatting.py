"""Exact numbers as text, shared by every output (CLI, documents, notebooks).

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
    if isinstance(q, (int, Fraction)):
        return str(q)  # a Fraction with denominator 1 prints as its numerator
    q = sp.Rational(q)
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"


def values_line(values, switches, head) -> str:
    """A model's settings in one line: ``V=30522 ... r=4 pooler=true head=masked-lm``."""
    parts = [f"{s.name}={ratio(v)}" for s, v in values.items()]
    parts += [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in switches.items()]
    if head:
        parts.append(f"head={head}")
    return " ".join(parts)


def table_row(cells, widths, align: str) -> str:
    """One line of a console table: cells padded to ``widths``, "l" or "r" per column, two spaces apart."""
    padded = [f"{str(c):<{w}}" if a == "l" else f"{str(c):>{w}}" for c, w, a in zip(cells, widths, align)]
    return "  ".join(padded).rstrip()


def text_table(header, rows, align: str, *, rule_before: int | None = None, min_widths=()) -> str:
    """Rows as a console table (see :func:`table_row`); ``rule_before`` draws dashes above that row.

    >>> print(text_table(("x", "count"), [("a", "1,024"), ("total", "1,025")], "lr", rule_before=1))
    x      count
    a      1,024
    ------------
    total  1,025
    """
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    widths = [max(w, m) for w, m in zip(widths, [*min_widths, *[0] * len(widths)])]
    lines = [table_row(header, widths, align)]
    for k, row in enumerate(rows):
        if k == rule_before:
            lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
        lines.append(table_row(row, widths, align))
    return "\n".join(lines)


def json_number(v):
    """An exact number for JSON: an ``int`` stays one, a SymPy integer becomes one, a ratio is text."""
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, sp.Basic):
        return int(v) if v.is_Integer else sp.sstr(v)
    return v
