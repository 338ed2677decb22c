"""The head-count proof (:class:`~symparams.analysis.proof.Proof`) as a document shows it: LaTeX and numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

from ..analysis.family_rules import family_rule, rule_error
from ..core.model import Model
from ..core.symbols import A, D, r
from .formulas import latex, product_latex
from .module_names import printed_paths
from .walk import splits_into_heads


@dataclass(frozen=True)
class ProofView:
    """The head-count proof (:class:`symparams.analysis.proof.Proof`) as LaTeX strings and numbers."""

    invariant: bool
    per_head: tuple[tuple[str, str, tuple[str, ...]], ...]   # (as written, evaluated, paths)
    written: str
    closed: str
    derivative: str
    dependence: str | None
    conditions: tuple[tuple[str, str, str], ...]             # (LaTeX, en, zh)
    heads: tuple[int, ...]
    totals: tuple[int, ...]
    witness: tuple[tuple[int, int], ...]                     # (A, its total), by A
    counterexample: tuple[tuple[int, int], tuple[int, int]] | None
    has_heads: bool
    counterexample_source: str = ""                          # "model", "preset NAME", "canonical"
    counterexample_values: tuple[tuple[str, str], ...] = ()  # (symbol LaTeX, value LaTeX)
    fixed_ratio: dict | None = None                          # G = ρA re-derived: LaTeX strings
    #: every part written with A (see :func:`_head_term`), N(A) with identical terms holding A collected
    terms: tuple[dict, ...] = ()
    collected: str = ""
    #: some sum of N(A) as written holds one part with A more than once, so ``collected`` gathers it
    gathered: bool = False
    #: each head has a width D of its own, so the premise is not A | H
    own_width: bool = False
    family: str = ""                                         # for the modules' titles
    #: N ≈ 12·L·H² + (V+P+S)·H: {"formula", "value", "total", "share"}; "applies", "other" or "" (no values)
    thumb: dict | None = None
    thumb_status: str = ""
    #: the rule of thumb of the model's family where 12·L·H² is not it (thumb_status "family"): see :func:`_rule`
    rule: dict | None = None
    #: the catalog key of the premise's lead (``premise``, ``premise_own_width``, ``premise_inferred``; "": none),
    #: and whether admissibility conditions follow a lead that states none
    premise: str = ""
    premise_also: bool = False
    #: an inferred formula without A although the fit moved the head count: the count does not depend on it
    heads_fitted: bool = False


def _repeats_a_part(expr: sp.Expr) -> bool:
    """Whether a sum in ``expr`` (as written) adds one part holding A twice: what N(A) collected gathers."""
    if expr.is_Add:
        holding = [a for a in expr.args if a.has(A)]
        if len(holding) != len(set(holding)):
            return True
    return any(_repeats_a_part(a) for a in expr.args if a.is_Add or a.is_Mul)


def proof_view(m: Model) -> ProofView:
    """The head-count proof of ``m`` as a document shows it."""
    p = m.prove()
    named = _namer(m)
    per_head, written, closed, derivative, dependence = [], "", "", "0", None
    for step in p.steps:
        if step.key == "per_head" and splits_into_heads(step.lhs):  # B·A = A·B tells a reader nothing
            per_head.append((latex(step.lhs, written=True), latex(step.rhs), named(step.paths)))
        elif step.key == "total_as_written":
            written = latex(step.lhs, written=True)
        elif step.key == "simplified":
            closed = latex(step.rhs)
        elif step.key == "derivative":
            derivative = _derivative(step.rhs)
        elif step.key == "dependence":
            dependence = latex(step.rhs)
    heads = tuple(sorted(p.witness))
    totals = tuple(sorted(set(p.witness.values())))
    witness = tuple((a, p.witness[a]) for a in heads)  # each head count beside its own total
    fixed = p.fixed_ratio
    if fixed is not None:
        fixed = {"held": r",\; ".join(f"{h.quantity_latex} = {sp.latex(h.name)}" for h in fixed.held),
                 "substitution": r",\; ".join(f"{sp.latex(h.symbol)} = {latex(h.substitution)}"
                                               for h in fixed.held),
                 "closed": latex(fixed.closed_form),
                 "derivative": _derivative(fixed.derivative), "invariant": bool(fixed.invariant),
                 "conditions": tuple((h.condition.latex, h.condition.en, h.condition.zh) for h in fixed.held),
                 "value": r",\; ".join(f"{sp.latex(k)} = {sp.latex(v)}" for k, v in fixed.values.items()),
                 "remaining": tuple(_remaining_term(t, held, named) for t, held in fixed.remaining)}
    thumb = p.rule_of_thumb
    rule = None if thumb is not None or m.free else family_rule(m)
    own_width = D in p.written.free_symbols
    # an inferred formula is read under conditions of its own (A | H, the sizes that follow A); a hand-written
    # family's premise is multi-head attention's, or heads of a width D of their own
    premise = "premise_inferred" if m.family.inferred and p.conditions else "premise_own_width" if own_width \
        else "premise" if p.conditions else ""
    premise_also = premise == "premise_own_width" and bool(p.conditions)
    return ProofView(
        invariant=bool(p.invariant), per_head=tuple(per_head), written=written, closed=closed,
        derivative=derivative, dependence=dependence,
        conditions=tuple((c.latex, _symbols_as_math(c.en), _symbols_as_math(c.zh)) for c in p.conditions),
        heads=heads, totals=totals, witness=witness,
        counterexample=p.counterexample, has_heads=A in m.symbols,
        counterexample_source=p.counterexample_source or "",
        counterexample_values=tuple((sp.latex(k), sp.latex(v)) for k, v in p.counterexample_values.items()),
        fixed_ratio=fixed, terms=tuple(_head_term(t, named) for t in p.terms),
        collected=latex(p.collected, written=True) if p.terms else "",
        gathered=_repeats_a_part(m.tree.total_as_written),
        own_width=own_width, family=m.family.name, premise=premise, premise_also=premise_also,
        heads_fitted=A not in m.symbols and _heads_fitted(m),
        thumb=None if thumb is None else {"formula": latex(thumb.formula, written=True), "value": thumb.value,
                                          "total": thumb.total, "share": thumb.share,
                                          "error": latex(_thumb_error(m, thumb)),
                                          "biases_and_norms": thumb.total - thumb.value == _biases_and_norms(m)},
        rule=rule and _rule(rule),
        thumb_status="" if m.free else "applies" if thumb is not None else "family" if rule else "other")


def _biases_and_norms(m: Model) -> int:
    """Every bias and every norm parameter of ``m`` at its values, each counted with all its copies: what the
    rule of thumb leaves out when the model holds no weight beside its layers and its embedding tables."""
    held = sp.Integer(0)
    for _, block, copies in m.tree.walk():
        if block.is_leaf and block.tied_to is None:
            held += copies * sum((n for name, n in block.params if block.kind == "norm" or name == "bias"),
                                 sp.Integer(0))
    return int(held.xreplace(m.values))


def _thumb_error(m: Model, thumb) -> sp.Expr:
    """12·L·H² + tables: count − rule, the ratio r = 4 its 12 assumes put in."""
    return rule_error(m.closed_form, thumb.formula, {r: m.values[r]} if r in m.values else {})


def _rule(rule) -> dict:
    """A family's rule of thumb as LaTeX and numbers: the rule, its value, its error (count − rule) as a formula
    and a number; the same for the parameters one token uses, for a mixture of experts."""
    return {"key": rule.key, "formula": latex(rule.formula, written=True), "value": rule.value,
            "total": rule.total, "error": latex(rule.error), "exact": rule.error == 0, "share": rule.share,
            "active": rule.active and _rule(rule.active), "tables": _tables_sentence(rule)}


def _tables_sentence(rule) -> str:
    """The catalog key of the sentence on a dense decoder's tables: the token embedding's V·H, and the untied
    output layer's as much again only where the rule counts one (a base model's rule leaves it out)."""
    if rule.key not in ("gated", "gated_mha"):
        return ""
    return "rule_tables_output" if rule.output_layer else "rule_tables"



def has_floor(expr: sp.Expr) -> bool:
    from ..families.inferred_data import CeilDiv, FloorDiv

    return expr.has(sp.floor, sp.ceiling, FloorDiv, CeilDiv)


def _derivative(expr: sp.Expr) -> str:
    """∂N/∂A in LaTeX (the proof refuses a count whose derivative it cannot evaluate)."""
    return latex(expr)


def _heads_fitted(m: Model) -> bool:
    """Whether ``m`` is inferred from builds whose fit moved the head count (the count then holds no A because
    no parameter changed with it)."""
    if not m.family.inferred:
        return False
    from ..families.inferred_data import entries

    return any("A" in entry.get("symbols", {}).values() for entry in (entries(m.family.name) or {}).values())


#: a size symbol or a ratio of two in a side condition's text (``A``, ``2A``, ``H/A``), not inside a word
_SYMBOL_IN_TEXT = re.compile(r"(?<![\w$/])(\d*[A-Z](?:/[A-Z])?)(?![\w$/])", re.ASCII)


def _symbols_as_math(text: str) -> str:
    """A side condition's text with its symbols in the catalogs' math markup: "$A$ divides $H$: $H/A$ is …"."""
    return _SYMBOL_IN_TEXT.sub(r"$\1$", text)


def _namer(m: Model):
    """The proof's module paths (``layers.*`` for every list) as the document prints them (see
    :mod:`.module_names`); the parts of a fused tensor are its one module (GPT-2's query, key and value are
    ``c_attn``: "c_attn (query)" would read as a name ``named_parameters()`` does not have)."""
    printed = printed_paths(m)

    def named(paths) -> tuple[str, ...]:
        modules = (path.partition(" (")[0] for path in paths)
        return tuple(dict.fromkeys(printed.get(module, module) for module in modules))
    return named


def _head_term(t, named) -> dict:
    """A part written with A (:class:`~symparams.analysis.proof.HeadTerm`) in LaTeX: one head, the heads
    side by side, multiplied out, and all its copies."""
    split = t.split
    return {"written": latex(t.written, written=True), "collapsed": latex(t.collapsed),
            "copies": "" if t.copies == 1 else latex(t.copies),
            "total_written": latex(t.total_written, written=True), "total": product_latex(t.copies, t.collapsed),
            # A·(H·D) = A·D·H is no step a reader needs: the form is multiplied out only where a head is H/A wide
            "multiplies_out": t.multiplies_out,
            "heads": "" if split is None else sp.latex(split[0]),
            "one_head": "" if split is None else latex(split[1], written=True),
            "cancels": t.cancels, "paths": named(t.paths), "titles": t.titles}


def _remaining_term(t, held: sp.Expr, named) -> dict:
    """A part that still holds A once G/A and A·D are held fixed: one copy's count then, all copies', and
    what it holds per head where it is a multiple of A (T5's relative bias: B per head)."""
    per_head = sp.cancel(held / A)
    return {"written": latex(t.written, written=True), "held": latex(held), "total": product_latex(t.copies, held),
            "copies": latex(t.copies), "several": t.copies != 1,
            "per_head": "" if A in per_head.free_symbols else latex(per_head),
            "paths": named(t.paths), "titles": t.titles}

