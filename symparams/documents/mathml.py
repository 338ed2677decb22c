"""Formulas as presentation MathML, which browsers render natively (notebooks and the HTML page).

Products are written the way a person writes them: juxtaposed (``2H``, ``A(…)``), with a dot where
juxtaposition would mislead (``H·H``, a product kept as written, ``H·rH``; a fraction, ``H·H/A``), a
ratio such as ``r`` before the sizes it scales (``rH²``), and a real minus sign.

>>> from symparams.core.symbols import H, A, r
>>> mathml(H / A)
'<math xmlns="http://www.w3.org/1998/Math/MathML"><mrow><mfrac><mi>H</mi><mi>A</mi></mfrac></mrow></math>'
>>> mathml_inner(r * H**2)
'<mrow><mi>r</mi><mo>&#x2062;</mo><msup><mi>H</mi><mn>2</mn></msup></mrow>'
>>> import sympy as sp
>>> mathml_inner(sp.Mul(H, sp.Mul(H, r, evaluate=False), evaluate=False), "none")
'<mrow><mi>H</mi><mo>&#x22C5;</mo><mrow><mi>r</mi><mo>&#x2062;</mo><mi>H</mi></mrow></mrow>'

With ``values`` the symbols are shown as numbers (each an ``<mn data-sym="H">`` a page can refill) and every
product as ``×``, the expression itself left unevaluated:

>>> mathml_inner(sp.Mul(3, H, evaluate=False), "none", values={"H": "768"})
'<mrow><mn>3</mn><mo>&#xD7;</mo><mn class="v" data-sym="H">768</mn></mrow>'
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter
from sympy.printing.precedence import PRECEDENCE, precedence_traditional
from sympy.simplify import fraction

from ..core.formatting import thousands
from ..core.symbols import SYMBOLS

MATHML_NS = "http://www.w3.org/1998/Math/MathML"

_INVISIBLE, _DOT, _TIMES, _MINUS = "&#x2062;", "&#x22C5;", "&#xD7;", "&#x2212;"


def _unwrap(e):
    while isinstance(e, sp.UnevaluatedExpr):
        e = e.args[0]
    return e


def _kind(e) -> str:
    """How a factor reads next to another: a number, a fraction, a product, a sum, or a symbol (or power)."""
    e = _unwrap(e)
    if e.is_Integer:
        return "num"
    if e.is_Rational or (e.is_Mul or e.is_Pow) and fraction(e)[1] != 1:
        return "frac"
    if e.is_Mul:
        return "mul"
    if e.is_Add:
        return "add"
    return "sym"


def _base(e):
    e = _unwrap(e)
    return e.base if e.is_Pow else e


def _rank(e) -> int:
    """Numbers first, then ratios (``r``), then the sizes: ``2rH²``."""
    kind = _kind(e)
    if kind == "num":
        return 0
    base = _base(e)
    return 1 if base.is_Symbol and base.name in SYMBOLS and SYMBOLS[base.name].rational else 2


class _MathML(MathMLPresentationPrinter):
    """SymPy's presentation MathML with products written by hand (see the module) and ``UnevaluatedExpr(x)``
    shown as ``x``; with ``values`` (symbol name → text) every symbol is shown as its value."""

    def __init__(self, settings=None, values: dict | None = None):
        super().__init__(settings or {})
        self.values = values or {}

    def _print_UnevaluatedExpr(self, e):
        return self._print(e.args[0])

    def _print_Symbol(self, sym, style="plain"):
        if sym.name in self.values:
            x = self.dom.createElement("mn")
            x.setAttribute("class", "v")
            x.setAttribute("data-sym", sym.name)
            x.appendChild(self.dom.createTextNode(self.values[sym.name]))
            return x
        return super()._print_Symbol(sym, style)

    def _mo(self, text: str):
        x = self.dom.createElement("mo")
        x.appendChild(self.dom.createTextNode(text))
        return x

    def _paren(self, node):
        """``(node)``; the parentheses stretch only around a fraction: Chromium sets stretched ones loosely."""
        mrow = self.dom.createElement("mrow")
        tall = node.tagName == "mfrac" or bool(node.getElementsByTagName("mfrac"))
        left, right = self._mo("("), self._mo(")")
        if not tall:
            left.setAttribute("stretchy", "false")
            right.setAttribute("stretchy", "false")
        for child in (left, node, right):
            mrow.appendChild(child)
        return mrow

    def parenthesize(self, item, level, strict=False):
        prec = precedence_traditional(item)
        if prec < level or (not strict and prec <= level):
            return self._paren(self._print(item))
        return self._print(item)

    def _separator(self, left, right) -> str:
        if self.values:
            return _TIMES
        a, b = _kind(left), _kind(right)
        if b == "num":
            return _DOT
        if a == "num":
            return _INVISIBLE
        if "mul" in (a, b) or "frac" in (a, b):
            return _DOT
        if a == b == "sym" and _base(left) == _base(right):
            return _DOT
        return _INVISIBLE

    def _print_Mul(self, expr):
        mrow = self.dom.createElement("mrow")
        if expr.could_extract_minus_sign():
            mrow.appendChild(self._mo(_MINUS))
            rest = -expr
            mrow.appendChild(self._paren(self._print(rest)) if _unwrap(rest).is_Add else self._print(rest))
            return mrow
        numer, denom = fraction(expr)
        if denom is not sp.S.One:
            frac = self.dom.createElement("mfrac")
            frac.appendChild(self._print(numer))
            frac.appendChild(self._print(denom))
            mrow.appendChild(frac)
            return mrow
        if self.order == "none":
            factors = list(expr.args)
        else:
            coeff, terms = expr.as_coeff_mul()
            factors = ([coeff] if coeff != 1 else []) + list(sp.Mul._from_args(terms).as_ordered_factors())
        factors = sorted(factors, key=_rank)  # stable: a written order is kept but for numbers and ratios
        for k, f in enumerate(factors):
            if k:
                mrow.appendChild(self._mo(self._separator(factors[k - 1], f)))
            inner = _unwrap(f)
            if inner.is_Add or (k and inner.could_extract_minus_sign()):
                mrow.appendChild(self._paren(self._print(f)))
            elif inner.is_Mul and _kind(inner) != "frac":  # a product kept as written: no parentheses, a dot
                mrow.appendChild(self._print(f))
            else:
                mrow.appendChild(self.parenthesize(f, PRECEDENCE["Mul"], strict=True))
        return mrow

    def _print_Add(self, expr, order=None):
        mrow = self.dom.createElement("mrow")
        for k, arg in enumerate(self._as_ordered_terms(expr, order=order)):
            if arg.could_extract_minus_sign():
                mrow.appendChild(self._mo(_MINUS))
                arg = -arg
            elif k:
                mrow.appendChild(self._mo("+"))
            mrow.appendChild(self._print(arg))
        return mrow


def mathml(expr, display: bool = False) -> str:
    """``expr`` as a complete ``<math>`` element (a string is taken as MathML already)."""
    mode = ' display="block"' if display else ""
    return f'<math xmlns="{MATHML_NS}"{mode}>{mathml_inner(expr)}</math>'


def mathml_inner(expr, order: str | None = None, values: dict | None = None) -> str:
    """``expr`` as MathML; ``order="none"`` keeps a written form's order; integers are grouped by thousands;
    ``values`` (symbol name → text) shows the symbols as numbers, products as ``×``."""
    if isinstance(expr, str):
        return expr
    if isinstance(expr, int) or (isinstance(expr, sp.Basic) and expr.is_Integer):
        return f"<mn>{thousands(expr)}</mn>"
    settings = {"order": order} if order else {}
    return _MathML(settings, values).doprint(sp.sympify(expr))


def mathml_chain(*parts) -> str:
    """``a = b = c`` as one MathML row (strings are taken as MathML already)."""
    return '<mo>=</mo>'.join(mathml_inner(p) for p in parts)
