"""The engine: discover the fields, sample configurations, fit every shape and repeat count, assemble, verify.

``total = Σ over normalised parameter names of count(name) · Π dims(name)``,
each count and dimension fitted exactly (see :mod:`.fitting`) in the fields
the perturbation phase found it follows, then checked against real builds of
fresh configurations the fit never saw.
"""

from __future__ import annotations

import collections
import itertools
import random
import time
from dataclasses import replace
from typing import Any

import sympy as sp

from ...families.inferred import expanded
from ...families.inferred_widths import names_of
from .computed import whole_number, widths_at
from .discovered import ORDERS, OTHER_SIDE, Branch, Discovery, Uninferable, common
from .discovery import discover
from .fitting import BOUNDED, LEVELS, expression, fit
from .layers import index_floors, reordered
from .products import product_text
from .relations import missed_relations
from .probing import Builder, libraries
from .result import Conditions, Inferred, Parameter, Relation, Verification, flag_symbol, own_symbol, symbols_for
from .sampling import ATTEMPTS, Sample, admitted, parted, samples, variables

#: random valid configurations the fit is solved on
FIT_SAMPLES = 40
#: the bases a fit tries with a field more than its own, or one fewer: up to quadratic terms with floors (the
#: larger ones would fit noise on a few dozen points, and cost most of the time of a type with many fields)
UP_TO_FLOORS = LEVELS.index(("constant", "linear", "quadratic", "floor"))
#: the bases an instance count tries with one more layer count: those before the cubic one (the layers among the
#: first L - S, S the layers reusing others' keys and values, are a floor of a difference)
WITHOUT_CUBIC = LEVELS.index(("constant", "linear", "quadratic", "laurent", "cubic")) - 1
#: mismatches kept in the verification record
KEPT = 3


def _dependencies(found: Discovery, target: tuple) -> list[str]:
    names = [n for n in found.free if target in found.fields[n].effects]
    return names + [n for n in found.flag_variables if target in found.flags[n].effects]


def _fit_target(found: Discovery, target: tuple, points: list, values: list) -> dict:
    """The exact fit of one target; when its own fields do not explain it, one more field is added in turn."""
    own = _dependencies(found, target)
    binary = frozenset(found.flag_variables)
    # a layer pattern is one of layers: only layer counts are divided by a fixed period, only in instance counts
    layers = frozenset(n for n in found.free if found.fields[n].counts) if target[0] == "count" else frozenset()
    # a width computed with whole numbers only is fitted in first: the draws move its fields on a lattice where
    # the fields alone may give it too (ConvBERT's kept heads' width is H/2 wherever H over the heads is even)
    result = _in_computed(found, points, values, own, binary, layers, whole=True) \
        or fit(points, values, own, binary, layers=layers) or _factored(points, values, own, binary, layers) \
        or _in_computed(found, points, values, own, binary, layers)
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
    # a field's own fields include those its probe moved along (a head count moved with the width it divides):
    # a width only two of them give, with a floor, has too large a basis in all of them (SeamlessM4T's speech
    # encoder's head width floor(hidden_size/speech_encoder_attention_heads), beside four more head counts)
    for pair in itertools.combinations(own, 2) if len(own) > 2 and target[0] == "dim" else ():
        if result is not None:
            break
        result = fit(points, values, list(pair), binary, max_level=UP_TO_FLOORS, layers=layers)
    # the last resort, after all else, so that no count fitted before changes: ranges of layers (see BOUNDED), in
    # the target's own fields, or with one more (at the base, Flint's dense layers number 2 whatever the layers)
    last = {"max_level": len(LEVELS) - 1, "min_level": BOUNDED}
    for names in [own, *(own + [extra] for extra in others)] if target[0] == "count" and found.last_resort else ():
        if result is not None:
            break
        result = fit(points, values, names, binary, layers=layers, **last) \
            or _factored(points, values, names, binary, layers, **last)
    if result is None:
        what = "instances" if target[0] == "count" else f"dimension {target[2]}"
        raise Uninferable(f"no exact formula for the {what} of {target[1]}")
    return result


def _in_computed(found: Discovery, points: list, values: list, own: list, binary: frozenset,
                 layers: frozenset, whole: bool = False) -> dict | None:
    """A fit in a width the modeling code computes (see :mod:`.computed`) in place of the fields it is computed
    from, where those fields fit no basis (LFM2's feed-forward width); ``whole``: in the widths computed with
    whole numbers only, tried before the fields."""
    for name, rule in found.computed.items():
        if whole and not whole_number(rule):
            continue
        ingredients = names_of(rule)
        if not ingredients & set(own):
            continue
        deps = [name, *(n for n in own if n not in ingredients)]
        found_fit = fit(points, values, deps, binary, layers=layers) or _factored(points, values, deps, binary, layers)
        if found_fit is not None:
            return found_fit
    return None


def _factored(points: list, values: list, own: list, binary: frozenset, layers: frozenset,
              **levels) -> dict | None:
    """A fit of a quantity every value of which a field of its own divides, as that field times a fit of the
    quotient in the others (NLLB-MoE's experts: as many as the config has, on one layer in every
    ``sparse_step``): the quotient's basis is the smaller one the points can pin down.  A flag is such a field
    where the quantity is 0 wherever the flag is off (Jamba's convolution biases, on every recurrent layer of a
    pattern of layers): the quotient is fitted where it is on.  ``levels``: the fit's bounds on its basis."""
    for name in own:
        if name in binary:
            on = [(p, v) for p, v in zip(points, values) if p[name]]
            if on and all(v == 0 for p, v in zip(points, values) if not p[name]):
                found = fit([p for p, _ in on], [v for _, v in on], [n for n in own if n != name], binary,
                            layers=layers, **levels)
                if found is not None:
                    return {replace(t, powers=_times(t.powers, name)): c for t, c in found.items()}
            continue
        if not all(p[name] > 0 and v % p[name] == 0 for p, v in zip(points, values)):
            continue
        rest = [n for n in own if n != name]
        found = fit(points, [v // p[name] for p, v in zip(points, values)], rest, binary, layers=layers, **levels)
        if found is not None:
            return {replace(t, powers=_times(t.powers, name)): c for t, c in found.items()}
    return None


def _times(powers: tuple, name: str) -> tuple:
    """A monomial's powers times one more ``name``."""
    out = dict(powers)
    out[name] = out.get(name, 0) + 1
    return tuple(sorted((n, e) for n, e in out.items() if e))


def assemble(found: Discovery, fitted: list[Sample], symbols: dict) -> tuple[sp.Expr, tuple[Parameter, ...]]:
    """``Σ count · Π dims`` over every parameter name seen, each fitted exactly; and the fitted names."""
    points = [variables(found, values, obs) for values, obs in fitted]
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
           trainable: sp.Expr | None = None, parts: tuple[Parameter, ...] = ()) -> Verification:
    """``n`` fresh configurations the formula's conditions admit (see :func:`admitted`) and the default config,
    each built for real and compared with the formula (and the trainable count with ``trainable``); the default
    config must meet the conditions too, or no config would.  A configuration that gives one of ``parts`` a
    negative count or dimension is no test: ``count --config`` refuses it (more dense layers than layers)."""
    where = conditions(builder, found)
    # only a difference (layers less dense layers) can go below 0
    differences = [e for p in parts for e in (p.count, *p.shape)
                   if any(c < 0 for c in e.as_coefficients_dict().values())]
    fresh = [(values, obs) for values, obs in admitted(builder, found, where, random.Random(seed + 1), n)
             if not any(evaluate(e, symbols, variables(found, values, obs)) < 0 for e in differences)]
    wrong, differs = [], ""
    for sample in fresh:
        for values, obs in [sample, *_in_another_order(builder, found, sample)]:
            point = variables(found, values, obs)
            predicted = evaluate(total, symbols, point)
            if predicted != obs.total or (trainable is not None
                                          and evaluate(trainable, symbols, point) != obs.trainable):
                wrong.append((values, str(predicted), obs.total))
                differs = differs or _difference(parts, symbols, point, obs)
                break  # one configuration, one mismatch
    default_real = builder.observe(found.branch.overrides)  # a branch: the default config where the branch starts
    defaults = {**found.defaults, **kinds_of_lists(found.defaults, found.free), **found.branch.overrides}
    point = {k: int(defaults.get(k, found.fields[k].base if k in found.fields else found.flags[k].base))
             for k in [*found.free, *found.flag_variables]}
    if found.computed and default_real is not None:  # the widths the default config's build computed
        point.update(widths_at(found.computed, {**found.defaults, **found.branch.overrides, **default_real.values}))
    default_formula = evaluate(total, symbols, point)
    return Verification(len(fresh), len(fresh) - len(wrong), seed,
                        int(default_formula) if default_formula.is_Integer else None,
                        None if default_real is None else default_real.total,
                        tuple(({k: v for k, v in w[0].items()}, w[1], w[2]) for w in wrong[:KEPT]),
                        tuple(where.violated({k: v for k, v in defaults.items() if v is not None})), differs)


def _in_another_order(builder: Builder, found: Discovery, sample: Sample) -> list[Sample]:
    """A fresh configuration whose per-layer lists of kinds come out otherwise in another order (see
    :func:`~.layers.reordered`), built so (none where there is no other order or it does not build): a formula
    in kind counts must count it alike, as it counts a config.json's list whatever its order."""
    other = reordered(found.kinds, sample[0])
    obs = builder.observe(other) if other is not None else None
    # the kinds as the config holds them, with its list
    return [] if obs is None else [({**other, **kinds_of_lists(obs.values, found.free)}, obs)]


def _difference(parts: tuple[Parameter, ...], symbols: dict, point: dict, obs) -> str:
    """The first parameter a configuration's build holds otherwise than the formula counts it, in a few words."""
    fitted = {p.name: p for p in parts}
    for name in sorted(fitted.keys() | obs.shapes.keys()):
        part, built = fitted.get(name), obs.shapes.get(name)
        if part is None:
            return f"{name}: built, not in the formula"
        count = evaluate(part.count, symbols, point)
        shape = [evaluate(d, symbols, point) for d in part.shape]
        if built is None and count != 0:
            return f"{name}: {count} in the formula, none built"
        if built is not None and (count != len(built) or any(list(s) != shape for s in built)):
            return f"{name}: {count} × {shape} in the formula, {len(built)} × {list(built[0])} built"
    return "the trainable count"


def kinds_of_lists(values: dict, names) -> dict[str, int]:
    """The kind counts among ``names`` (``list#kind``) as the per-layer lists of ``values`` hold them."""
    out = {}
    for name in names:
        listed, mark, kind = name.partition("#")
        entries = expanded(values.get(listed)) if mark else None
        if entries is not None:
            out[name] = entries.count(kind)
    return out


def _relations(found: Discovery) -> tuple[Relation, ...]:
    """The relations as the sampled domain holds them: an equal pair (each moved only with the other, equal at the
    base), else the first divides the second where its base divides the second's, or is below it where it is
    smaller.  A pair each moved only with the other at unequal bases (a head width and the width it divides)
    keeps only the way its bases divide: the way back says no more than that they moved together."""
    out = []
    for f, g in sorted(found.relations):
        a, b = found.fields[f].base, found.fields[g].base
        mutual = (g, f) in found.relations
        if mutual and a == b:
            if f < g:
                out.append(Relation(f, "equals", g))
        elif b % a == 0:
            out.append(Relation(f, "divides", g))
        elif not mutual and a < b:
            out.append(Relation(f, "below", g))
    return tuple(out)


def conditions(builder: Builder, found: Discovery) -> Conditions:
    """Where the formula holds: relations, held fields, fields it needs unset or set, the regime."""
    fixed = {n: f.base for n, f in found.fields.items() if f.kind == "fixed"}
    fixed.update({n: f.base for n, f in found.flags.items() if f.kind == "fixed"})
    given = tuple(n for n, _ in found.branch.given)
    unset = tuple(k for k, v in found.defaults.items()
                  if (v is None or k in found.empty) and not common(k) and k not in found.quiet and k not in given)
    split = tuple(Relation(left, kind, right) for left, kind, right in found.branch.split)
    # the other side of each meeting the main formula found is a formula of its own: this one holds on its side
    other = tuple(Relation(left, OTHER_SIDE[kind], right)
                  for left, kind, right, _ in found.splits if kind in ("equals", *ORDERS))
    products = tuple(Relation(product_text(left), "equals", product_text(right)) for left, right in found.products)
    orders = tuple(Relation(high, "atleast", low) for low, high in sorted(found.orders))
    relations = tuple(dict.fromkeys((*_relations(found), *products, *orders, *split, *other)))
    return Conditions(
        relations=relations, fixed=fixed,
        irrelevant=tuple(n for n, f in found.fields.items() if f.kind == "irrelevant") + tuple(sorted(found.quiet)),
        derived=tuple(n for n, f in found.fields.items() if f.kind == "derived"),
        unset=unset, regime=tuple(sorted(found.observation.regime)),
        minimum={**found.minimum, **found.lowest, **found.least},
        sole=tuple(n for n, f in found.fields.items() if f.kind == "fixed" and f.sole), given=given,
        split=tuple(str(r) for r in split), sums={listed: size for size, (listed, _) in found.sums.items()})


def _formula(builder: Builder, found: Discovery, seed: int) -> tuple[sp.Expr, tuple, dict]:
    # kept to one side of a bound, a fit's ranges of layers have four layer fields, and a flag that switches such a
    # count leaves half the points to its quotient: twice as many
    wanted = FIT_SAMPLES * (2 if found.sides else 1)
    fitted = samples(builder, found, random.Random(seed), wanted)
    if len(fitted) < wanted // 2 and missed_relations(builder, found):
        fitted = samples(builder, found, random.Random(seed), wanted)
    if len(fitted) < wanted // 2:
        raise Uninferable(f"only {len(fitted)} of {ATTEMPTS * wanted} random configurations built with "
                          f"the default structure{_commonest(builder.errors)}")
    fitted += parted(builder, found, fitted)
    symbols = {**symbols_for(found.free), **{n: own_symbol(n) for n in found.computed},
               **{n: flag_symbol(n) for n in found.flag_variables}}
    try:
        total, parts = assemble(found, fitted, symbols)
    except Uninferable:  # a basis too large for the points (a per-head count times a flag): as many again
        fitted += samples(builder, found, random.Random(seed + 2), wanted)
        try:
            total, parts = assemble(found, fitted, symbols)
        except Uninferable:
            if found.lowest or not _few_layers(found):
                raise
            # a pattern of layers whose first few differ (OLMo-Hybrid: the last of fewer than 4 layers is a
            # full-attention one): the formula from the base's layer counts up, a condition
            found.lowest = _few_layers(found)
            return _formula(builder, found, seed)
    return total, parts, symbols


def _few_layers(found: Discovery) -> dict:
    """The free layer counts and their base values, where the base has more than one layer."""
    return {n: f.base for n, f in found.fields.items()
            if f.free and f.counts and "layer" in n.rpartition(".")[2] and isinstance(f.base, int) and f.base > 1}


def _hold_flags(found: Discovery) -> None:
    for f in found.flags.values():
        if f.kind == "free":
            f.kind = "fixed"


#: the defaults of a held size field above which a branch is tried (no heads shared, one language: the values
#: below are none)
BRANCHED = (0, 1)


def infer(model_type: str, cls: str = "base", verify_configurations: int = 20, seed: int = 0) -> Inferred:
    """The exact parameter count of ``model_type`` with the head ``cls``, inferred from meta-device builds.

    Flags whose effect the fit cannot write as 0/1 variables are held at their defaults (a condition).  Where a
    config may leave the main formula's side, the other side gets a formula of its own, inferred the same way
    and kept in the result's ``branches`` when it is exact (see :func:`branch_starts`).
    A type the engine cannot infer comes back with ``total=None`` and the reason.
    """
    start = time.perf_counter()
    builder = Builder(model_type, cls)
    main, found = _inferred(builder, verify_configurations, seed)
    if not main.exact:
        return main
    branches = []
    for branch in branch_starts(main, found):
        inferred, _ = _inferred(builder, verify_configurations, seed, branch)
        if inferred.exact and all(name in inferred.symbols for name, _ in (*branch.minimum, *branch.given)):
            branches.append(inferred)
    return replace(main, branches=tuple(branches), builds=builder.builds, failed_builds=builder.failures,
                   seconds=time.perf_counter() - start)


def branch_starts(main: Inferred, found: Discovery) -> list[Branch]:
    """The branches worth a formula of their own, most specific first (a config is counted by the first whose
    side it is on): fields the default leaves unset whose setting changes shapes (set: variables; several that
    build only together, together), the other side of two fields meeting, and a size field held at 0 or 1 whose
    larger values build (XLM's language embeddings), from the next value up."""
    given = [Branch(given=tuple((name, value) for name in names))
             for names, value in sorted(found.optional.items(), key=lambda item: -len(item[0]))]
    split = [Branch(split=((left, kind, right),), start=start) for left, kind, right, start in found.splits]
    held = [Branch(minimum=((name, value + 1),)) for name, value in main.conditions.fixed.items()
            if not isinstance(value, bool) and value in BRANCHED]
    return given + split + held


def _inferred(builder: Builder, verify_configurations: int, seed: int,
              branch: Branch = Branch()) -> tuple[Inferred, Discovery | None]:
    """One formula of ``builder``'s class: the main one, or a branch's; and its discovery."""
    _, transformers = libraries()
    start = time.perf_counter()
    model_type, cls = builder.model_type, builder.cls
    total, parts, symbols, found, verification, reason = None, (), {}, None, None, None
    try:
        found = discover(builder, branch=branch)
        if found.lifted:
            try:  # no bounds tried here: a lift that fails is dropped first, as before there were any
                total, parts, symbols, verification = _attempt(builder, found, verify_configurations, seed)
            except Uninferable:
                verification = None
            if verification is None or not verification.passed:
                # the lift does not hold at the default: the field is held
                found = discover(builder, lift=False, branch=branch)
        if not found.lifted:
            total, parts, symbols, verification = _bounded(builder, found, verify_configurations, seed)
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
        trainable=None if total is None else trainable_of(total, parts), discovery=found), found


def _bounded(builder: Builder, found: Discovery, n: int, seed: int) -> tuple[Any, tuple, dict, Verification]:
    """:func:`_attempt`; where that fails, again with the last levels of counts (see :data:`~.fitting.BOUNDED`),
    then so on one side of each bound in turn (see :func:`bounds`), the other side left to a branch: the first
    that holds.  A formula that holds at once is the one it always was."""
    state = _state(found)
    try:
        first, error = _attempt(builder, found, n, seed), None
    except Uninferable as exc:
        first, error = None, exc
    if first is not None and first[3].passed or found.branch != Branch() and not found.sides:
        return _given(first, error)  # another type's branches stay as they were
    after = _state(found)
    floored = _from_index_floors(builder, found, n, seed)
    if floored is not None:
        return floored
    found.last_resort = True
    # a bound the base's layers hid is tried first: the last levels alone would fail there, and take as long
    shown = bounds(found) if found.branch == Branch() else []
    hidden = [b for b in shown if b[0] in found.hidden]
    for bound in [*hidden, None, *(b for b in shown if b not in hidden)]:
        _restore(found, state)
        found.splits += [bound] if bound else []
        attempt = _passed_attempt(builder, found, n, seed)
        if attempt is not None:
            return attempt
        found.splits = [s for s in found.splits if s != bound]
    found.last_resort = False
    _restore(found, after)
    return _given(first, error)


def _from_index_floors(builder: Builder, found: Discovery, n: int, seed: int):
    """:func:`_attempt` with each layer count drawn no lower than the layers a list of layer indices the config
    holds names (see :func:`~.layers.index_floors`), where that raises one: the attempt when it holds, else None
    (the discovery as it was).  Tried only once the formula failed without: a type exact without it keeps its
    formula and its conditions."""
    floors = {name: value for name, value in index_floors(builder, found).items()
              if value > found.lowest.get(name, 0)}
    if not floors:
        return None
    state = _state(found)
    found.lowest.update(floors)
    attempt = _passed_attempt(builder, found, n, seed)
    if attempt is None:
        _restore(found, state)
    return attempt


def _passed_attempt(builder: Builder, found: Discovery, n: int, seed: int):
    """:func:`_attempt` where it fits and its verification passes, else None."""
    try:
        attempt = _attempt(builder, found, n, seed)
    except Uninferable:
        return None
    return attempt if attempt is not None and attempt[3].passed else None


def _given(result, error):
    if result is None:
        raise error
    return result


def _state(found: Discovery) -> tuple:
    """What a failed attempt changes of a discovery: the flags it held, the layers it drew no lower than."""
    return {n: f.kind for n, f in found.flags.items()}, dict(found.lowest)


def _restore(found: Discovery, state: tuple) -> None:
    kinds, lowest = state
    for name, kind in kinds.items():
        found.flags[name].kind = kind
    found.lowest = dict(lowest)


def bounds(found: Discovery) -> list[tuple]:
    """The order splits worth trying, ``(bound, "atleast", layers, start)``: a field that moves a count may bound
    it by a layer count, and stop mattering past it (ERNIE 4.5's last layer with experts, Zamba2's shared blocks,
    as many as the hybrid layers at most): first those the base's few layers hid (see
    :func:`~.relations.deeper`), which show it, then the others; the formula is fitted
    where the bound is below the layer count, as the default config has it, the other side a branch of its own
    started with the bound at the default's layer count."""
    defaults = {**found.defaults, **kinds_of_lists(found.defaults, found.free)}
    counts = [n for n, f in found.fields.items() if f.free and f.counts and "layer" in n.rpartition(".")[2]]
    # the fields the base's layers hid first, then any other that moves a count
    others = [n for n, f in found.fields.items() if f.free and f.counts and n not in found.hidden]
    out = []
    for bound in [*found.hidden, *others]:
        for layers in counts:
            low, top = defaults.get(bound), defaults.get(layers)
            if layers != bound and isinstance(low, int) and isinstance(top, int) and 0 < low < top:
                out.append((bound, "atleast", layers, ((bound, top),)))
    return out


def _attempt(builder: Builder, found: Discovery, n: int, seed: int) -> tuple[Any, tuple, dict, Verification]:
    """Fit and verify; when that fails with flags as variables, again with the flags held."""
    if found.observation.uneven():
        raise Uninferable("layers of different shapes under one name: " + ", ".join(found.observation.uneven()[:3]))
    total, parts, symbols, verification = _fit_and_verify(builder, found, n, seed)
    learned, latest = set(), verification
    for _ in range(LEARNED):  # one divisibility more each round, while the verification still fails
        relation = next(iter(_learned(found, latest)), None)
        if relation is None:
            break
        found.relations.add(relation)
        learned.add(relation)
        try:
            attempt = _fit_and_verify(builder, found, n, seed)
        except Uninferable:
            break
        if attempt[3].passed:
            return attempt
        latest = attempt[3]
    found.relations -= learned
    if not verification.passed and found.flag_variables:
        _hold_flags(found)
        total, parts, symbols, verification = _fit_and_verify(builder, found, n, seed)
    return total, parts, symbols, verification


#: the relations learned from failed verifications, at most
LEARNED = 3


def _learned(found: Discovery, verification: Verification) -> list[tuple[str, str]]:
    """Divisibilities the base holds and the configurations that failed the verification break, those breaking
    most first: a formula may be simple only where one count divides another (Switch Transformers: one sparse
    layer in every ``num_layers // num_sparse_encoder_layers``), a condition the fit and its verification then
    keep to."""
    if verification.passed or not verification.mismatches:
        return []
    base = {n: found.fields[n].base for n in found.free if isinstance(found.fields[n].base, int)}
    found_pairs = []
    for f, a in base.items():
        for g, b in base.items():
            if f == g or a < 1 or b % a or (f, g) in found.relations:
                continue
            broken = sum(1 for values, *_ in verification.mismatches if values.get(g, b) % max(1, values.get(f, a)))
            if broken:
                found_pairs.append((-broken, f, g))
    return [(f, g) for _, f, g in sorted(found_pairs)[:LEARNED]]


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
    return total, parts, symbols, verify(builder, found, total, symbols, n, seed, trainable_of(total, parts), parts)


def _commonest(errors: dict) -> str:
    """The error most builds that failed raised, as the end of a reason ('' for none)."""
    if not errors:
        return ""
    text, _ = collections.Counter(errors.values()).most_common(1)[0]
    return f" (most that fail: {text[:140]})"


def _failure(v: Verification) -> str:
    if v.outside:
        return f"the default config breaks the formula's own conditions ({'; '.join(v.outside)})"
    if v.configurations == 0:
        return "no fresh configuration built for the verification"
    if v.exact != v.configurations:
        return f"verification failed: {v.exact} of {v.configurations} fresh configurations exact (the first " \
               f"miscounts {v.differs})"
    return f"the default config's count {v.default_real} is not the formula's {v.default_formula}"
