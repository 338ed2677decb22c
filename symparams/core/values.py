"""User-given values, parsed exactly and never with ``sympify`` (which evaluates text).

Sizes are parsed with ``int``, ratios with ``fractions.Fraction``, parameter
counts (a ``solve`` target) with ``Fraction`` too.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy as sp

from .errors import SymparamsError
from .symbols import SYMBOLS


def parse_value(name: str, raw: Any) -> sp.Expr:
    """Parse a user-given value for symbol ``name`` exactly.

    Sizes must be positive whole numbers; a ratio (``r``) a positive
    rational, written ``4``, ``11008/4096`` or ``2.6875``.

    >>> parse_value("H", "768")
    768
    >>> parse_value("r", "11008/4096")
    43/16
    >>> parse_value("H", "7.5")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: H must be a positive whole number, not '7.5'
    """
    info = SYMBOLS.get(name)
    if info is None:
        raise SymparamsError(f"unknown symbol {name!r} (known: {', '.join(SYMBOLS)})")
    if isinstance(raw, bool):
        raise SymparamsError(f"{name} must be a number, not {raw!r}")
    if info.rational:
        try:
            if isinstance(raw, float):
                raise ValueError
            value = Fraction(raw.strip() if isinstance(raw, str) else raw)
        except (ValueError, ZeroDivisionError, TypeError):
            raise SymparamsError(f"{name} must be a positive rational such as 4 or 11008/4096, not {str(raw)!r}") from None
        if value <= 0:
            raise SymparamsError(f"{name} must be positive, not {str(raw)!r}")
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, (sp.Integer,)):
        value = int(raw)
    elif isinstance(raw, str) and re.fullmatch(r"\+?[0-9]+", raw.strip(), flags=re.ASCII):
        value = int(raw.strip())
    else:
        raise SymparamsError(f"{name} must be a positive whole number, not {str(raw)!r}")
    if value <= 0:
        raise SymparamsError(f"{name} must be a positive whole number, not {str(raw)!r}")
    return sp.Integer(value)


def parse_count(text) -> int:
    """A parameter count: ``1000000000``, ``1_000_000_000``, ``1,000,000,000`` or ``1e9``.

    >>> parse_count("1e9"), parse_count("1,000,000")
    (1000000000, 1000000)
    >>> parse_count("0")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: the target must be a positive whole number of parameters, not '0'
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


def to_python(v: sp.Expr) -> int | Fraction:
    """An exact SymPy number as ``int`` or ``Fraction``."""
    v = sp.Rational(v)
    return int(v.p) if v.q == 1 else Fraction(int(v.p), int(v.q))
