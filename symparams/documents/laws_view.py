"""The section that sets the published FLOPs laws beside the exact count, part by part.

Every law, formula and number is the ``flops`` command's (:attr:`~symparams.analysis.flops.Flops.laws`, worked
out by :mod:`~symparams.analysis.laws` as each source computes it); this module only picks the model they are
set beside and puts each law's parts in LaTeX.  The laws count the logits, so a base model's document sets them
beside the model with its language-model head, as ``symparams flops MODEL --head causal-lm`` does, where they
refuse the base model for want of that head alone (an encoder is refused for what it is).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..analysis.laws import LAW_NAMES
from ..core.errors import SymparamsError
from ..core.model import Model
from .formulas import OrderedSum, latex

#: how the laws refuse a model for want of its language-model head (an encoder is refused before, as one)
NO_HEAD = "no language-model head"


@dataclass(frozen=True)
class LawTerm:
    """One part where a law and the exact count differ, per token (LaTeX), and the difference's value."""

    part: str
    exact: str
    law: str
    difference: str
    value: int | Fraction
    difference_expr: sp.Expr  # for the page's MathML


@dataclass(frozen=True)
class LawView:
    """One published law per token beside the exact figure it describes (``compares``: forward, training or
    recompute, :data:`~symparams.analysis.laws.COMPARES`)."""

    name: str
    source: str
    compares: str
    formula: str
    exact: str
    difference: str
    law_value: int | Fraction
    exact_value: int | Fraction
    difference_value: int | Fraction
    terms: tuple[LawTerm, ...]
    formula_expr: sp.Expr
    difference_expr: sp.Expr


@dataclass(frozen=True)
class LawsView:
    """The laws' section: one sequence of ``seq`` tokens; ``head_added``: the base model's LM head put on."""

    seq: int
    head_added: bool
    laws: tuple[LawView, ...]
    refused: tuple[tuple[str, str], ...]  # (law, reason)


def laws_view(m: Model, seq: int) -> LawsView:
    """The laws' section of ``m``'s document, for one sequence of ``seq`` tokens."""
    f, added = m.flops(seq), False
    if m.head is None and any(r["reason"].startswith(NO_HEAD) for r in f.laws_refused):
        try:  # a decoder's base model: the laws describe it with its head
            f, added = m.with_head("causal-lm").flops(seq), True
        except SymparamsError:  # its family gives no such head: the laws stay refused with the reason
            pass
    applied = {law["name"]: law for law in f.laws}
    return LawsView(seq=seq, head_added=added,
                    laws=tuple(_law_view(applied[name]) for name in LAW_NAMES if name in applied),
                    refused=tuple((r["name"], r["reason"]) for r in f.laws_refused))


def _law_view(law: dict) -> LawView:
    formula, difference = law["formula"], law["difference"]
    terms = tuple(LawTerm(t["part"], latex(t["exact"]), latex(t["law"]), latex(t["difference"]),
                          exact_number(t["difference_value"]), t["difference"]) for t in law["terms"])
    return LawView(name=law["name"], source=law["source"], compares=law["compares"], formula=latex(formula),
                   exact=latex(sp.expand(formula + difference)),
                   difference=latex(as_its_parts(difference, [t["difference"] for t in law["terms"]])),
                   law_value=exact_number(law["law_value"]), exact_value=exact_number(law["exact_value"]),
                   difference_value=exact_number(law["difference_value"]), terms=terms, formula_expr=formula,
                   difference_expr=difference)


def as_its_parts(difference: sp.Expr, parts) -> sp.Expr:
    """A law's difference from the exact count written as the sum of its table's rows, in their order and each
    as factored as its row (``4H²L(G/A − 1) + 2FHL − 2HV − 3ALs``), where the rows add up to it exactly: a
    student reads each term off a row, where the expanded polynomial mixes the rows' terms and signs.

    >>> import sympy as sp
    >>> from symparams.documents.formulas import latex
    >>> H, L, V = sp.symbols("H L V")
    >>> print(latex(as_its_parts(2 * H * L - 2 * H * V - 2 * H**2 * L, [2 * H * L * (1 - H), -2 * H * V])))
    2 H L \\left(1 - H\\right) - 2 H V
    """
    shown = [part for part in parts if part != 0]
    if len(shown) < 2 or sp.expand(sp.Add(*shown) - difference) != 0:
        return difference
    return OrderedSum(*shown, evaluate=False)


def exact_number(value) -> int | Fraction:
    """A law's figure as the ``flops`` command gives it (a whole number, or ``"p/q"``), exactly."""
    q = Fraction(str(value))
    return q.numerator if q.denominator == 1 else q
