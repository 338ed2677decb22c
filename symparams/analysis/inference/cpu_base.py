"""The base trace of a class whose forward pass reads its data, on the CPU: its sizes shrunk to a few units so
that a real model runs quickly, and its costs seen to follow no data (see :mod:`.real_tensors`)."""

from __future__ import annotations

import copy

from .costs import BASE_BATCH, BASE_SEQ, _closure, layer_fields
from .real_check import SMALL, _candidates, _kinds, _partners
from .real_tensors import LEAST_POSITIONS, SHRINKS, data_independent
from .sampling import layer_floor
from .tracing import Untraceable

#: why a class whose experts' products differ between experts even taken together (the products of views of one
#: weight, see :func:`~.real_tensors.routed_together`) is refused: experts that are modules of their own, or any
#: other loop whose products follow the data, each run on the tokens the router sends it
ROUTED = ("on real tensors, each expert runs on the tokens routed to it, so its products follow the data (the "
          "experts are not views of one weight that the trace can take together): ")
#: the widest factor of a product taken as degenerate (a head of 1 or 2 channels)
NARROW = 2


def on_real_tensors(domain):
    """The base trace of ``domain`` on the CPU, its sizes shrunk (see :func:`shrink`) and its costs seen to
    follow no data (see :func:`data_independent`); the domain traces on the CPU from then on."""
    domain.device, original = "cpu", copy.deepcopy(domain.found)
    for least, step, positions in SHRINKS:
        found = copy.deepcopy(original)
        changed = shrink(domain.builder, found, least, step, positions)
        domain.found.fields, domain.found.base = found.fields, found.base
        lift_until_it_runs(domain, found, changed, original, step)
        try:
            why = data_independent(domain, found.base, BASE_SEQ, BASE_BATCH)
        except Untraceable as exc:
            if "differ between its copies" not in str(exc):
                raise Untraceable(f"on real tensors: {exc}") from None
            if domain.experts_loop:
                raise Untraceable(ROUTED + str(exc)) from None
            # an experts loop: each expert's products run on the tokens routed to it
            domain.experts_loop = True
            try:
                why = data_independent(domain, found.base, BASE_SEQ, BASE_BATCH)
            except Untraceable as again:
                raise Untraceable(ROUTED + str(again)) from None
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
    floor = layer_floor(found)
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


def lift_until_it_runs(domain, found, changed: dict, original, step: int = 1) -> None:
    """Where the shrunk configuration builds but its forward pass does not run, or runs with a product narrower
    than 3 (see :func:`_narrow`), one of the fields :func:`shrink` ``changed`` raised to the first larger small
    value (below its value in ``original``, a multiple of ``step``) with which it runs: a build checks no
    relation the parameters do not show (DBRX's fused projection builds whatever width its heads divide), and a
    head width of 1 runs another path (a rotary half of it broadcast) than the default's.  Written into
    ``found`` as its base."""
    base = domain.builder.observe(original.base)
    if _runs_wide(domain, found.base, base):
        return
    start = {**{n: f.base for n, f in original.fields.items()}, **original.base}
    # the fields shrunk last (the widths heads divide) first, each to at most 4 times its small value
    for name in sorted(changed, key=lambda n: (len(_closure(original, n)), n)):
        for v in sorted(SMALL):
            if v <= changed[name] or v % step or v >= start[name] or v > 4 * changed[name]:
                continue
            trial = {**found.base, name: v}
            obs = domain.builder.observe(trial)
            if obs is not None and obs.regime == base.regime and not _thin(obs, base) \
                    and _runs_wide(domain, trial, base):
                found.fields[name].base = found.base[name] = v
                return


def _runs_wide(domain, values: dict, base) -> bool:
    """Whether ``values`` run a forward pass on the CPU with no product narrower than 3 (see :func:`_narrow`)."""
    try:
        trace = domain.observe(values, BASE_SEQ, BASE_BATCH, regime=False)
    except Untraceable as exc:  # an experts loop's products differ between its copies: taken together
        if "differ between its copies" not in str(exc) or domain.experts_loop:
            return False
        domain.experts_loop = True
        return _runs_wide(domain, values, base)
    return trace is not None and not _narrow(trace, base)


def _narrow(trace, base) -> bool:
    """Whether a product of ``trace`` has a factor of 1 or 2 (its rows, the first, left out: the tokens an expert
    gets) that no parameter of the default build has as a dimension (the shrink's widths are 3 at least: a
    factor of 1 or 2 is a ratio of two of them, a head width)."""
    small = {d for shapes in base.shapes.values() for shape in shapes for d in shape if d <= NARROW}
    return any(value <= NARROW and value not in small for target, value in trace.targets.items()
               if target[0] == "factor" and target[-1] > 0)


def _thin(obs, base) -> bool:
    """Whether a parameter of ``obs`` has a dimension below 4 (or below the base's, when that is smaller)."""
    for name, shapes in base.shapes.items():
        for small, large in zip(obs.shapes[name][0], shapes[0]):
            if small < min(large, 4):
                return True
    return False
