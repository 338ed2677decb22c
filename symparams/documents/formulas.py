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
from sympy.printing.latex import LatexPrinter

from ..core.formatting import thousands

_HOLE = re.compile("\u27e6([^\u27e7]+)\u27e7")


class _Printer(LatexPrinter):
    """SymPy's LaTeX, with a sum that SymPy's order would open with a minus opened by its first positive term:
    ``G/A - 1``, not ``-1 + G/A`` (a difference reads as one; a leading minus reads as a negative count)."""

    def _as_ordered_terms(self, expr, order=None):
        if isinstance(expr, OrderedSum):
            return list(expr.args)
        terms = super()._as_ordered_terms(expr, order=order)
        if terms and terms[0].could_extract_minus_sign():
            first = next((i for i, t in enumerate(terms) if not t.could_extract_minus_sign()), 0)
            terms = [terms[first], *terms[:first], *terms[first + 1:]]
        return terms


class OrderedSum(sp.Add):
    """A sum printed in the order its terms are given: the order of the parts a subtotal adds up."""


def in_order_of(expr: sp.Expr, parts) -> sp.Expr:
    """``expr`` (a simplified count, a sum or a product of a factor and one sum) with its sum's terms in the order
    of ``parts`` (the counts it adds up, in the order a document shows them), where each term is one part: the
    term ``V`` of ``H (P + V)`` is the token embedding's, shown first, so ``H (V + P)`` over ``V H + P H``.
    A sum whose terms are not the parts one for one (collected from several) stays as SymPy orders it.

    >>> import sympy as sp
    >>> H, P, V = sp.symbols("H P V")
    >>> print(latex(in_order_of(H * (P + V), [V * H, P * H])))
    H \\left(V + P\\right)
    """
    sums = [arg for arg in (expr.args if expr.is_Mul else (expr,)) if arg.is_Add]
    if len(sums) != 1:
        return expr
    total = sums[0]
    factor = sp.Mul(*(arg for arg in expr.args if arg is not total)) if expr.is_Mul else sp.Integer(1)
    values = [sp.expand(factor * term) for term in total.args]
    parts = [sp.expand(part) for part in parts]
    if sorted(map(sp.default_sort_key, values)) != sorted(map(sp.default_sort_key, parts)):
        return expr
    ordered = OrderedSum(*sorted(total.args, key=lambda term: parts.index(sp.expand(factor * term))),
                         evaluate=False)
    return ordered if factor == 1 else sp.Mul(factor, ordered, evaluate=False)


def _tex(expr, **settings) -> str:
    return _Printer(settings).doprint(expr)


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
        return product_latex(*expr.args) if expr.is_Mul and expr != sp.Mul(*expr.args) else _tex(expr)
    # sizes multiplied as written keep a dot between letters: H \cdot H, H \cdot r \cdot H, H \cdot \frac{H}{A}
    return _SIDE_BY_SIDE.sub(r"\1 \\cdot ", _tex(coefficient_first(expr), order="none"))


def coefficient_first(expr: sp.Expr) -> sp.Expr:
    """``expr`` as written, with the whole-number coefficient of each product (its own and its factors')
    multiplied into one in front: a number printed after a letter reads as a subscript or a digit of something
    else (``L 2 H`` as "L2H").

    >>> import sympy as sp
    >>> L, H, F = sp.symbols("L H F")
    >>> latex(sp.Mul(L, sp.Mul(2, H, F, evaluate=False), evaluate=False), written=True)
    '2 L \\\\cdot H \\\\cdot F'
    >>> latex(sp.Mul(H, sp.Mul(4, H, evaluate=False), evaluate=False), written=True)
    '4 H \\\\cdot H'
    """
    if not isinstance(expr, sp.Basic) or expr.is_Atom:
        return expr
    if expr.is_Mul and not expr.args[0].is_Number:  # a number in front already reads as one: 2 \cdot 2 H
        coefficient, factors = _coefficient_and_factors(expr.args)
        factors = [coefficient_first(f) for f in factors]
        if not factors:
            return coefficient
        return sp.Mul(*([coefficient] if coefficient != 1 else []), *factors, evaluate=False)
    args = [coefficient_first(a) for a in expr.args]
    if expr.is_Add:  # a term taken away comes last: L - 1, not -1 + L
        args.sort(key=lambda a: a.could_extract_minus_sign())
    return expr.func(*args, evaluate=False) if expr.is_Add or expr.is_Mul or expr.is_Pow else expr.func(*args)


def product_latex(*factors: sp.Expr) -> str:
    """A product kept as given (``L`` copies of one layer's count) in print: the coefficient first, then each
    factor as sympy prints it, a sum in parentheses.

    >>> import sympy as sp
    >>> L, H, A, F = sp.symbols("L H A F")
    >>> product_latex(L, 2 * H * (F + 1)), product_latex(2 * L, G := sp.Symbol("G") * H**2 / A)
    ('2 L H \\\\left(F + 1\\\\right)', '2 L \\\\frac{G H^{2}}{A}')
    """
    coefficient, rest = _coefficient_and_factors(factors)
    alone = len(rest) == 1 and coefficient == 1
    shown = " ".join(rf"\left({_tex(f)}\right)" if f.is_Add and not alone else _tex(f) for f in rest)
    if not shown or coefficient not in (1, -1):
        return " ".join(filter(None, (_tex(coefficient), shown)))
    return shown if coefficient == 1 else f"-{shown}"


def _coefficient_and_factors(factors) -> tuple:
    """The whole-number coefficients of ``factors`` multiplied into one, and what is left of each factor."""
    coefficient, rest = sp.Integer(1), []
    for f in map(sp.sympify, factors):
        c, left = f.as_coeff_Mul() if f.is_Mul or f.is_Number else (sp.Integer(1), f)
        coefficient *= c
        if left != 1:
            rest.append(left)
    return coefficient, rest


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
    if written:  # in the order the formula as written shows its factors
        return _tex(coefficient_first(expr), mul_symbol="times", symbol_names=names, order="none")
    return _tex(expr, mul_symbol="times", symbol_names=names)


def fill_numbers(expr: sp.Expr, texts: dict, *, written: bool = False) -> str:
    """:func:`latex_numbers` with the values already printed (``texts``: symbol name → LaTeX)."""
    return _HOLE.sub(lambda mo: texts[mo.group(1)], _numbers_pattern(expr, written))


def value_latex(v) -> str:
    return str(v) if v.is_Integer else _tex(v)


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

