"""A head-count proof in words and equations: what the command line, the notebooks and the HTML page share.

The order is the documents': the premise, one head and the heads side by
side, every term of N(A) that holds A, the verdict (∎ where A cancels), the
formal check ∂N/∂A, then the numbers, or a counterexample and the
re-derivation with G/A or A·D held fixed.

>>> from symparams import model
>>> print("\\n".join(proof_lines(model("bert-base").prove())))
bert-base: the parameter count does not depend on the number of heads A.
  premise: A divides H: H/A is the head dimension, a whole number
  one head: H*(H/A) + H/A; A heads: A*(H*(H/A) + H/A) = H**2 + H   [encoder.layer.*.attention.self.query, encoder.layer.*.attention.self.key, encoder.layer.*.attention.self.value]
  terms holding A: 3*L*A*(H*(H/A) + H/A) = 3*L*(H**2 + H)
  each loses A when multiplied out, and no other term contains A: N does not depend on A ∎
  formal check, A as a symbol: N = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3), a polynomial of degree 0 in A: dN/dA = 0
  witness: A in {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 768} all give 109,482,240
"""

from __future__ import annotations

import sympy as sp

from ..analysis.proof import Proof
from ..core.formatting import ratio, thousands
from ..core.symbols import A, D
from .mathml import mathml_inner

_VERDICT = {True: "does not depend", False: "depends"}
_PARTIAL = ((r"\frac{\partial N}{\partial A}",
             "<mfrac><mrow><mo>&#x2202;</mo><mi>N</mi></mrow><mrow><mo>&#x2202;</mo><mi>A</mi></mrow></mfrac>"))


def verdict(proof) -> str:
    return f"the parameter count {_VERDICT[proof.invariant]} on the number of heads A."


def proof_lines(proof) -> list[str]:
    """The proof as text lines: the verdict, then its steps and notes indented."""
    return [f"{proof.model}: {verdict(proof)}",
            *("  " + line for line in premise_lines(proof) + step_lines(proof) + note_lines(proof))]


def premise_lines(proof) -> list[str]:
    """What the per-head form rests on: the side conditions (A | H), or heads of a width D of their own."""
    if proof.conditions:
        return [f"premise: {c.en}" for c in proof.conditions]
    if D in proof.written.free_symbols:
        return ["premise: each head has a width D of its own; A need not divide H"]
    return []


def _times(copies, expr, written=False) -> str:
    """``copies`` × ``expr`` as text: ``3*L*(H**2 + H)``."""
    shown = sp.sstr(expr, order="none") if written else sp.sstr(expr)
    if copies == 1:
        return shown
    return f"{sp.sstr(copies)}*" + (f"({shown})" if expr.is_Add else shown)


def step_lines(proof) -> list[str]:
    """One head and the heads side by side, the terms of N(A) holding A, and the verdict (N(A) itself, a long
    line in plain text, is the documents')."""
    lines = []
    for t in proof.terms:
        if t.split is not None:
            heads, one = t.split
            collapsed = f" = {sp.sstr(t.collapsed)}" if t.multiplies_out else ""
            lines.append(f"one head: {sp.sstr(one, order='none')}; {heads} heads: {sp.sstr(t.written, order='none')}"
                         f"{collapsed}   [{', '.join(t.paths)}]")
    if not proof.terms:
        return lines
    for t in proof.terms:
        collapsed = f" = {_times(t.copies, t.collapsed)}" if t.multiplies_out else ""
        lines.append(f"terms holding A: {_times(t.copies, t.written, written=True)}{collapsed}"
                     + ("" if t.cancels else "   (still holds A)"))
    return lines + [conclusion(proof)]


def conclusion(proof) -> str:
    """The verdict drawn from the terms holding A: each cancels (∎), or which remain."""
    if proof.invariant:
        return "each loses A when multiplied out, and no other term contains A: N does not depend on A ∎"
    return f"no other term contains A, but these keep it: N depends on A through {sp.sstr(proof.dependence)}"


def _fixed_ratio_lines(fr) -> list[str]:
    held = ", ".join(f"{h.quantity} = {h.name}" for h in fr.held)
    subs = ", ".join(f"{h.symbol} = {sp.sstr(h.substitution)}" for h in fr.held)
    values = ", ".join(f"{k} = {v}" for k, v in fr.values.items())
    lines = [f"holding {held} fixed ({subs}): N = {sp.sstr(fr.closed_form)}, dN/dA = {sp.sstr(fr.derivative)}: "
             + ("invariant again" if fr.invariant else "still depends on A")
             + (f" (here {values})" if values else "")]
    for t, held_count in fr.remaining:
        per_head = sp.cancel(held_count / A)
        each = "" if A in per_head.free_symbols else f", {sp.sstr(per_head)} for each head"
        lines.append(f"still holding A: {_times(t.copies, held_count)}{each}   [{', '.join(t.paths)}]")
    return lines


def note_lines(proof) -> list[str]:
    """The formal check, then the numbers: the witness, or a counterexample and where it holds, and the
    re-derivation with G/A or A·D held fixed."""
    shape = "a polynomial of degree 0 in A" if proof.invariant else "an expression in A"
    lines = [f"formal check, A as a symbol: N = {sp.sstr(proof.closed_form)}, {shape}: "
             f"dN/dA = {sp.sstr(proof.derivative)}"]
    if proof.counterexample and not proof.witness:  # values picked by the prover: say which
        (a1, n1), (a2, n2) = proof.counterexample
        at = " ".join(f"{s.name}={ratio(v)}" for s, v in proof.counterexample_values.items())
        source = proof.counterexample_source
        where = f"values of {source}" if source.startswith("preset") else "small sizes picked by the prover"
        lines.append(f"counterexample ({where}: {at}): A={a1} gives {thousands(n1)}, A={a2} gives {thousands(n2)}")
    if proof.witness:
        counts = sorted(set(proof.witness.values()))
        if len(counts) == 1:
            lines.append(f"witness: A in {{{', '.join(map(str, proof.witness))}}} all give {thousands(counts[0])}")
        else:
            (a1, n1), (a2, n2) = proof.counterexample
            lines.append(f"counterexample: A={a1} gives {thousands(n1)}, A={a2} gives {thousands(n2)}")
    if proof.fixed_ratio is not None:
        lines += _fixed_ratio_lines(proof.fixed_ratio)
    return lines


def proof_equations(proof: Proof) -> list[tuple[tuple, tuple]]:
    """The proof's equations as (lhs, rhs) pairs, each side as (LaTeX, MathML): each part with a head
    H/A wide, its heads side by side and multiplied out, then with all its copies; N simplified; the
    terms holding A where some remain; ∂N/∂A.  (``A·(H·D) = A·D·H`` only reorders: left out.)"""
    out = []
    shown = [t for t in proof.terms if t.multiplies_out]
    for t in shown:
        out.append(((sp.latex(t.written, order="none"), mathml_inner(t.written, "none")),
                    (sp.latex(t.collapsed), mathml_inner(t.collapsed))))
    for t in shown:
        if t.copies != 1:
            total = sp.Mul(t.copies, t.collapsed, evaluate=False)
            out.append(((sp.latex(t.total_written, order="none"), mathml_inner(t.total_written, "none")),
                        (sp.latex(total), mathml_inner(total))))
    out.append((("N", "<mi>N</mi>"), (sp.latex(proof.closed_form), mathml_inner(proof.closed_form))))
    if not proof.invariant:
        out.append(((r"\text{terms holding } A", "<mtext>terms holding A</mtext>"),
                    (sp.latex(proof.dependence), mathml_inner(proof.dependence))))
    out.append((_PARTIAL, (sp.latex(proof.derivative), mathml_inner(proof.derivative))))
    return out
