"""User-given values, parsed exactly and never with ``sympify`` (which evaluates text).

Sizes are parsed with ``int``, ratios with ``fractions.Fraction``, parameter
counts (a ``solve`` target) with ``Fraction`` too.  Text is checked against a
pattern before it is converted, and no number may have more than
:data:`MAX_DIGITS` digits, so no input costs more than a moment.
"""

from __future__ import annotations

import math
import numbers
import re
from fractions import Fraction
from typing import Any

import sympy as sp

from .errors import SymparamsError
from .symbols import SYMBOLS

#: the most digits a number may have: a count, a product of a few sizes, then stays within the 4,300 digits
#: Python turns into text
MAX_DIGITS = 1000
_LIMIT = 10**MAX_DIGITS
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE](?P<exp>[+-]?\d+))?", re.ASCII)
_FRACTION = re.compile(r"[+-]?\d+/\d+", re.ASCII)


class NotANumber(SymparamsError):
    """Text or an object that is not an exact number at all (callers word their own message)."""


def exact_number(raw: Any, what: str) -> Fraction:
    """``raw`` (an integer, a ratio, or text such as ``768``, ``43/16``, ``2.6875``, ``1e9``) as a Fraction.

    ``what`` names the value in the error (``"H"``, ``"the target"``).

    >>> exact_number("11008/4096", "r"), exact_number("1e9", "the target")
    (Fraction(43, 16), Fraction(1000000000, 1))
    >>> exact_number("1e100000000", "r")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: r: '1e100000000' has more than 1000 digits
    """
    if isinstance(raw, bool) or isinstance(raw, float):
        raise NotANumber(f"{what} must be an exact number (a whole number or a ratio), not {raw!r}")
    if isinstance(raw, numbers.Rational):
        value = Fraction(int(raw.numerator), int(raw.denominator))
    elif isinstance(raw, str):
        value = _from_text(raw.strip(), what)
    else:
        raise NotANumber(f"{what} must be a number, not {type(raw).__name__} {_short(raw)}")
    if abs(value.numerator) >= _LIMIT or value.denominator >= _LIMIT:
        raise SymparamsError(f"{what}: {_short(raw)} has more than {MAX_DIGITS} digits")
    return value


def _from_text(text: str, what: str) -> Fraction:
    shown = _short(text)
    if len(text) > MAX_DIGITS:
        raise SymparamsError(f"{what}: {shown} has more than {MAX_DIGITS} digits")
    decimal = _DECIMAL.fullmatch(text)
    if decimal and decimal.group("exp") and abs(int(decimal.group("exp"))) > MAX_DIGITS:
        raise SymparamsError(f"{what}: {shown} has more than {MAX_DIGITS} digits")
    if not (decimal or _FRACTION.fullmatch(text)):
        raise NotANumber(f"{what} must be a number such as 768, 43/16 or 2.6875, not {shown}")
    try:
        return Fraction(text)
    except ZeroDivisionError:
        raise NotANumber(f"{what} must be a number, not {shown} (a zero denominator)") from None


def _short(raw: Any) -> str:
    """``raw`` for an error message, cut to 40 characters."""
    try:
        text = str(raw)
    except ValueError:  # an int too long for Python to print
        return "a number"
    return repr(text if len(text) <= 40 else text[:37] + "...")


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
            value = exact_number(raw, name)
        except NotANumber:
            raise SymparamsError(f"{name} must be a positive rational such as 4 or 11008/4096, not {_short(raw)}") \
                from None
        if value <= 0:
            raise SymparamsError(f"{name} must be positive, not {_short(raw)}")
        return sp.Rational(value.numerator, value.denominator)
    return sp.Integer(parse_whole(name, raw))


def parse_whole(what: str, raw: Any) -> int:
    """A positive whole number (a size, a sequence length, a rank count) given as text or a number.

    Text may use the decimal notations a parameter count may (``1e3``, ``2.048e3``,
    ``1024.0``), read exactly; its value must be whole.

    >>> parse_whole("s", "2048"), parse_whole("b", 8), parse_whole("H", "1.024e3")
    (2048, 8, 1024)
    >>> parse_whole("H", "1.5")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: H must be a positive whole number, not '1.5'
    """
    if isinstance(raw, bool):
        raise SymparamsError(f"{what} must be a positive whole number, not {raw!r}")
    try:
        if isinstance(raw, str) and not _DECIMAL.fullmatch(raw.strip()):
            raise NotANumber(raw)
        value = exact_number(raw, what)
    except NotANumber:
        raise SymparamsError(f"{what} must be a positive whole number, not {_short(raw)}") from None
    if value.denominator != 1 or value <= 0:
        raise SymparamsError(f"{what} must be a positive whole number, not {_short(raw)}")
    return value.numerator


#: the suffixes people write counts with: 110M, 6.74B, 1T (decimal units, as model cards use them)
SUFFIXES = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}


def parse_count(text) -> int:
    """A parameter count: ``1000000000``, ``1_000_000_000``, ``1,000,000,000``, ``1e9``, ``110M`` or ``6.74B``.

    >>> parse_count("1e9"), parse_count("1,000,000"), parse_count("6.74B"), parse_count("110m")
    (1000000000, 1000000, 6740000000, 110000000)
    >>> parse_count("0")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: the target must be a positive whole number of parameters, not '0'
    """
    raw = str(text).strip().replace("_", "").replace(",", "") if isinstance(text, str) else text
    unit = 1
    if isinstance(raw, str) and raw[-1:].upper() in SUFFIXES:
        raw, unit = raw[:-1], SUFFIXES[raw[-1].upper()]
    if isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
        raw = int(raw)  # 1e9 from Python is exact: a whole float converts without rounding
    try:
        value = exact_number(raw, "the target") * unit
    except NotANumber:
        raise SymparamsError(f"the target must be a whole number of parameters, not {_short(text)}") from None
    if value.denominator != 1:
        raise SymparamsError(f"the target must be a whole number of parameters, not {_short(text)}")
    if value <= 0:
        raise SymparamsError(f"the target must be a positive whole number of parameters, not {_short(text)}")
    return value.numerator


def to_python(v: sp.Expr) -> int | Fraction:
    """An exact SymPy number as ``int`` or ``Fraction``."""
    v = sp.Rational(v)
    return int(v.p) if v.q == 1 else Fraction(int(v.p), int(v.q))
