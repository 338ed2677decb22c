"""Random configurations: the fit's points, and the fresh ones a formula is verified on.

A draw moves every free field of a :class:`~.discovery.Discovery` at once:
scaled fields by multipliers (raised with lcm along the relations, so heads
still divide the width), jittered ones by a little, flags at random.  The
fit keeps the configurations that build with the base structure; the
verification keeps every one the formula's own conditions admit, whatever it
builds, so that a configuration the formula would count is checked as such.
"""

from __future__ import annotations

import math
import random

from .computed import drawn_float, floats_of, ingredients, whole_number, widths_at
from .discovered import Discovery
from .probing import Builder, Observation
from .products import solve_products
from .result import Conditions, Relation

#: a sampled configuration with a layer count above this is drawn again
MAX_SAMPLE_LAYERS = 40
#: a draw is retried at most this many times per wanted sample (rejected: it did not build or changed structure)
ATTEMPTS = 4

Sample = tuple[dict, Observation]


def draw(found: Discovery, rng: random.Random, wide: bool = False, every: bool = False, loose: bool = False,
         lattice: bool = False) -> dict:
    """A random configuration in the discovered domain.

    Scaled fields get multipliers 1..8 (``wide``: 1..10; layer counts 1..4 and 1..5, since builds cost time
    per layer), raised with lcm along the relations; a layer count in no relation takes any value up to its
    top; jittered ones move by up to ±2, and a scaled field in no relation is moved off its multiples one time
    in three (a width halved with a floor shows only at odd values); flags are drawn at random; a field the
    config computes from another by default is left out one time in two, so the config computes it.  ``every``
    also moves the irrelevant fields (to check that they are: up, and one time in four down, where a bound such
    as the last layer with experts matters only below the layers there are); ``loose`` draws each multiplier on
    its own, the relations unenforced (the verification: a configuration the relations admit, not only the
    fit's lattice).  ``lattice`` keeps every scaled field on its multiples and every field given (the costs'
    fit, whose products are polynomials only there).
    """
    top = 10 if wide else 8
    kinds = ("free", "irrelevant") if every else ("free",)
    moved = [n for n, f in found.fields.items() if f.kind in kinds]
    related = {n for pair in found.relations for n in pair}
    # a field whose every relation is an order (dense layers below layers, an offset below its period) may leave
    # the multiples of its base: only divisibility needs them
    ordered = related - {n for f, g in found.relations if found.fields[g].base % max(found.fields[f].base, 1) == 0
                         for n in (f, g)}
    scaled = {n for n in moved if found.fields[n].step == "scale"} | related
    # sorted: the random draws must not follow set order (string hashing), so a run is reproducible
    multiplier = {n: rng.randint(1, (top // 2) if found.fields[n].counts else top) if n in moved else 1
                  for n in sorted(scaled)}
    changed = not loose
    while changed:
        changed = False
        for f, g in sorted(found.relations):
            m = math.lcm(multiplier[f], multiplier[g])
            if m != multiplier[g]:
                multiplier[g], changed = m, True
    values = dict(found.base)
    for n in sorted(scaled):
        values[n] = found.fields[n].base * multiplier[n]
        if n not in related and found.fields[n].counts and "layer" in n:
            # any layer count up to the same top, not only multiples: a layer in every 6 shows as such
            low = found.lowest.get(n, 1)  # a floor may pass the top (a list's last layer index past it)
            values[n] = rng.randint(low, max(low, found.fields[n].base * (top // 2)))
        elif not lattice and (n not in related or n in ordered or loose) and n in moved and rng.random() < 1 / 3:
            values[n] = max(1, values[n] + rng.choice((-2, -1, 1, 2)))
    for n in moved:
        base = found.fields[n].base
        if found.fields[n].step == "double":  # a power of two the config takes at no other value
            values[n] = base * 2 ** rng.randint(0, 2) // rng.choice((1, 2))
        elif n not in scaled:
            values[n] = max(1 if base >= 1 else 0, base + rng.randint(-2, 2))
    for n in sorted(n for n in moved if found.fields[n].kind == "irrelevant"):
        base = found.fields[n].base
        if isinstance(base, int) and base > 1 and found.fields[n].step != "double" and rng.random() < 0.25:
            values[n] = rng.randint(1, base)  # down too: a bound of layers (the last expert layer) may be irrelevant
    _meet_pattern_starts(found, values, rng)
    solve_products(found.products, values, rng)
    for n in found.flag_variables:
        values[n] = rng.random() < 0.5
    for n in sorted(_following(found)) if not lattice else ():
        if rng.random() < 0.5:
            values.pop(n, None)
    for n, default in floats_of(found.computed, found.defaults).items():
        values[n] = drawn_float(default, rng)
    return values


def _meet_pattern_starts(found: Discovery, values: dict, rng: random.Random) -> None:
    """One time in four, the layer counts ended where a pattern the base's few layers hid starts again (Jamba:
    ``L = offset + k * period``): only there do ``floor((L - offset)/period)`` and ``floor((L - offset - 1)/period)``
    part, and a fit never shown such a point cannot tell which counts the pattern (see
    :func:`~.fitting.fit`)."""
    for offset, period in sorted(found.relations):
        if offset not in found.hidden or period not in found.hidden or rng.random() >= 0.25:
            continue
        laps = rng.randint(1, 2)
        related = {n for pair in found.relations for n in pair}
        for n, f in sorted(found.fields.items()):  # the layer counts drawn freely (in no relation)
            if f.free and f.counts and "layer" in n.rpartition(".")[2] and n not in related:
                values[n] = values[offset] + laps * values[period]


def _following(found: Discovery) -> set[str]:
    """The free fields the config computes from another when left out (a head width, a key/value head count)."""
    return {g for f in found.fields.values() for g in f.followers if found.fields[g].free}


def below_minimum(found: Discovery, values: dict) -> bool:
    """Whether a drawn configuration leaves a branch (a field below the branch's lowest value), or has fewer
    layers (or experts) than the formula holds for."""
    return any(values.get(n, v) < v for n, v in layer_floor(found).items())


def layer_floor(found: Discovery) -> dict:
    """The lowest value of each field the formula holds from (see :func:`below_minimum`): the costs' traces never
    lower or draw a layer count past it, where every trace would be refused."""
    return {**found.minimum, **found.lowest, **found.least}


def divisor(base: int, whole: int, rng: random.Random, top: int) -> int:
    """A multiple of ``base`` up to ``top`` times it that divides ``whole`` (a head count of the width drawn),
    at random; ``base`` when none does."""
    options = [base * d for d in range(1, top + 1) if whole % (base * d) == 0]
    return rng.choice(options) if options else base


def too_deep(found: Discovery, values: dict) -> bool:
    """Whether a drawn configuration has a layer count over :data:`MAX_SAMPLE_LAYERS` (slow to build).  A count
    that starts higher (a head count that also counts per-head norms) may go to 4 times its start."""
    return any(f.counts and values.get(n, 0) > max(MAX_SAMPLE_LAYERS, 4 * f.base) for n, f in found.fields.items())


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
    ``every`` puts it there half of the time."""
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
                (not every and any(values.get(n) == v for n, v in found.lifted.items())):
            continue
        obs = builder.observe(values)
        if _fits_the_base(found, regimes, values, obs):
            out.append((values, obs))
    return out


def _fits_the_base(found: Discovery, regimes: _Regimes, values: dict, obs) -> bool:
    """Whether a build at ``values`` is a point for the fit: it builds, evenly, in the regime its values are in,
    and on every side of an order the formula keeps to (:func:`on_sides`)."""
    return obs is not None and not obs.uneven() and obs.regime == regimes.of(values) \
        and on_sides(found, {**values, **variables(found, values, obs)})


#: the steps a field a whole-number width is computed from takes off a fit's point, and from how many points
PARTING_STEPS = (-2, -1, 1, 2)
PARTED_POINTS = 12


def parted(builder: Builder, found: Discovery, fitted: list[Sample]) -> list[Sample]:
    """The fit's points again, each field a width computed with whole numbers reads (see :mod:`.computed`) moved
    off them by one or two, irrelevant ones too, each kept where it builds with the base structure.  The draws keep
    those fields on multiples where the width may equal a polynomial in them (ConvBERT's kept heads' width is H/2
    wherever H over the heads is even): a fit shown only those could take either for the other."""
    names = sorted(ingredients({k: r for k, r in found.computed.items() if whole_number(r)}) & found.fields.keys())
    names = [n for n in names if found.fields[n].kind in ("free", "irrelevant")]
    regimes = _Regimes(builder, found)
    out: list[Sample] = []
    for values, _ in fitted[:PARTED_POINTS]:
        for together, step in ((t, s) for n in names for t in _together(found, n, values) for s in PARTING_STEPS):
            moved = {**values, **{n: values.get(n, found.fields[n].base) + step for n in together}}
            if min(moved[n] for n in together) < 1 or below_minimum(found, moved):
                continue
            obs = builder.observe(moved)
            if _fits_the_base(found, regimes, moved, obs):
                out.append((moved, obs))
    return out


def _together(found: Discovery, name: str, values: dict) -> list[tuple[str, ...]]:
    """``name`` alone, and with the fields related to it that are equal to it at ``values`` (ConvBERT's embedding
    width, built without a projection only equal to H): a width tied to another moves only with it."""
    at = {n: values.get(n, f.base) for n, f in found.fields.items()}
    tied = sorted(g for f, g in found.relations | {(g, f) for f, g in found.relations}
                  if f == name and g != name and at[g] == at[name])
    return [(name,), (name, *tied)] if tied else [(name,)]


def on_sides(found: Discovery, point: dict) -> bool:
    """Whether a configuration (its values, the fit's point over them) is on every side of an order the formula
    keeps to (see :attr:`~.discovered.Discovery.sides`): no change of structure keeps the samples there.  A
    branch's bound may be no variable (past the layers it changes nothing), held where the branch starts."""
    return all(Relation(*side).holds(point) for side in found.sides if side[0] in point and side[2] in point)


def admitted(builder: Builder, found: Discovery, where: Conditions, rng: random.Random, n: int) -> list[Sample]:
    """``n`` fresh configurations the formula's conditions admit, each built, whatever structure it builds:
    half drawn as the fit's are (wider), half loose (each multiplier on its own, off the multiples too), every
    field moved that the formula claims changes nothing or follows others."""
    out: list[Sample] = []
    for attempt in range(2 * ATTEMPTS * n):
        if len(out) == n:
            break
        values = draw(found, rng, wide=True, every=True, loose=attempt % 2 == 1)
        for name, default in found.lifted.items():
            if rng.random() < 0.5:
                values[name] = default
        if too_deep(found, values):
            continue
        held = builder.read_back(values, others=[*found.fields, *found.flags])
        if held is None or where.violated({k: v for k, v in held.items() if v is not None}):
            continue  # the config class refuses it, or the formula's conditions do: no count to compare
        obs = builder.observe(values)
        if obs is not None:
            out.append((values, obs))
    return out


def variables(found: Discovery, values: dict, obs: Observation | None = None) -> dict[str, int]:
    """A configuration as the fit's point: free fields and flags (as 0/1), as the built config holds them (a
    field left out has the value the config computed)."""
    held = obs.values if obs is not None else {}

    def value(n, default):
        got = held.get(n)
        return got if isinstance(got, int) else values.get(n, default)

    point = {n: value(n, found.fields[n].base) for n in found.free}
    point.update({n: int(value(n, found.flags[n].base)) for n in found.flag_variables})
    if found.computed:  # a width computed with a float: from the config as transformers holds it
        point.update(widths_at(found.computed, held or {**found.defaults, **found.base, **values}))
    return point
