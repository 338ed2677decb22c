"""The engine: discover the fields, sample configurations, fit every shape and repeat count, assemble, verify.

``total = Σ over normalised parameter names of count(name) · Π dims(name)``,
each count and dimension fitted exactly (see :mod:`.fitting`) in the fields
the perturbation phase found it follows, then checked against real builds of
fresh configurations the fit never saw.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from typing import Any

import sympy as sp

from .discovery import Discovery, Uninferable, below_minimum, discover, draw, missed_relations, too_deep
from .fitting import LEVELS, expression, fit
from .probing import Builder, Observation, libraries
from .result import Conditions, Inferred, Parameter, Relation, Verification, flag_symbol, symbols_for

#: random valid configurations the fit is solved on
FIT_SAMPLES = 40
#: a draw is retried at most this many times per wanted sample (rejected: it did not build or changed structure)
ATTEMPTS = 4
#: the bases a fit tries with a field more than its own, or one fewer: up to quadratic terms with floors (the
#: larger ones would fit noise on a few dozen points, and cost most of the time of a type with many fields)
UP_TO_FLOORS = LEVELS.index(("constant", "linear", "quadratic", "floor"))
#: the bases an instance count tries with one more layer count: all but the cubic one (the layers among the
#: first L - S, S the layers reusing others' keys and values, are a floor of a difference)
WITHOUT_CUBIC = len(LEVELS) - 2
#: mismatches kept in the verification record
KEPT = 3

Sample = tuple[dict, Observation]


class _Regimes:
    """The structure of the base configuration under each assignment of the flags, and with each lifted field at
    its default or not (built once each)."""

    def __init__(self, builder: Builder, found: Discovery):
        self.builder, self.found, self.seen = builder, found, {}

    def of(self, values: dict):
        key = tuple((n, values[n]) for n in self.found.flag_variables)
        key += tuple((n, v) for n, v in self.found.lifted.items() if values.get(n) == v)
        if key not in self.seen:
            obs = self.builder.observe({**self.found.base, **dict(key)})
            self.seen[key] = None if obs is None or obs.uneven() else obs.regime
        return self.seen[key]


def samples(builder: Builder, found: Discovery, rng: random.Random, n: int, wide: bool = False,
            every: bool = False) -> list[Sample]:
    """``n`` random configurations that build with the base structure (fewer when too many are rejected).

    A lifted field is never at its default in a fit (the parameters it adds would be missing from some points);
    ``every`` (the verification) puts it there half of the time."""
    regimes = _Regimes(builder, found)
    out: list[Sample] = []
    for _ in range(ATTEMPTS * n):
        if len(out) == n:
            break
        values = draw(found, rng, wide, every)
        for name, default in found.lifted.items():
            if every and rng.random() < 0.5:
                values[name] = default
        if too_deep(found, values) or below_minimum(found, values) or \
                (not every and any(values[n] == v for n, v in found.lifted.items())):
            continue
        obs = builder.observe(values)
        if obs is not None and not obs.uneven() and obs.regime == regimes.of(values):
            out.append((values, obs))
    return out


def variables(found: Discovery, values: dict) -> dict[str, int]:
    """A configuration as the fit's point: free fields and flags (as 0/1)."""
    point = {n: values.get(n, found.fields[n].base) for n in found.free}
    point.update({n: int(values.get(n, found.flags[n].base)) for n in found.flag_variables})
    return point


def _dependencies(found: Discovery, target: tuple) -> list[str]:
    names = [n for n in found.free if target in found.fields[n].effects]
    return names + [n for n in found.flag_variables if target in found.flags[n].effects]


def _fit_target(found: Discovery, target: tuple, points: list, values: list) -> dict:
    """The exact fit of one target; when its own fields do not explain it, one more field is added in turn."""
    own = _dependencies(found, target)
    binary = frozenset(found.flag_variables)
    # a layer pattern is one of layers: only layer counts are divided by a fixed period, only in instance counts
    layers = frozenset(n for n in found.free if found.fields[n].counts) if target[0] == "count" else frozenset()
    result = fit(points, values, own, binary, layers=layers)
    others = [n for n in [*found.free, *found.flag_variables] if n not in own]
    for extra in others:
        if result is not None:
            break
        deep = WITHOUT_CUBIC if extra in layers else UP_TO_FLOORS
        result = fit(points, values, own + [extra], binary, max_level=deep, layers=layers)
    # a field may move a target only by moving the structure around it (a dense-layer count that shifts which
    # layers are attention layers): without it the basis is smaller, and a fit that holds is checked as any other
    for dropped in own if len(own) > 2 else ():
        if result is not None:
            break
        result = fit(points, values, [n for n in own if n != dropped], binary, max_level=UP_TO_FLOORS, layers=layers)
    if result is None:
        what = "instances" if target[0] == "count" else f"dimension {target[2]}"
        raise Uninferable(f"no exact formula for the {what} of {target[1]}")
    return result


def assemble(found: Discovery, fitted: list[Sample], symbols: dict) -> tuple[sp.Expr, tuple[Parameter, ...]]:
    """``Σ count · Π dims`` over every parameter name seen, each fitted exactly; and the fitted names."""
    points = [variables(found, values) for values, _ in fitted]
    names = sorted({name for _, obs in fitted for name in obs.shapes})
    parts = []
    for name in names:
        counts = [len(obs.shapes.get(name, ())) for _, obs in fitted]
        count = expression(_fit_target(found, ("count", name), points, counts), symbols)
        present = [(p, obs.shapes[name][0]) for p, (_, obs) in zip(points, fitted) if name in obs.shapes]
        dimensions = []
        for i in range(len(present[0][1])):
            seen = [shape[i] for _, shape in present]
            dimensions.append(expression(_fit_target(found, ("dim", name, i), [p for p, _ in present], seen), symbols))
        frozen = any(name in obs.frozen for _, obs in fitted)
        parts.append(Parameter(name, sp.expand(count), tuple(sp.expand(d) for d in dimensions), frozen))
    total = sp.expand(sp.Add(*(p.count * sp.Mul(*p.shape) for p in parts)))
    return total, tuple(parts)


def evaluate(total: sp.Expr, symbols: dict, point: dict) -> sp.Expr:
    """The formula at a point of the fit's variables, exactly."""
    return total.subs({symbols[n]: sp.Integer(v) for n, v in point.items()})


def verify(builder: Builder, found: Discovery, total: sp.Expr, symbols: dict, n: int, seed: int,
           trainable: sp.Expr | None = None) -> Verification:
    """``n`` fresh configurations (wider multipliers, irrelevant fields moved too) and the default config,
    each built for real and compared with the formula (and the trainable count with ``trainable``)."""
    fresh = samples(builder, found, random.Random(seed + 1), n, wide=True, every=True)
    wrong = []
    for values, obs in fresh:
        point = variables(found, values)
        predicted = evaluate(total, symbols, point)
        if predicted != obs.total or (trainable is not None and evaluate(trainable, symbols, point) != obs.trainable):
            wrong.append((values, str(predicted), obs.total))
    default_real = builder.observe(found.minimum)  # a branch: the default config at the branch's lowest values
    defaults = {**found.defaults, **found.minimum}
    point = {k: int(defaults.get(k, found.fields[k].base if k in found.fields else found.flags[k].base))
             for k in [*found.free, *found.flag_variables]}
    default_formula = evaluate(total, symbols, point)
    return Verification(len(fresh), len(fresh) - len(wrong), seed,
                        int(default_formula) if default_formula.is_Integer else None,
                        None if default_real is None else default_real.total,
                        tuple(({k: v for k, v in w[0].items()}, w[1], w[2]) for w in wrong[:KEPT]))


def _relations(found: Discovery) -> tuple[Relation, ...]:
    out = []
    for f, g in sorted(found.relations):
        a, b = found.fields[f].base, found.fields[g].base
        if (g, f) in found.relations and a == b:
            if f < g:
                out.append(Relation(f, "equals", g))
        else:
            out.append(Relation(f, "divides" if b % a == 0 else "below", g))
    return tuple(out)


def conditions(builder: Builder, found: Discovery) -> Conditions:
    """Where the formula holds: relations, held fields, the regime."""
    _, transformers = libraries()
    common = set(transformers.PretrainedConfig().to_dict())
    fixed = {n: f.base for n, f in found.fields.items() if f.kind == "fixed"}
    fixed.update({n: f.base for n, f in found.flags.items() if f.kind == "fixed"})
    unset = tuple(k for k, v in found.defaults.items()
                  if v is None and k.rpartition(".")[2] not in common and "token_id" not in k)
    return Conditions(
        relations=_relations(found), fixed=fixed,
        irrelevant=tuple(n for n, f in found.fields.items() if f.kind == "irrelevant"),
        derived=tuple(n for n, f in found.fields.items() if f.kind == "derived"),
        unset=unset, regime=tuple(sorted(found.observation.regime)), minimum=dict(found.minimum),
        sole=tuple(n for n, f in found.fields.items() if f.kind == "fixed" and f.sole))


def _formula(builder: Builder, found: Discovery, seed: int) -> tuple[sp.Expr, tuple, dict]:
    fitted = samples(builder, found, random.Random(seed), FIT_SAMPLES)
    if len(fitted) < FIT_SAMPLES // 2 and missed_relations(builder, found):
        fitted = samples(builder, found, random.Random(seed), FIT_SAMPLES)
    if len(fitted) < FIT_SAMPLES // 2:
        raise Uninferable(f"only {len(fitted)} of {ATTEMPTS * FIT_SAMPLES} random configurations built with "
                          f"the default structure")
    symbols = {**symbols_for(found.free), **{n: flag_symbol(n) for n in found.flag_variables}}
    try:
        total, parts = assemble(found, fitted, symbols)
    except Uninferable:  # a basis too large for the points (a per-head count times a flag): as many again
        fitted += samples(builder, found, random.Random(seed + 2), FIT_SAMPLES)
        total, parts = assemble(found, fitted, symbols)
    return total, parts, symbols


def _hold_flags(found: Discovery) -> None:
    for f in found.flags.values():
        if f.kind == "free":
            f.kind = "fixed"


#: the defaults of a held size field above which a branch is tried (no heads shared, one language: the values
#: below are none)
BRANCHED = (0, 1)


def infer(model_type: str, cls: str = "base", verify_configurations: int = 20, seed: int = 0) -> Inferred:
    """The exact parameter count of ``model_type`` with the head ``cls``, inferred from meta-device builds.

    Flags whose effect the fit cannot write as 0/1 variables are held at their defaults (a condition).  A size
    field held at a default of 0 or 1 whose larger values build too (Gemma 4's layers reusing others' keys and
    values, XLM's language embeddings, absent for one language) gets a branch: the formula from the next value
    up, inferred the same way, in the result's ``branches`` when it is exact.
    A type the engine cannot infer comes back with ``total=None`` and the reason.
    """
    start = time.perf_counter()
    builder = Builder(model_type, cls)
    main = _inferred(builder, verify_configurations, seed)
    if not main.exact:
        return main
    held = [k for k, v in main.conditions.fixed.items() if not isinstance(v, bool) and v in BRANCHED]
    branches = []
    for name in held:  # a branch counts where its field is a variable, from the next value up
        branch = _inferred(builder, verify_configurations, seed, {name: main.conditions.fixed[name] + 1})
        if branch.exact and name in branch.symbols:
            branches.append(branch)
    return replace(main, branches=tuple(branches), builds=builder.builds, failed_builds=builder.failures,
                   seconds=time.perf_counter() - start)


def _inferred(builder: Builder, verify_configurations: int, seed: int, minimum: dict | None = None) -> Inferred:
    """One formula of ``builder``'s class: the main one, or (``minimum``) a branch's."""
    _, transformers = libraries()
    start = time.perf_counter()
    model_type, cls = builder.model_type, builder.cls
    total, parts, symbols, found, verification, reason = None, (), {}, None, None, None
    try:
        found = discover(builder, minimum=minimum)
        if found.lifted:
            try:
                total, parts, symbols, verification = _attempt(builder, found, verify_configurations, seed)
            except Uninferable:
                verification = None
            if verification is None or not verification.passed:
                # the lift does not hold at the default: the field is held
                found = discover(builder, lift=False, minimum=minimum)
        if not found.lifted:
            total, parts, symbols, verification = _attempt(builder, found, verify_configurations, seed)
        if not verification.passed:
            reason = _failure(verification)
    except Uninferable as exc:
        reason = str(exc)
    flags = {n: s for n, s in symbols.items() if found is not None and n in found.flags}
    return Inferred(
        model_type=model_type, cls=cls, model_class=builder.model_class.__name__,
        transformers_version=transformers.__version__, total=total,
        symbols={n: s for n, s in symbols.items() if n not in flags}, flags=flags,
        conditions=conditions(builder, found) if found is not None else Conditions(),
        verification=verification, builds=builder.builds, failed_builds=builder.failures,
        seconds=time.perf_counter() - start, reason=reason, parameters=parts,
        trainable=None if total is None else trainable_of(total, parts), discovery=found)


def _attempt(builder: Builder, found: Discovery, n: int, seed: int) -> tuple[Any, tuple, dict, Verification]:
    """Fit and verify; when that fails with flags as variables, again with the flags held."""
    if found.observation.uneven():
        raise Uninferable("layers of different shapes under one name: " + ", ".join(found.observation.uneven()[:3]))
    total, parts, symbols, verification = _fit_and_verify(builder, found, n, seed)
    if not verification.passed and found.flag_variables:
        _hold_flags(found)
        total, parts, symbols, verification = _fit_and_verify(builder, found, n, seed)
    return total, parts, symbols, verification


def trainable_of(total: sp.Expr, parts: tuple[Parameter, ...]) -> sp.Expr:
    """The total without the frozen parameters."""
    return sp.expand(total - sp.Add(*(p.count * sp.Mul(*p.shape) for p in parts if p.frozen)))


def _fit_and_verify(builder, found, n, seed) -> tuple[Any, tuple, dict, Verification]:
    try:
        total, parts, symbols = _formula(builder, found, seed)
    except Uninferable:
        if not found.flag_variables:
            raise
        _hold_flags(found)
        total, parts, symbols = _formula(builder, found, seed)
    return total, parts, symbols, verify(builder, found, total, symbols, n, seed, trainable_of(total, parts))


def _failure(v: Verification) -> str:
    if v.configurations == 0:
        return "no fresh configuration built for the verification"
    if v.exact != v.configurations:
        return f"verification failed: {v.exact} of {v.configurations} fresh configurations exact"
    return f"the default config's count {v.default_real} is not the formula's {v.default_formula}"
