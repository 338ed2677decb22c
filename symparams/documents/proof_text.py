"""A head-count proof in words and equations: what the command line, the notebooks and the HTML page share.

>>> from symparams import model
>>> print("\\n".join(proof_lines(model("bert-base").prove())))
bert-base: the parameter count does not depend on the number of heads A.
  per head: A*(H*(H/A) + H/A) = H**2 + H   [encoder.layer.*.attention.self.query, encoder.layer.*.attention.self.key, encoder.layer.*.attention.self.value]
  simplified total: N = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)
  dN/dA = 0
  side condition: A divides H: H/A is the head dimension, a whole number
  witness: A in {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 768} all give 109,482,240
"""

from __future__ import annotations

import sympy as sp

from ..analysis.proof import Proof
from ..core.formatting import ratio, thousands
from .mathml import mathml_inner

_VERDICT = {True: "does not depend", False: "depends"}


def verdict(proof) -> str:
    return f"the parameter count {_VERDICT[proof.invariant]} on the number of heads A."


def proof_lines(proof) -> list[str]:
    """The proof as text lines: the verdict, then its steps and notes indented."""
    return [f"{proof.model}: {verdict(proof)}", *("  " + line for line in step_lines(proof) + note_lines(proof))]


def step_lines(proof) -> list[str]:
    """The derivation: per-head forms, the simplified total, ∂N/∂A, and what holds A."""
    lines = []
    for step in proof.steps:
        if step.key == "per_head":
            lines.append(f"per head: {sp.sstr(step.lhs)} = {sp.sstr(step.rhs)}   [{', '.join(step.paths)}]")
        elif step.key == "simplified":
            lines.append(f"simplified total: N = {sp.sstr(step.rhs)}")
        elif step.key == "derivative":
            lines.append(f"dN/dA = {sp.sstr(step.rhs)}")
        elif step.key == "dependence":
            lines.append(f"terms holding A: {sp.sstr(step.rhs)}")
        elif step.key == "fixed_ratio":
            lines.append(_fixed_ratio_line(proof.fixed_ratio))
    return lines


def _fixed_ratio_line(fr) -> str:
    held = ", ".join(f"{h.quantity} = {h.name}" for h in fr.held)
    subs = ", ".join(f"{h.symbol} = {sp.sstr(h.substitution)}" for h in fr.held)
    values = ", ".join(f"{k} = {v}" for k, v in fr.values.items())
    return (f"holding {held} fixed ({subs}): N = {sp.sstr(fr.closed_form)}, dN/dA = {sp.sstr(fr.derivative)}: "
            + ("invariant again" if fr.invariant else "still depends on A")
            + (f" (here {values})" if values else ""))


def note_lines(proof) -> list[str]:
    """The side conditions, and the numbers: the witness, or a counterexample and where it holds."""
    lines = [f"side condition: {c.en}" for c in proof.conditions]
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
    return lines


def proof_equations(proof: Proof) -> list[tuple[tuple, tuple]]:
    """The proof's equations as (lhs, rhs) pairs, each side as (LaTeX, MathML)."""
    out = []
    for step in proof.steps:
        if step.key == "per_head":
            out.append(((sp.latex(step.lhs, order="none"), mathml_inner(step.lhs, "none")),
                        (sp.latex(step.rhs), mathml_inner(step.rhs))))
        elif step.key == "simplified":
            out.append((("N", "<mi>N</mi>"), (sp.latex(step.rhs), mathml_inner(step.rhs))))
        elif step.key in ("derivative", "dependence"):
            lhs = ((r"\frac{\partial N}{\partial A}",
                    "<mfrac><mrow><mo>&#x2202;</mo><mi>N</mi></mrow><mrow><mo>&#x2202;</mo><mi>A</mi></mrow></mfrac>")
                   if step.key == "derivative" else (r"\text{terms holding } A", "<mtext>terms holding A</mtext>"))
            out.append((lhs, (sp.latex(step.rhs), mathml_inner(step.rhs))))
    return out
