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
   witness; two different numbers are a counterexample;
6. when ``∂N/∂A ≠ 0`` the terms holding A are isolated (``dependence``), and
   a counterexample is found even for a symbolic model: at the model's own
   values, else at a preset's of the same family, else at small canonical
   sizes (``counterexample_values`` and ``counterexample_source`` say which),
   with head counts that satisfy every constraint (A | H, G | A, ...);
7. when the model has key/value heads G or heads of their own width D, the
   prover holds G/A and A·D fixed (``G = ρ·A``, ``D = W/A``), re-derives N
   and ∂N/∂A, and says whether invariance is restored (``fixed_ratio``).

>>> from symparams import model
>>> p = model("bert-base").prove()
>>> p.invariant, p.derivative
(True, 0)
>>> sorted(set(p.witness.values()))
[109482240]
>>> len(p.witness)  # the divisors of 768
18

Grouped-query attention (Llama 2 70B: A = 64 query heads, G = 8 key/value
heads) depends on A, and does not once G/A is held fixed:

>>> p = model("llama-2-70b").prove()
>>> p.invariant, p.dependence
(False, 2*G*H**2*L/A)
>>> p.counterexample
((64, 68714504192), (128, 68043415552))
>>> p.fixed_ratio.substitutions, p.fixed_ratio.derivative, p.fixed_ratio.values
({G: A*rho}, 0, {rho: 1/8})

T5's heads have their own width D, and a relative attention bias per stack:

>>> p = model("t5").prove()
>>> p.dependence
2*A*B + 12*A*D*H*L
>>> p.counterexample_source, p.counterexample
('preset t5-small', ((8, 60506624), (16, 79381504)))

With the heads' total width A·D = W held fixed, only the bias tables still hold A:

>>> p.fixed_ratio.substitutions, p.fixed_ratio.derivative
({D: W/A}, 2*B)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy as sp

from ..core.algebra import closed_form, small_divisors
from ..core.blocks import tree_fact
from ..core.display import Displayable, presentation
from ..core.family import HEAD_DIM
from ..core.formatting import json_number
from ..core.symbols import A, D, G, H
from ..core.values import parse_value
from ..families.presets import all_presets

#: the ratio G/A held fixed when the prover re-derives a grouped-query model
RHO = sp.Symbol("rho", positive=True, rational=True)
#: the heads' total width A·D held fixed when each head has its own width D
WIDTH = sp.Symbol("W", positive=True, integer=True)

#: small admissible sizes for a counterexample when neither the model nor a preset gives a value
CANONICAL = {"V": 1000, "V_d": 1000, "P": 128, "S": 2, "H": 64, "L": 2, "L_d": 2, "A": 8, "A_d": 8, "r": 4,
             "r_d": 4, "C": 2, "E": 32, "G": 2, "D": 16, "B": 32, "F": 256, "N_e": 8, "k_e": 2, "F_e": 64, "N_s": 1,
             "F_s": 64, "L_f": 1, "R_q": 32, "R_kv": 32, "D_n": 16, "D_r": 8, "D_v": 16}


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
class Held:
    """A quantity the re-derivation holds fixed: ``symbol`` becomes ``substitution`` in the held ``name``."""

    symbol: sp.Symbol        # G or D
    name: sp.Symbol          # ρ or W
    quantity: str            # G/A or A*D
    quantity_latex: str      # \frac{G}{A} or A D
    substitution: sp.Expr    # ρ·A or W/A
    condition: Condition



#: the quantities the re-derivation holds fixed when the count depends on A: the key/value heads in proportion
#: to A (G/A = ρ), and the heads' total width (A·D = W) where each head has its own width D
HELD = (
    Held(G, RHO, "G/A", r"\frac{G}{A}", RHO * A,
         Condition(r"G = \rho A", "G/A = ρ is held fixed: G = ρ·A key/value heads, a whole number dividing A",
                   "固定 G/A = ρ：键值头数 G = ρ·A，为整除 A 的整数")),
    Held(D, WIDTH, "A*D", r"A D", WIDTH / A,
         Condition(r"D = W / A", "A·D = W is held fixed: the heads' total width, each head W/A wide",
                   "固定 A·D = W：所有头的总宽度不变，每个头宽 W/A")),
)


@dataclass(frozen=True)
class FixedRatio:
    """The model re-derived with the quantities of :data:`HELD` it has held fixed (G/A, A·D).

    ``held`` are those quantities; ``derivative`` is ∂N/∂A of the result,
    and ``invariant`` says whether it is 0.  ``values`` are the held
    quantities at the model's own values (ρ = G/A, W = A·D), where given.
    """

    held: tuple[Held, ...]
    written: sp.Expr
    closed_form: sp.Expr
    derivative: sp.Expr
    invariant: bool
    values: dict[sp.Symbol, sp.Rational] = field(default_factory=dict)

    @property
    def substitutions(self) -> dict[sp.Symbol, sp.Expr]:
        return {h.symbol: h.substitution for h in self.held}

    def to_dict(self) -> dict[str, Any]:
        return {
            "held": [h.symbol.name for h in self.held],
            "substitutions": {h.symbol.name: sp.sstr(h.substitution) for h in self.held},
            "substitutions_latex": {h.symbol.name: sp.latex(h.substitution) for h in self.held},
            "closed_form": sp.sstr(self.closed_form),
            "closed_form_latex": sp.latex(self.closed_form),
            "derivative": sp.sstr(self.derivative),
            "invariant": self.invariant,
            "conditions": [h.condition.en for h in self.held],
            "conditions_latex": [h.condition.latex for h in self.held],
            "values": {k.name: sp.sstr(v) for k, v in self.values.items()},
        }


@dataclass(frozen=True)
class Proof(Displayable):
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
    #: G/A and A·D held fixed (G = ρ·A, D = W/A), re-derived; None for a model without G or D, or invariant anyway
    fixed_ratio: FixedRatio | None = None
    #: the values of the other symbols at which ``counterexample`` holds
    counterexample_values: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)
    #: where they come from: "model", "preset NAME" or "canonical" (small sizes picked by the prover)
    counterexample_source: str | None = None

    def __str__(self) -> str:
        """The proof in words, as ``symparams prove`` prints it."""
        return presentation().text(self)

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
            "counterexample_values": {s.name: json_number(v) for s, v in self.counterexample_values.items()},
            "counterexample_source": self.counterexample_source,
            "fixed_ratio": None if self.fixed_ratio is None else self.fixed_ratio.to_dict(),
        }


def _written_total(tree) -> sp.Expr:
    """N(A): the sum of every block as written, evaluated but not simplified."""
    terms = []
    for _, block, copies in tree.walk():
        if block.is_leaf and block.tied_to is None:
            terms.append(copies * block.as_written.doit())
    return sp.Add(*terms)


def _per_head_steps(tree) -> list[Step]:
    """Each form written per head, with the modules using it named as ``named_parameters()`` names them."""
    forms: dict[sp.Expr, list[str]] = {}
    root = tree.name if tree.ref is None else tree.ref
    for path, block in tree.reference_paths():
        if block.is_leaf and block.tied_to is None and A in block.as_written.free_symbols:
            relative = path[len(root) + 1:] if root and path.startswith(root + ".") else path
            if block.ref == "":  # a part of a fused tensor (GPT-2's c_attn): the tensor, and which part
                relative = f"{relative} ({block.name})"
            forms.setdefault(block.as_written, []).append(relative)
    return [Step("per_head", lhs=w, rhs=sp.expand(w.doit()), paths=tuple(p)) for w, p in forms.items()]


def _admissible(values, constraints, a0=None) -> list[int] | None:
    """Head counts that satisfy every constraint at ``values``; None when H has too many divisors (or
    too large a factor) to list them in a moment, and so no witness is given.

    The candidates are the divisors of H (every head count a family with
    ``A | H`` admits) and, for families whose heads have their own width
    (T5), also ``a0`` and ``2·a0``.  The answer depends only on the values of
    H and of the constraints' symbols, so presets share it.
    """
    if H not in values:
        return []
    exprs = tuple(c.expr for c in constraints)
    given = tuple((s, values.get(s)) for s in _constraint_symbols(exprs))
    found = _admissible_cached(tuple(constraints), given, a0)
    return None if found is None else list(found)


@lru_cache(maxsize=256)
def _constraint_symbols(exprs) -> tuple:
    """H and the symbols of the constraints (but A, which the candidates replace), in a fixed order."""
    found = set().union(*(e.free_symbols for e in exprs)) | {H}
    return tuple(sorted(found - {A}, key=lambda s: s.name))


@lru_cache(maxsize=4096)
def _admissible_cached(constraints: tuple, given: tuple, a0) -> tuple[int, ...] | None:
    found = _admissible_uncached({s: v for s, v in given if v is not None}, constraints, a0)
    return None if found is None else tuple(found)


def _admissible_uncached(values, constraints, a0) -> list[int] | None:
    divisors = small_divisors(int(values[H]))
    if divisors is None:
        return None
    out = []
    extra = {a0, 2 * a0} if a0 else set()
    for a in sorted(set(divisors) | extra):
        trial = {**values, A: sp.Integer(a)}
        if all(not c.expr.free_symbols <= set(trial) or
               (lambda v: v.is_Integer and v > 0)(c.expr.xreplace(trial))
               for c in constraints):
            out.append(a)
    return out


def _admissible_heads(m) -> list[int] | None:
    """Head counts that satisfy every constraint at the model's other values."""
    return _admissible(m.values, m.family.constraints, int(m.values[A]) if A in m.values else None)


def _pair(totals: dict[int, int], a0) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Two head counts with different totals: ``a0`` and its nearest neighbour, else the extremes."""
    if a0 in totals:
        others = [a for a in totals if totals[a] != totals[a0]]
        if not others:
            return None
        b = min(others, key=lambda a: (max(Fraction(a, a0), Fraction(a0, a)), -a))
        return (a0, totals[a0]), (b, totals[b])
    distinct = sorted(set(totals.values()))
    if len(distinct) < 2:
        return None
    by_total = {n: a for a, n in sorted(totals.items())}
    return (by_total[distinct[0]], distinct[0]), (by_total[distinct[-1]], distinct[-1])


@lru_cache(maxsize=256)
def _expanded(written: sp.Expr) -> sp.Expr:
    """N(A) as written, expanded: once per tree, so each model only substitutes its values."""
    return sp.expand(written)


def _totals(written, values, heads) -> dict[int, int]:
    fixed = sp.expand(_expanded(written).xreplace(values))
    return {a: int(sp.expand(fixed.xreplace({A: sp.Integer(a)}))) for a in heads}


def _candidates(m):
    """For a model with free symbols: values for every symbol but A (the model's own, the rest from a
    preset of its family, else canonical sizes), a head count to start at, and where they come from."""
    need = [s for s in m.symbols if s != A]
    own = {s: v for s, v in m.values.items() if s != A}
    a_own = int(m.values[A]) if A in m.values else None
    for preset in all_presets().values():
        if preset.family != m.family.name:
            continue
        given = {s: parse_value(s.name, preset.values[s.name]) for s in need if s.name in preset.values}
        if all(s in given or s in own for s in need):
            a0 = a_own or (int(preset.values["A"]) if "A" in preset.values else None)
            yield {**given, **own}, a0, f"preset {preset.name}"
    picked = {s: parse_value(s.name, CANONICAL.get(s.name, 2)) for s in need if s not in own}
    yield {**picked, **own}, a_own or CANONICAL["A"], "canonical"


def _counterexample(m, written):
    for values, a0, source in _candidates(m):
        pair = _pair(_totals(written, values, _admissible(values, m.family.constraints, a0) or []), a0)
        if pair is not None:
            return pair, values, source
    return None, {}, None


def _fixed_ratio(m, written) -> FixedRatio | None:
    held = tuple(h for h in HELD if h.symbol in m.symbols)
    if not held:
        return None
    fixed = written.xreplace({h.symbol: h.substitution for h in held})
    derivative = sp.cancel(sp.together(sp.diff(fixed, A)))
    values = {h.name: v for h in held if (v := _held_value(h, m.values)) is not None}
    return FixedRatio(held, fixed, closed_form(fixed), derivative, derivative == 0, values)


def _held_value(held: Held, values) -> sp.Rational | None:
    """G/A or A·D at the model's values; None unless both are given."""
    if held.symbol not in values or A not in values:
        return None
    if held.symbol == G:
        return sp.Rational(values[G], values[A])
    return sp.Integer(values[held.symbol] * values[A])


@tree_fact
def _symbolic(tree) -> tuple[sp.Expr, sp.Expr, tuple[Step, ...]]:
    """N(A) as written, ∂N/∂A and the per-head steps: they depend on the tree only."""
    written = _written_total(tree)
    # ∂N/∂A of N(A) as written, expanded first: each per-head term is multiplied out (where A
    # cancels, it is gone), so the derivative is of a sum of monomials and cheap to simplify.
    derivative = sp.cancel(sp.together(sp.diff(_expanded(written), A)))
    return written, derivative, tuple(_per_head_steps(tree))


def prove(m) -> "Proof":
    """Prove (or refute) that ``m``'s count does not depend on ``A``."""
    tree = m.tree
    written, derivative, per_head = _symbolic(tree)
    closed = m.closed_form
    invariant = derivative == 0
    dependence = sp.Add(*(t for t in sp.Add.make_args(sp.expand(closed)) if t.has(A)))
    used = set(m.symbols)
    # heads of a width D of their own: H/A is no head's dimension, and the proof does not rest on A | H
    stated = [c for c in m.family.constraints if not (c is HEAD_DIM and D in used)]
    conditions = tuple(Condition(*c.condition) for c in stated
                       if c.condition is not None and A in c.expr.free_symbols and c.expr.free_symbols <= used)
    steps = list(per_head)
    steps += [
        Step("total_as_written", lhs=tree.total_as_written),
        Step("simplified", rhs=closed),
        Step("derivative", rhs=derivative),
    ]
    fixed = None
    if not invariant:
        steps.append(Step("dependence", rhs=dependence))
        fixed = _fixed_ratio(m, written)
        if fixed is not None:
            steps += [Step("fixed_ratio", lhs=sp.Tuple(*fixed.substitutions), rhs=sp.Tuple(*fixed.substitutions.values())),
                      Step("fixed_ratio_simplified", rhs=fixed.closed_form),
                      Step("fixed_ratio_derivative", rhs=fixed.derivative)]

    witness: dict[int, int] = {}
    counterexample, at, source = None, {}, None
    others = {s: v for s, v in m.values.items() if s != A}
    heads = _admissible_heads(m) if A in m.symbols and set(m.symbols) - {A} <= set(others) else None
    if heads is not None:
        witness = _totals(written, others, heads)
        counterexample = _pair(witness, int(m.values[A]) if A in m.values else None)
        if counterexample is not None:
            at, source = others, "model"
        steps.append(Step("witness"))
    elif not invariant and A in m.symbols:
        counterexample, at, source = _counterexample(m, written)
    if counterexample is not None:
        steps.append(Step("counterexample"))
    return Proof(m.name, invariant, tuple(steps), conditions, written, closed, derivative,
                 dependence, witness, counterexample, fixed, dict(at), source)
