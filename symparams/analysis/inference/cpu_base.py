"""The base trace of a class whose forward pass reads its data, on the CPU: its sizes shrunk to a few units so
that a real model runs quickly, and its costs seen to follow no data (see :mod:`.real_tensors`)."""

from __future__ import annotations

import copy

from .costs import BASE_BATCH, BASE_SEQ, _closure, layer_fields
from .real_check import _candidates, _kinds, _partners
from .real_tensors import LEAST_POSITIONS, SHRINKS, data_independent
from .tracing import Untraceable


def on_real_tensors(domain):
    """The base trace of ``domain`` on the CPU, its sizes shrunk (see :func:`shrink`) and its costs seen to
    follow no data (see :func:`data_independent`); the domain traces on the CPU from then on."""
    domain.device, original = "cpu", copy.deepcopy(domain.found)
    for least, step, positions in SHRINKS:
        found = copy.deepcopy(original)
        shrink(domain.builder, found, least, step, positions)
        domain.found.fields, domain.found.base = found.fields, found.base
        try:
            why = data_independent(domain, found.base, BASE_SEQ, BASE_BATCH)
        except Untraceable as exc:
            if "differ between its copies" not in str(exc) or domain.experts_loop:
                raise Untraceable(f"on real tensors: {exc}") from None
            # an experts loop: each expert's products run on the tokens routed to it
            domain.experts_loop = True
            try:
                why = data_independent(domain, found.base, BASE_SEQ, BASE_BATCH)
            except Untraceable as again:
                raise Untraceable(f"on real tensors, each expert's products taken together: {again}") from None
        if why is None:
            return domain.observe(found.base, BASE_SEQ, BASE_BATCH, backward=True)
        if "depend on the data" in why:
            raise Untraceable(why)
    raise Untraceable(why)


def shrink(builder, found, least: int = 0, step: int = 1, positions: bool = True) -> dict:
    """Small values (``least`` at least, multiples of ``step``; the tables of positions left as they are unless
    ``positions``) of ``found``'s free fields that build the base's
    parameter structure with no dimension of the base's below 4 (or its base value), found one field at a time
    as the real-model check finds its own (divisors before their multiples, the relations kept); written into
    ``found`` as its base values.  The fields changed → their small values."""
    base = builder.observe(found.base)
    start = {**{n: f.base for n, f in found.fields.items()}, **found.base}
    values, chosen, kinds = dict(start), {}, _kinds(found)
    floor = {**found.minimum, **found.lowest, **found.least}
    layers = layer_fields(found)  # lowered already, and lowered further by the cost discovery
    order = sorted(found.free, key=lambda n: (len(_closure(found, n)), n), reverse=True)
    kept = layers | set(found.lifted) | (set() if positions else {n for n in order if "position" in n})
    for name in [n for n in order if n not in kept and isinstance(values[n], int)]:
        lowest = max(least, floor.get(name, 0), LEAST_POSITIONS if "position" in name else 0)
        for v in _candidates(name, chosen, kinds):
            if v >= values[name]:
                break
            if v < lowest or v % step:
                continue
            trial = _partners({**values, name: v}, name, v, chosen, kinds)
            obs = builder.observe(trial)
            if obs is not None and obs.regime == base.regime and not obs.uneven() and not _thin(obs, base):
                values, chosen[name] = trial, v
                break
    changed = {n: v for n, v in values.items() if n in found.fields and v != start[n]}
    for name, value in changed.items():  # the base configuration's overrides too: every trace starts from them
        found.fields[name].base = found.base[name] = value
    return changed


def _thin(obs, base) -> bool:
    """Whether a parameter of ``obs`` has a dimension below 4 (or below the base's, when that is smaller)."""
    for name, shapes in base.shapes.items():
        for small, large in zip(obs.shapes[name][0], shapes[0]):
            if small < min(large, 4):
                return True
    return False
