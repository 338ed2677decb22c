r"""Notebook and console display of models, breakdowns and proofs (issue 5).

:class:`ModelDisplay` and :class:`ProofDisplay` are mixed into
:class:`~symparams.model.Model` and :class:`~symparams.proof.Proof`;
:class:`Breakdown` is what :meth:`Model.breakdown` returns.  They hold the
methods Jupyter (``_repr_latex_``, ``_repr_markdown_``, ``_repr_html_``) and
IPython (``_repr_pretty_``) call, so that ``m``, ``m.breakdown()`` and
``m.prove()`` show as formulas and tables.

>>> from symparams import model
>>> m = model("bert-base")
>>> print(m._repr_latex_())
$\displaystyle N = H^{2} \left(2 L \left(r + 2\right) + 1\right) + H \left(L \left(r + 9\right) + P + S + V + 3\right) = 109{,}482{,}240$
>>> print(m.breakdown()._repr_markdown_())
| component | parameters | share |
|:---|---:|---:|
| embeddings | 23,837,184 | 21.77% |
| encoder | 85,054,464 | 77.69% |
| pooler | 590,592 | 0.54% |
| **total** | **109,482,240** | **100.00%** |

Every name a user can choose (a preset, a config path) is escaped for the
format it lands in:

>>> print(_md_escape("my_model*v2"))
my\_model\*v2
>>> print(_latex_text("50% of A_B"))
50\% of A\_B
"""

from __future__ import annotations

import html
import re
from typing import Any

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

from .format import percent, thousands

MATHML_NS = "http://www.w3.org/1998/Math/MathML"


# -- escaping ---------------------------------------------------------------

_LATEX_TEXT = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "%": r"\%", "_": r"\_", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}",
}


def _latex_text(text: str) -> str:
    """``text`` safe inside ``\\text{...}`` (every TeX special character escaped)."""
    return "".join(_LATEX_TEXT.get(ch, ch) for ch in str(text))


def _md_escape(text: str) -> str:
    """``text`` shown literally in Markdown (punctuation backslash-escaped, HTML escaped)."""
    text = re.sub(r"([\\`*_\[\]#|~$])", r"\\\1", str(text))
    return html.escape(text, quote=False)


# -- formulas ---------------------------------------------------------------

class _MathML(MathMLPresentationPrinter):
    """SymPy's presentation MathML, showing ``UnevaluatedExpr(x)`` as ``x``."""

    def _print_UnevaluatedExpr(self, e):
        return self._print(e.args[0])


def mathml(expr, display: bool = False) -> str:
    """``expr`` as a complete ``<math>`` element (presentation MathML).

    >>> from symparams.symbols import H, A
    >>> mathml(H / A)
    '<math xmlns="http://www.w3.org/1998/Math/MathML"><mrow><mfrac><mi>H</mi><mi>A</mi></mfrac></mrow></math>'
    """
    inner = _mathml_inner(expr)
    mode = ' display="block"' if display else ""
    return f'<math xmlns="{MATHML_NS}"{mode}>{inner}</math>'


def _mathml_inner(expr, order: str | None = None) -> str:
    """``expr`` as MathML; ``order="none"`` keeps a written form's order."""
    if isinstance(expr, str):
        return expr
    if isinstance(expr, int) or (isinstance(expr, sp.Basic) and expr.is_Integer):
        return f"<mn>{thousands(expr)}</mn>"
    return _MathML({"order": order} if order else {}).doprint(sp.sympify(expr))


def _mathml_chain(*parts) -> str:
    """``a = b = c`` as one MathML row (strings are taken as MathML already)."""
    return '<mo>=</mo>'.join(_mathml_inner(p) for p in parts)


def _latex_number(n) -> str:
    return thousands(n, "{,}") if not (isinstance(n, sp.Basic) and not n.is_Integer) else sp.latex(n)


def _latex(expr) -> str:
    if isinstance(expr, int) or (isinstance(expr, sp.Basic) and expr.is_Integer):
        return _latex_number(expr)
    return sp.latex(expr)


# -- tables -----------------------------------------------------------------

def _text_table(header, rows, align) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [f"{str(c):<{w}}" if a == "l" else f"{str(c):>{w}}" for c, w, a in zip(row, widths, align)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


class Breakdown(tuple):
    """The rows ``(component, count, share)`` of a model's top-level components.

    A tuple of rows (iterate it, index it, sum its shares), plus the total
    and the notebook displays.  A count is an ``int`` once every symbol has
    a value (an expression before); a share is an exact ``Rational`` of the
    total (``None`` while symbolic).

    >>> from symparams import model
    >>> b = model("bert-base").breakdown()
    >>> b[0]
    ('embeddings', 23837184, 4434/20365)
    >>> sum(share for _, _, share in b)
    1
    >>> print(b)
    component    parameters    share
    embeddings   23,837,184   21.77%
    encoder      85,054,464   77.69%
    pooler          590,592    0.54%
    total       109,482,240  100.00%
    """

    total: Any
    name: str

    def __new__(cls, rows, total=None, name: str = ""):
        self = super().__new__(cls, (tuple(r) for r in rows))
        self.total = total
        self.name = name
        return self

    def _cells(self, number, formula):
        rows = []
        for comp, value, sh in self:
            shown = number(value) if sh is not None or not isinstance(value, sp.Basic) or value.is_Integer \
                else formula(value)
            rows.append((comp, shown, percent(sh) if sh is not None else ""))
        total = None
        if self.total is not None:
            total = number(self.total) if isinstance(self.total, int) else formula(self.total)
        return rows, total

    def __str__(self) -> str:
        rows, total = self._cells(thousands, sp.sstr)
        if total is not None:
            rows.append(("total", total, "100.00%" if isinstance(self.total, int) else ""))
        return _text_table(("component", "parameters", "share"), rows, "lrr")

    def _repr_pretty_(self, p, cycle):
        p.text(tuple.__repr__(self) if cycle else str(self))

    def _repr_markdown_(self) -> str:
        rows, total = self._cells(thousands, lambda e: f"${sp.latex(e)}$")
        lines = ["| component | parameters | share |", "|:---|---:|---:|"]
        lines += [f"| {_md_escape(c)} | {v} | {s} |" for c, v, s in rows]
        if total is not None:
            share = "**100.00%**" if isinstance(self.total, int) else ""
            lines.append(f"| **total** | **{total}** | {share} |")
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        rows, total = self._cells(_latex_number, sp.latex)
        body = [rf"\text{{{_latex_text(c)}}} & {v} & {_latex_text(s)} \\" for c, v, s in rows]
        if total is not None:
            share = r"100.00\%" if isinstance(self.total, int) else ""
            body.append(rf"\hline \text{{total}} & {total} & {share} \\")
        return ("$$\\begin{array}{lrr}\n\\text{component} & \\text{parameters} & \\text{share} \\\\ \\hline\n"
                + "\n".join(body) + "\n\\end{array}$$")

    def _repr_html_(self) -> str:
        rows, total = self._cells(thousands, lambda e: mathml(e))
        out = ['<table class="symparams-breakdown">',
               '<thead><tr><th style="text-align:left">component</th><th style="text-align:right">parameters</th>'
               '<th style="text-align:right">share</th></tr></thead><tbody>']
        for c, v, s in rows:
            out.append(f'<tr><td style="text-align:left">{html.escape(c)}</td><td style="text-align:right">{v}</td>'
                       f'<td style="text-align:right">{s}</td></tr>')
        if total is not None:
            share = "100.00%" if isinstance(self.total, int) else ""
            out.append(f'<tr><th style="text-align:left">total</th><th style="text-align:right">{total}</th>'
                       f'<th style="text-align:right">{share}</th></tr>')
        out.append("</tbody></table>")
        return "\n".join(out)


# -- models -----------------------------------------------------------------

class _OwnPretty:
    """Puts ``_repr_pretty_`` in each subclass's own namespace.

    IPython's pretty printer walks the MRO and takes a class's own
    ``__repr__`` (Model's, or the one ``@dataclass`` writes for Proof) before
    an inherited ``_repr_pretty_``.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._repr_pretty_ = cls._repr_pretty_


class ModelDisplay(_OwnPretty):
    """Display methods for :class:`~symparams.model.Model`.

    The formula is the closed form in the symbols, then, when values are
    given, the total with them substituted (a number once none is free).

    >>> from symparams import model
    >>> print(model("bert", V=30522, P=512, S=2, r=4)._repr_latex_())
    $\\displaystyle N = H^{2} \\left(2 L \\left(r + 2\\right) + 1\\right) + H \\left(L \\left(r + 9\\right) + P + S + V + 3\\right) = H^{2} \\left(12 L + 1\\right) + H \\left(13 L + 31039\\right)$
    >>> print(model("bert-base")._pretty_text())
    bert-base (BERT): V=30522 P=512 S=2 H=768 L=12 A=12 r=4 pooler=true
    N = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3) = 109,482,240
    component    parameters    share
    embeddings   23,837,184   21.77%
    encoder      85,054,464   77.69%
    pooler          590,592    0.54%
    total       109,482,240  100.00%
    """

    def _value(self):
        """The count (``int``) when no symbol is free, else the substituted total."""
        return self.count if not self.free else self.total

    def _chain(self) -> list:
        parts = [self.closed_form]
        value = self._value()
        if isinstance(value, int) or value != self.closed_form:
            parts.append(value)
        return parts

    def _heading(self, escape=str) -> str:
        from .cli import _values_line

        line = _values_line(self)
        return f"{escape(self.name)} ({self.family.title['en']})" + (f": {line}" if line else "")

    def _pretty_text(self) -> str:
        chain = " = ".join(thousands(p) if isinstance(p, int) else sp.sstr(p) for p in self._chain())
        return f"{self._heading()}\nN = {chain}\n{self.breakdown()}"

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self) if cycle else self._pretty_text())

    def _repr_latex_(self) -> str:
        return "$\\displaystyle N = " + " = ".join(_latex(p) for p in self._chain()) + "$"

    def _repr_markdown_(self) -> str:
        formula = " = ".join(_latex(p) for p in self._chain())
        return f"**{self._heading(_md_escape)}**\n\n$$N = {formula}$$\n\n{self.breakdown()._repr_markdown_()}"

    def _repr_html_(self) -> str:
        formula = mathml(_mathml_chain("<mi>N</mi>", *self._chain()), display=True)
        return (f'<div class="symparams-model"><p><strong>{html.escape(self._heading())}</strong></p>\n'
                f"{formula}\n{self.breakdown()._repr_html_()}</div>")

    def derive(self, format: str = "md", lang: str = "en", title: str | None = None,
               template: str | None = None) -> str:
        """The derivation document of this model (``format``: ``md``, ``tex`` or ``html``)."""
        from .render import render

        return render(self, format=format, lang=lang, title=title, template=template)


# -- proofs -----------------------------------------------------------------

_VERDICT = {True: "does not depend", False: "depends"}


class ProofDisplay(_OwnPretty):
    """Display methods for :class:`~symparams.proof.Proof`.

    >>> from symparams import model
    >>> print(model("bert-base").prove()._pretty_text())
    bert-base: the parameter count does not depend on the number of heads A.
      A*(H*(H/A) + H/A) = H**2 + H
      N = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)
      dN/dA = 0
      given: A divides H: H/A is the head dimension, a whole number
      all 18 admissible head counts give 109,482,240
    >>> print(model("bert-base").prove()._repr_latex_())
    $\\begin{aligned} A \\left(H \\frac{H}{A} + \\frac{H}{A}\\right) &= H^{2} + H \\\\ N &= H^{2} \\left(2 L \\left(r + 2\\right) + 1\\right) + H \\left(L \\left(r + 9\\right) + P + S + V + 3\\right) \\\\ \\frac{\\partial N}{\\partial A} &= 0 \\end{aligned} \\qquad \\text{given } A \\mid H$
    """

    def _equations(self):
        """(lhs, rhs) pairs, each as (sstr, latex, mathml)."""
        out = []
        for step in self.steps:
            if step.key == "per_head":
                out.append(((sp.sstr(step.lhs), sp.latex(step.lhs, order="none"), _mathml_inner(step.lhs, "none")),
                            (sp.sstr(step.rhs), sp.latex(step.rhs), _mathml_inner(step.rhs))))
            elif step.key == "simplified":
                out.append((("N", "N", "<mi>N</mi>"),
                            (sp.sstr(step.rhs), sp.latex(step.rhs), _mathml_inner(step.rhs))))
            elif step.key in ("derivative", "dependence"):
                lhs = (("dN/dA", r"\frac{\partial N}{\partial A}",
                        "<mfrac><mrow><mo>&#x2202;</mo><mi>N</mi></mrow><mrow><mo>&#x2202;</mo><mi>A</mi></mrow></mfrac>")
                       if step.key == "derivative" else
                       ("terms holding A", r"\text{terms holding } A", "<mtext>terms holding A</mtext>"))
                out.append((lhs, (sp.sstr(step.rhs), sp.latex(step.rhs), _mathml_inner(step.rhs))))
        return out

    def _verdict(self) -> str:
        return f"the parameter count {_VERDICT[self.invariant]} on the number of heads A."

    def _witness_line(self) -> str | None:
        if not self.witness:
            return None
        counts = sorted(set(self.witness.values()))
        if len(counts) == 1:
            return f"all {len(self.witness)} admissible head counts give {thousands(counts[0])}"
        (a1, n1), (a2, n2) = self.counterexample
        return f"counterexample: A={a1} gives {thousands(n1)}, A={a2} gives {thousands(n2)}"

    def _pretty_text(self) -> str:
        lines = [f"{self.model}: {self._verdict()}"]
        lines += [f"  {lhs[0]} = {rhs[0]}" for lhs, rhs in self._equations()]
        lines += [f"  given: {c.en}" for c in self.conditions]
        witness = self._witness_line()
        if witness:
            lines.append(f"  {witness}")
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle):
        p.text(f"<Proof {self.model}>" if cycle else self._pretty_text())

    def _latex_body(self) -> str:
        rows = " \\\\ ".join(f"{lhs[1]} &= {rhs[1]}" for lhs, rhs in self._equations())
        given = "".join(f" \\qquad \\text{{given }} {c.latex}" for c in self.conditions)
        return f"\\begin{{aligned}} {rows} \\end{{aligned}}{given}"

    def _repr_latex_(self) -> str:
        return f"${self._latex_body()}$"

    def _repr_markdown_(self) -> str:
        lines = [f"**{_md_escape(self.model)}**: {self._verdict()}", "", f"$${self._latex_body()}$$"]
        lines += [""] + [f"- given: {c.en}" for c in self.conditions]
        witness = self._witness_line()
        if witness:
            lines.append(f"- {witness}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(f"<mtr><mtd columnalign=\"right\">{lhs[2]}</mtd><mtd columnalign=\"left\"><mo>=</mo>{rhs[2]}"
                       f"</mtd></mtr>" for lhs, rhs in self._equations())
        items = "".join(f"<li>given: {html.escape(c.en)}</li>" for c in self.conditions)
        witness = self._witness_line()
        if witness:
            items += f"<li>{html.escape(witness)}</li>"
        return (f'<div class="symparams-proof"><p><strong>{html.escape(self.model)}</strong>: '
                f"{html.escape(self._verdict())}</p>\n{mathml(f'<mtable>{rows}</mtable>', display=True)}\n"
                f"<ul>{items}</ul></div>")
