r"""Notebook and console display of models, breakdowns and proofs.

:class:`~symparams.core.display.Displayable` objects (a
:class:`~symparams.core.model.Model`, its
:class:`~symparams.core.model.Breakdown`, a
:class:`~symparams.analysis.proof.Proof`) call these functions from the
methods Jupyter (``_repr_latex_``, ``_repr_markdown_``, ``_repr_html_``) and
IPython (``_repr_pretty_``) use, so that ``m``, ``m.breakdown()`` and
``m.prove()`` show as formulas and tables; the results of ``m.memory()``,
``m.flops()``, ``m.kv_cache()``, ``m.explain()``, a solution and a sweep show
as the tables of :mod:`.results_view`.

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
>>> print(text(model("bert", V=30522, P=512, S=2, r=4)))
bert (BERT): V=30522 P=512 S=2 r=4 pooler=true
N = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3) = H**2*(12*L + 1) + H*(13*L + 31039)
component                           parameters  share
embeddings                             31038*H
encoder                     12*H**2*L + 13*H*L
pooler                                H**2 + H
total       H**2*(12*L + 1) + H*(13*L + 31039)

Every name a user can choose (a preset, a config path) is escaped for the
format it lands in.
"""

from __future__ import annotations

import sympy as sp

from ..analysis.proof import Proof
from ..core.formatting import thousands, values_line
from ..core.model import Breakdown, Model
from .escape import escape_html, escape_md, escape_tex
from .mathml import mathml, mathml_chain
from .proof_text import conclusion, note_lines, premise_lines, proof_equations, proof_lines, verdict
from .results_view import REPORTED, report


def derive(m: Model, **options) -> str:
    """:meth:`Model.derive`: the derivation document (see :func:`symparams.documents.render.render`)."""
    from .render import render  # the renderers load on first use: a notebook display needs none of them

    return render(m, **options)


def latex(obj) -> str | None:
    """A model's, a breakdown's or a proof's LaTeX; None for a result shown as a table (Jupyter then takes its
    HTML)."""
    shown = {Model: _model_latex, Breakdown: _breakdown_latex, Proof: _proof_latex}.get(type(obj))
    return None if shown is None else shown(obj)


def markdown(obj) -> str:
    if isinstance(obj, REPORTED):  # a subclass (a LoRA fine-tuning's memory) too
        return report(obj).markdown()
    return {Model: _model_markdown, Breakdown: _breakdown_markdown, Proof: _proof_markdown}[type(obj)](obj)


def html(obj) -> str:
    if isinstance(obj, REPORTED):  # a subclass (a LoRA fine-tuning's memory) too
        return report(obj).html()
    return {Model: _model_html, Breakdown: _breakdown_html, Proof: _proof_html}[type(obj)](obj)


def text(obj) -> str:
    """What IPython prints for ``obj``."""
    if isinstance(obj, Proof):
        return "\n".join(proof_lines(obj))
    if isinstance(obj, Model):
        chain = " = ".join(thousands(p) if isinstance(p, int) else sp.sstr(p) for p in _chain(obj))
        return f"{heading(obj)}\nN = {chain}\n{obj.breakdown()}"
    if isinstance(obj, REPORTED):  # a subclass (a LoRA fine-tuning's memory) too
        return report(obj).text()
    return str(obj)


def cycle_text(obj) -> str:
    """What IPython prints for ``obj`` met again inside itself."""
    if isinstance(obj, Proof):
        return f"<Proof {obj.model}>"
    return tuple.__repr__(obj) if isinstance(obj, Breakdown) else repr(obj)


# -- numbers and formulas ----------------------------------------------------------

def _latex_number(n) -> str:
    return thousands(n, "{,}") if not (isinstance(n, sp.Basic) and not n.is_Integer) else sp.latex(n)


def _latex(expr) -> str:
    if isinstance(expr, int) or (isinstance(expr, sp.Basic) and expr.is_Integer):
        return _latex_number(expr)
    return sp.latex(expr)


# -- models -------------------------------------------------------------------------

def _chain(m: Model) -> list:
    """The closed form, then the total at the values given (a number once none is free)."""
    parts = [m.closed_form]
    value = m.count if not m.free else m.total
    if isinstance(value, int) or value != m.closed_form:
        parts.append(value)
    return parts


def heading(m: Model, escape=str) -> str:
    """``bert-base (BERT): V=30522 ... pooler=true``: the model, its family and its settings."""
    line = values_line(m.values, m.switches, m.head)
    return f"{escape(m.name)} ({m.family.title['en']})" + (f": {line}" if line else "")


def _model_latex(m: Model) -> str:
    return "$\\displaystyle N = " + " = ".join(_latex(p) for p in _chain(m)) + "$"


def _model_markdown(m: Model) -> str:
    formula = " = ".join(_latex(p) for p in _chain(m))
    title = heading(m, lambda name: escape_md(name, line_start=False))
    return f"**{title}**\n\n$$N = {formula}$$\n\n{_breakdown_markdown(m.breakdown())}"


def _model_html(m: Model) -> str:
    formula = mathml(mathml_chain("<mi>N</mi>", *_chain(m)), display=True)
    return (f'<div class="symparams-model"><p><strong>{escape_html(heading(m))}</strong></p>\n'
            f"{formula}\n{_breakdown_html(m.breakdown())}</div>")


# -- breakdowns ---------------------------------------------------------------------

def _breakdown_markdown(b: Breakdown) -> str:
    rows, total = b.cells(thousands, lambda e: f"${sp.latex(e)}$")
    lines = ["| component | parameters | share |", "|:---|---:|---:|"]
    lines += [f"| {escape_md(c, line_start=False)} | {v} | {s} |" for c, v, s in rows]
    if total is not None:
        share = "**100.00%**" if isinstance(b.total, int) else ""
        lines.append(f"| **total** | **{total}** | {share} |")
    return "\n".join(lines)


def _breakdown_latex(b: Breakdown) -> str:
    rows, total = b.cells(_latex_number, sp.latex)
    text = lambda s: escape_tex(s, breaks=False)  # noqa: E731 (inside \text{} of notebook math)
    body = [rf"\text{{{text(c)}}} & {v} & {text(s)} \\" for c, v, s in rows]
    if total is not None:
        share = r"100.00\%" if isinstance(b.total, int) else ""
        body.append(rf"\hline \text{{total}} & {total} & {share} \\")
    return ("$$\\begin{array}{lrr}\n\\text{component} & \\text{parameters} & \\text{share} \\\\ \\hline\n"
            + "\n".join(body) + "\n\\end{array}$$")


def _breakdown_html(b: Breakdown) -> str:
    rows, total = b.cells(thousands, lambda e: mathml(e))
    out = ['<table class="symparams-breakdown">',
           '<thead><tr><th style="text-align:left">component</th><th style="text-align:right">parameters</th>'
           '<th style="text-align:right">share</th></tr></thead><tbody>']
    for c, v, s in rows:
        out.append(f'<tr><td style="text-align:left">{escape_html(c)}</td><td style="text-align:right">{v}</td>'
                   f'<td style="text-align:right">{s}</td></tr>')
    if total is not None:
        share = "100.00%" if isinstance(b.total, int) else ""
        out.append(f'<tr><th style="text-align:left">total</th><th style="text-align:right">{total}</th>'
                   f'<th style="text-align:right">{share}</th></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


# -- proofs -------------------------------------------------------------------------

def _proof_latex_body(proof: Proof) -> str:
    """The premise first (``given A | H``), then the equations aligned at "="."""
    rows = " \\\\ ".join(f"{lhs[0]} &= {rhs[0]}" for lhs, rhs in proof_equations(proof))
    given = ",\\; ".join(c.latex for c in proof.conditions)
    return (f"\\text{{given }} {given}:\\qquad " if given else "") + f"\\begin{{aligned}} {rows} \\end{{aligned}}"


def _proof_notes(proof: Proof) -> list[str]:
    """The words around the equations, in the proof's order: premise, verdict (∎), formal check, numbers."""
    return premise_lines(proof) + [conclusion(proof)] + note_lines(proof)


def _proof_latex(proof: Proof) -> str:
    return f"${_proof_latex_body(proof)}$"


def _proof_markdown(proof: Proof) -> str:
    lines = [f"**{escape_md(proof.model, line_start=False)}**: {verdict(proof)}", "",
             f"$${_proof_latex_body(proof)}$$", ""]
    return "\n".join(lines + [f"- {line}" for line in _proof_notes(proof)])


def _proof_html(proof: Proof) -> str:
    """The equations in a table of three cells a row (left side, "=", right side): the "=" line up in
    every browser, where MathML's ``columnalign`` is ignored by Chromium."""
    rows = "".join(f'<tr><td style="text-align:right">{mathml(lhs[1])}</td><td>{mathml("<mo>=</mo>")}</td>'
                   f'<td style="text-align:left">{mathml(rhs[1])}</td></tr>' for lhs, rhs in proof_equations(proof))
    items = "".join(f"<li>{escape_html(line)}</li>" for line in _proof_notes(proof))
    return (f'<div class="symparams-proof"><p><strong>{escape_html(proof.model)}</strong>: '
            f"{escape_html(verdict(proof))}</p>\n<table>{rows}</table>\n<ul>{items}</ul></div>")
