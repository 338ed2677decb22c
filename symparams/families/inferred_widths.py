"""Widths the modeling code computes from a config (with floats, or floors of whole numbers), computed here exactly
as Python computes them.

LFM2's feed-forward width is ``int(multiplier * int(2 * F / 3))`` rounded up to a
multiple; xLSTM's is ``hidden_size * ffn_proj_factor`` rounded up likewise.  A
float multiplier is a config value, not a size: no polynomial in the sizes
gives such a width, so the data holds the computation itself (a *rule*, see
:func:`width`) and the formula is written in the width it computes.

A rule is evaluated with Python's own arithmetic, reproduced without a float:
a config's float is the exact binary fraction Python holds for it
(``Fraction(0.1)``, not one tenth); an operation with a float operand rounds
its exact result to the nearest double, ties to even, as IEEE 754 does; an
operation of whole numbers stays whole (``int / int`` is rounded once, as
CPython rounds it).  So the width is the one transformers builds, bit for bit,
and whole.  Values at or above 2**50 are refused, so that every float floor
division is the exact floor its operands' quotient has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from ..core.errors import SymparamsError

#: magnitudes at or above this are refused (the floor divisions of floats are exact below it)
LIMIT = 2 ** 50
#: the bits of a double's significand
SIGNIFICAND = 53


@dataclass(frozen=True)
class Float:
    """A Python float, held as the exact binary fraction it is."""

    value: Fraction


def nearest_double(x: Fraction) -> Fraction:
    """``x`` rounded to the nearest double, ties to even (normal doubles only: the magnitudes here are far from
    either end).

    >>> nearest_double(Fraction(1, 3)) == Fraction(1 / 3)
    True
    >>> nearest_double(Fraction(2 ** 53 + 1)) == 2 ** 53  # a tie, to the even significand
    True
    """
    if x == 0:
        return x
    sign, a = (1, x) if x > 0 else (-1, -x)
    exponent = a.numerator.bit_length() - a.denominator.bit_length()  # 2**exponent <= a < 2**(exponent + 2)
    if Fraction(2) ** exponent > a:
        exponent -= 1
    unit = Fraction(2) ** (exponent - SIGNIFICAND + 1)  # the spacing of doubles in [2**exponent, 2**(exponent+1))
    steps, rest = divmod(a / unit, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and steps % 2 == 1):
        steps += 1
    return sign * steps * unit


def width(rule, values: Mapping[str, Any], source: str = "config") -> int:
    """The whole number ``rule`` computes from ``values`` (a config's fields: whole numbers, floats, flags, None).

    A rule is a whole number, a field's name, or ``[operation, operand, ...]``: ``"+"``, ``"*"``, ``"/"``,
    ``"//"`` and ``"%"`` (Python's; ``%`` of whole numbers), ``"int"`` (truncation), ``"if"`` (a condition, then
    the value if it holds, else another) and ``"none"`` (whether a field is unset).

    >>> width(["int", ["*", "f", ["int", ["/", ["*", 2, "n"], 3]]]], {"f": 1.1, "n": 3000})
    2200
    >>> int(0.29 * 100), width(["int", ["*", "f", 100]], {"f": 0.29})  # the double below 0.29, as Python has it
    (28, 28)
    """
    out = _evaluate(rule, values, source)
    if not isinstance(out, int) or isinstance(out, bool) or out < 1:
        raise SymparamsError(f"{source}: the width {_text(rule)} comes to {_shown(out)}, not a whole number ≥ 1")
    return out


def names_of(rule) -> set[str]:
    """The fields a rule reads."""
    if isinstance(rule, str):
        return {rule}
    if isinstance(rule, list):
        return set().union(*(names_of(r) for r in rule[1:]))
    return set()


def _evaluate(rule, values: Mapping[str, Any], source: str):
    if isinstance(rule, bool) or rule is None:
        raise SymparamsError(f"the inferred data holds {rule!r} where a width rule belongs")
    if isinstance(rule, int):
        return rule
    if isinstance(rule, str):
        return _field(rule, values, source)
    operation, *operands = rule
    if operation == "none":
        return values.get(operands[0]) is None
    if operation == "if":
        condition = _evaluate(operands[0], values, source)
        return _evaluate(operands[1] if condition else operands[2], values, source)
    args = [_evaluate(r, values, source) for r in operands]
    if any(isinstance(a, bool) or a is None for a in args):
        raise SymparamsError(f"{source}: the width {_text(rule)} needs numbers, and is given {args}")
    try:
        return _checked(_ARITHMETIC[operation](*args), rule, source)
    except ZeroDivisionError:
        raise SymparamsError(f"{source}: the width {_text(rule)} divides by zero") from None


def _field(name: str, values: Mapping[str, Any], source: str):
    value = values.get(name)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SymparamsError(f"{source}: key {name} is {value}, and the width it gives is no number")
        return Float(Fraction(value))
    if value is None or isinstance(value, (bool, int)):
        return value
    raise SymparamsError(f"{source}: key {name} is {value!r}, where the width it gives needs a number")


def _exact(a) -> Fraction:
    return a.value if isinstance(a, Float) else Fraction(a)


def _as_double(a) -> Fraction:
    """An operand as Python turns it into a float for an operation with a float (a whole number rounded)."""
    return a.value if isinstance(a, Float) else nearest_double(Fraction(a))


def _floating(operation):
    """An operation that stays whole on whole numbers and rounds to a double with a float operand."""
    def apply(a, b):
        if isinstance(a, int) and isinstance(b, int):
            return operation(a, b)
        return Float(nearest_double(operation(_as_double(a), _as_double(b))))
    return apply


def _divided(a, b):
    if _exact(b) == 0:
        raise ZeroDivisionError
    if isinstance(a, int) and isinstance(b, int):
        return Float(nearest_double(Fraction(a, b)))  # CPython rounds a quotient of whole numbers once
    return Float(nearest_double(_as_double(a) / _as_double(b)))


def _floor_divided(a, b):
    if _exact(b) == 0:
        raise ZeroDivisionError
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return Float(Fraction(math.floor(_as_double(a) / _as_double(b))))  # exact below LIMIT


def _truncated(a):
    return math.trunc(_exact(a))


def _remainder(a, b):
    """Python's ``a % b`` of whole numbers (whether a head count divides a width); a float has no place here."""
    if isinstance(a, Float) or isinstance(b, Float):
        raise SymparamsError(f"a remainder of {_shown(a)} by {_shown(b)} is taken of whole numbers only")
    if b == 0:
        raise ZeroDivisionError
    return a % b


_ARITHMETIC = {"+": _floating(lambda a, b: a + b), "*": _floating(lambda a, b: a * b), "/": _divided,
               "//": _floor_divided, "int": _truncated,
               "%": _remainder}


def _checked(value, rule, source: str):
    if abs(_exact(value)) >= LIMIT:
        raise SymparamsError(f"{source}: the width {_text(rule)} reaches {_shown(value)}, beyond the 2**50 up to "
                             f"which it is computed exactly as Python computes it")
    return value


def _shown(value) -> str:
    return str(float(value.value)) if isinstance(value, Float) else repr(value)


def _text(rule) -> str:
    if isinstance(rule, list):
        operation, *operands = rule
        return f"{operation}({', '.join(_text(r) for r in operands)})"
    return str(rule)
