"""Formulas as presentation MathML, which browsers render natively (notebooks and the HTML page).

>>> from symparams.core.symbols import H, A
>>> mathml(H / A)
'<math xmlns="http://www.w3.org/1998/Math/MathML"><mrow><mfrac><mi>H</mi><mi>A</mi></mfrac></mrow></math>'
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

from ..core.formatting import thousands

MATHML_NS = "http://www.w3.org/1998/Math/MathML"


class _MathML(MathMLPresentationPrinter):
    """SymPy's presentation MathML, showing ``UnevaluatedExpr(x)`` as ``x``."""

    def _print_UnevaluatedExpr(self, e):
        return self._print(e.args[0])


def mathml(expr, display: bool = False) -> str:
    """``expr`` as a complete ``<math>`` element (a string is taken as MathML already)."""
    mode = ' display="block"' if display else ""
    return f'<math xmlns="{MATHML_NS}"{mode}>{mathml_inner(expr)}</math>'


def mathml_inner(expr, order: str | None = None) -> str:
    """``expr`` as MathML; ``order="none"`` keeps a written form's order; integers are grouped by thousands."""
    if isinstance(expr, str):
        return expr
    if isinstance(expr, int) or (isinstance(expr, sp.Basic) and expr.is_Integer):
        return f"<mn>{thousands(expr)}</mn>"
    return _MathML({"order": order} if order else {}).doprint(sp.sympify(expr))


def mathml_chain(*parts) -> str:
    """``a = b = c`` as one MathML row (strings are taken as MathML already)."""
    return '<mo>=</mo>'.join(mathml_inner(p) for p in parts)
