"""The layer counts of a class's cost discovery: which fields they are, the fewest layers its traces keep, and
its base raised until every kind of layer shows (a trace costs time per layer); ``domain`` is a
:class:`~.costs.Domain`."""

from __future__ import annotations

from .discovered import Discovery
from .observing import Observed
from .sampling import layer_floor

#: the most layers a layer count has in a trace
VERIFY_LAYERS = 12
#: the base trace's length and batch
BASE_SEQ, BASE_BATCH = 7, 2


def _layer_counts(found: Discovery) -> set:
    """The layer counts: fields named for layers that change how many times something runs."""
    return {n for n, f in found.fields.items() if f.free and f.counts and "layer" in n}


def _deepest(found: Discovery, values: dict) -> set:
    """The layer counts largest in ``values``: a smaller one is likely some of their layers (the dense ones first)."""
    counts = {n: values.get(n, found.fields[n].base) for n in _layer_counts(found)}
    top = max(counts.values(), default=None)
    return {n for n, v in counts.items() if v == top}


def layer_fields(found: Discovery) -> set:
    """The layer counts, and the fields a relation ties to them (dense layers below the layer count): a trace
    costs time per layer, so most traces keep these low."""
    out = _layer_counts(found)
    for a, b in found.relations:
        if a in out or b in out:
            out |= {a, b}
    return out


def _with_every_kind(domain, base: Observed) -> Observed:
    """The base with its deepest layer counts raised to the fewest that hold every kind of layer more hold (Gemma 3:
    a full-attention layer in every 6, the others sliding): the fields are moved where every kind shows."""
    found = domain.found
    counts = sorted(_deepest(found, found.base))
    deepest = range(max([found.base.get(n, 0) for n in counts] or [VERIFY_LAYERS]) + 1, VERIFY_LAYERS + 1)
    many = deepest and domain.observe({**found.base, **{n: VERIFY_LAYERS for n in counts}}, BASE_SEQ, BASE_BATCH)
    if not many or not many.structure > base.structure:
        return base
    for value in deepest:
        raised = {n: max(value, found.base.get(n, 0)) for n in counts}
        obs = domain.observe({**found.base, **raised}, BASE_SEQ, BASE_BATCH, backward=True)
        if obs is not None and obs.structure == many.structure:
            found.base.update(raised)
            domain.kinds_appear = True
            return obs
    return base


def lowest_layers(domain, base: Observed) -> dict:
    """The base's layer counts, each lowered to the fewest layers (1 or 2) that keep the traced structure."""
    found = domain.found
    floor = layer_floor(found)
    low = {n: found.base.get(n, found.fields[n].base) for n in layer_fields(found)}
    for name in sorted(low):
        for value in (1, 2):
            if value >= low[name]:
                break
            if value < floor.get(name, 1):  # the count holds from there up (a branch, a pattern's first layers)
                continue
            obs = domain.observe({**found.base, **low, name: value}, BASE_SEQ, BASE_BATCH)
            if obs is not None and obs.structure == base.structure:
                low[name] = value
                break
    return low


def least_layers(domain, samples: list) -> dict:
    """Each layer count's fewest layers in the fit's ``samples``, where that is above the count's own floor: the
    traces with fewer built another structure and were left out, so the formulas were never fitted or checked
    there (Flint's first two layers are dense: with fewer than 3 no layer has experts, and its sliding cache
    layers, ``L − 2 − ⌊(L + 1)/4⌋``, are −1 at one).  A field the parameter discovery lifted above its default
    holds no bound: the verification draws its default (Qwen2-MoE's sparse step of 1, every layer sparse)."""
    floor = layer_floor(domain.found)
    out = {}
    for name in sorted(set(domain.low) - set(domain.found.lifted)):
        seen = [v[name] for v, _ in samples if isinstance(v.get(name), int)]
        if seen and min(seen) > floor.get(name, 1):
            out[name] = min(seen)
    return out
