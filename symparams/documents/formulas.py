"""LaTeX of a document's expressions: formulas as written or simplified, and with the model's numbers put in.

>>> import sympy as sp
>>> H, A = sp.symbols("H A")
>>> latex(H * H / A), latex_numbers(2 * H, {H: sp.Integer(768)})
('\\\\frac{H^{2}}{A}', '2 \\\\times 768')
"""

from __future__ import annotations

import re
from functools import lru_cache

import sympy as sp

from ..core.formatting import thousands

_HOLE = re.compile("\u27e6([^\u27e7]+)\u27e7")


def latex(expr: sp.Expr, *, written: bool = False) -> str:
    """``expr`` in LaTeX, products by juxtaposition as in print (``2 H``, ``H^{2} \\left(r + 1\\right)``);
    ``written`` keeps the order as written.  Memoized: presets of a family share their formulas.

    >>> import sympy as sp
    >>> H, r = sp.symbols("H r")
    >>> latex(2 * H + r * H**2)
    'H^{2} r + 2 H'
    """
    return _latex(expr, written)


#: a space between two letters (``H H``, ``H r``) or before a fraction, in a product as written
_SIDE_BY_SIDE = re.compile(r"(?<![\\A-Za-z])([A-Za-z](?:_\{\w+\})?) (?=(?:[A-Za-z](?:_\{\w+\})?|\\frac)(?![A-Za-z]))")


@lru_cache(maxsize=8192)
def _latex(expr: sp.Expr, written: bool) -> str:
    if not written:
        return sp.latex(expr)
    # sizes multiplied as written keep a dot between letters: H \cdot H, H \cdot r \cdot H, H \cdot \frac{H}{A}
    return _SIDE_BY_SIDE.sub(r"\1 \\cdot ", sp.latex(expr, order="none"))


def latex_numbers(expr: sp.Expr, values: dict, *, written: bool = False) -> str:
    """``expr`` with each symbol printed as its value, products as ``\\times``; not evaluated.

    Printed once per expression with placeholder names, which the values then
    fill in (the same text ``sympy.latex(..., symbol_names=values)`` gives).
    """
    by_name = {s.name: v for s, v in values.items()}
    return _HOLE.sub(lambda mo: value_latex(by_name[mo.group(1)]), _numbers_pattern(expr, written))


@lru_cache(maxsize=8192)
def _numbers_pattern(expr: sp.Expr, written: bool) -> str:
    """:func:`latex_numbers`'s text with a hole ``⟦name⟧`` for each symbol, printed once per expression."""
    names = {s: f"\u27e6{s.name}\u27e7" for s in expr.free_symbols}
    return sp.latex(expr, mul_symbol="times", symbol_names=names, **({"order": "none"} if written else {}))


def fill_numbers(expr: sp.Expr, texts: dict, *, written: bool = False) -> str:
    """:func:`latex_numbers` with the values already printed (``texts``: symbol name → LaTeX)."""
    return _HOLE.sub(lambda mo: texts[mo.group(1)], _numbers_pattern(expr, written))


def value_latex(v) -> str:
    return str(v) if v.is_Integer else sp.latex(v)


def math_count(n) -> str:
    """A count for math mode, thousands grouped: ``23{,}837{,}184``."""
    return thousands(n, "{,}")



def sum_latex(parts) -> str:
    """``sympy.latex(sum_as_written(*parts), order="none")`` for whole numbers ``parts`` (none negative)."""
    terms = [math_count(p) for p in parts if p != 0]
    return " + ".join(terms) if terms else "0"


def times_latex(a: int, b: int) -> str:
    """``sympy.latex(Mul(Integer(a), Integer(b), evaluate=False), mul_symbol="times")`` for whole a, b >= 0."""
    return f"{math_count(a)} \\times {math_count(b)}"

