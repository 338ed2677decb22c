"""Does the parameter count depend on the number of attention heads A?

The proof is a derivation, not a lookup of ``free_symbols``:

1. every block written per head (``A·(H·(H/A) + H/A)``) is taken as written,
   with ``A`` in it, and evaluated (``doit``); for BERT each collapses to
   ``H² + H``;
2. the model's total as written, ``N(A)``, is the sum of all blocks as
   written (``A`` still present);
3. ``N`` is simplified to the closed form, and ``∂N/∂A`` is computed from
   the as-written total and simplified: ``0`` proves invariance;
4. the side conditions (``A | H``) under which the per-head form is valid
   are stated;
5. with values given, every admissible head count is substituted into the
   as-written total, exactly: the same number every time is the numeric
   witness; two different numbers are a counterexample.

>>> from symparams import model
>>> p = model("bert-base").prove()
>>> p.invariant, p.derivative
(True, 0)
>>> sorted(set(p.witness.values()))
[109482240]
>>> len(p.witness)  # the divisors of 768
18
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp
from sympy import divisors

from .display import ProofDisplay
from .symbols import A, H


@dataclass(frozen=True)
class Step:
    """One step of the derivation: a key for its prose, and expressions."""

    key: str
    lhs: sp.Expr | None = None
    rhs: sp.Expr | None = None
    paths: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.key}
        if self.lhs is not None:
            out["lhs"] = sp.sstr(self.lhs)
            out["lhs_latex"] = sp.latex(self.lhs, order="none")
        if self.rhs is not None:
            out["rhs"] = sp.sstr(self.rhs)
            out["rhs_latex"] = sp.latex(self.rhs)
        if self.paths:
            out["components"] = list(self.paths)
        return out


@dataclass(frozen=True)
class Condition:
    latex: str
    en: str
    zh: str


@dataclass(frozen=True)
class Proof(ProofDisplay):
    """The verdict on head-count invariance and how it was reached."""

    model: str
    invariant: bool
    steps: tuple[Step, ...]
    conditions: tuple[Condition, ...]
    written: sp.Expr          # N as written (A visible)
    closed_form: sp.Expr      # N simplified
    derivative: sp.Expr       # ∂N/∂A, simplified
    dependence: sp.Expr       # the terms of N that hold A (0 when invariant)
    witness: dict[int, int] = field(default_factory=dict)   # admissible A → total (with values)
    counterexample: tuple[tuple[int, int], tuple[int, int]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "invariant": self.invariant,
            "conditions": [c.en for c in self.conditions],
            "conditions_latex": [c.latex for c in self.conditions],
            "closed_form": sp.sstr(self.closed_form),
            "derivative": sp.sstr(self.derivative),
            "dependence": sp.sstr(self.dependence),
            "steps": [s.to_dict() for s in self.steps],
            "witness": {str(a): n for a, n in self.witness.items()},
            "counterexample": (None if self.counterexample is None else
                               [{"A": a, "total": n} for a, n in self.counterexample]),
        }


def _written_total(tree) -> sp.Expr:
    """N(A): the sum of every block as written, evaluated but not simplified."""
    terms = []
    for _, block, copies in tree.walk():
        if block.is_leaf and block.tied_to is None:
            terms.append(copies * block.as_written.doit())
    return sp.Add(*terms)


def _per_head_steps(tree) -> list[Step]:
    forms: dict[sp.Expr, list[str]] = {}
    for path, block, _ in tree.walk():
        if block.is_leaf and block.tied_to is None and A in block.as_written.free_symbols:
            forms.setdefault(block.as_written, []).append(path.split(".", 1)[-1])  # relative to the root
    return [Step("per_head", lhs=w, rhs=sp.expand(w.doit()), paths=tuple(p)) for w, p in forms.items()]


def _admissible_heads(m) -> list[int]:
    """Head counts that satisfy every constraint at the model's other values."""
    if H not in m.values:
        return []
    out = []
    for a in divisors(int(m.values[H])):
        values = {**m.values, A: sp.Integer(a)}
        if all(not c.expr.free_symbols <= set(values) or
               (lambda v: v.is_Integer and v > 0)(c.expr.xreplace(values))
               for c in m.family.constraints):
            out.append(a)
    return out


def prove(m) -> "Proof":
    """Prove (or refute) that ``m``'s count does not depend on ``A``."""
    tree = m.tree
    written = _written_total(tree)
    closed = m.closed_form
    derivative = sp.cancel(sp.together(sp.diff(written, A)))
    invariant = derivative == 0
    dependence = sp.Add(*(t for t in sp.Add.make_args(sp.expand(closed)) if t.has(A)))
    conditions = tuple(Condition(*c.condition) for c in m.family.constraints
                       if c.condition is not None and A in c.expr.free_symbols)
    steps = _per_head_steps(tree)
    steps += [
        Step("total_as_written", lhs=tree.total_as_written),
        Step("simplified", rhs=closed),
        Step("derivative", rhs=derivative),
    ]
    if not invariant:
        steps.append(Step("dependence", rhs=dependence))

    witness: dict[int, int] = {}
    counterexample = None
    others = {s: v for s, v in m.values.items() if s != A}
    if A in m.symbols and set(m.symbols) - {A} <= set(others):
        for a in _admissible_heads(m):
            witness[a] = int(sp.expand(written.xreplace({**others, A: sp.Integer(a)})))
        distinct = sorted(set(witness.values()))
        if len(distinct) > 1:
            by_total = {n: a for a, n in sorted(witness.items())}
            counterexample = ((by_total[distinct[0]], distinct[0]), (by_total[distinct[-1]], distinct[-1]))
        steps.append(Step("witness"))
    return Proof(m.name, invariant, tuple(steps), conditions, written, closed, derivative,
                 dependence, witness, counterexample)
