"""The inferred costs against a tiny real model: PyTorch's own counter and cache on the CPU, nothing shared.

The formulas were fitted and verified on meta-device traces with batched
experts; here one configuration with small, odd sizes where the model
allows (found on the meta device, field by field) is built for real with
random weights, eager attention and the eager experts loop (the house's
convention), run under ``torch.utils.flop_counter.FlopCounterMode`` forward
and forward plus backward (without a cache, as the cross-checks of the hand
families count), and once with ``use_cache=True`` for the bytes its cache
holds, at an odd length past its sliding window when it has one.  Each
figure is compared with the formulas at those values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy as sp

from ...core.compute import BATCH, SEQ
from .cost_result import Costs
from .cost_orders import relation_kind
from .costs import BASE_BATCH, BASE_SEQ, Domain, _closure, _size
from .products import all_products, in_product
from .regular import regular_widths
from .probing import config_for_class, libraries, quiet
from .tracing import (ATTENTION, Untraceable, _can_set_experts, cache_tensors, cached_forward, every_layer, inputs,
                      scalar, shapes_only, takes, with_language)

#: small values tried for a size field, odd ones first (a width that must be even, a rotary half, takes the next);
#: the last ones for a width divided by many heads chosen first (18 heads of an even rotary width of 4 or more)
SMALL = (3, 5, 7, 9, 11, 13, 15, 21, 27, 6, 10, 12, 14, 18, 4, 8, 16, 20, 24, 32, 48, 64, 96, 128, 144, 192, 256)
#: the most parameters a real model is built with: in float32 its weights and gradients stay under 3.2 GB, and a
#: pass of a few tokens takes seconds; a width the costs hold keeps some models large (Zamba2's 2,560: 322M)
LARGEST = 400_000_000
#: the real model's batch, and its length (odd; past the longest sliding window when there is one)
BATCH_SIZE, LENGTH = 2, 9


@dataclass
class RealCheck:
    """One tiny real model: its values, length and batch, and each figure as (formula, PyTorch's)."""

    values: dict = field(default_factory=dict)
    seq: int = 0
    batch: int = 0
    figures: dict = field(default_factory=dict)  # "forward", "training", "cache" (bytes) → [formula, counted]
    reason: str | None = None  # why no real model was run

    @property
    def passed(self) -> bool:
        return self.reason is None and all(a == b for a, b in self.figures.values())

    def to_dict(self) -> dict:
        if self.reason is not None:
            return {"passed": False, "reason": self.reason}
        return {"passed": self.passed, "values": self.values, "seq": self.seq, "batch": self.batch,
                "figures": self.figures}


def _kinds(found, orders: set = frozenset()) -> dict:
    """Each relation's kind (see :func:`~.costs.relation_kind`): equal, divides or below."""
    return {(f, g): relation_kind(found, found.relations, orders, f, g) for f, g in found.relations}


def _allows(kind: str, a: int, b: int) -> bool:
    return {"equals": a == b, "divides": a > 0 and b % a == 0, "below": a < b}[kind]


def _candidates(name: str, chosen: dict, kinds: dict) -> list[int]:
    """The small values of ``name`` the relations with the fields already chosen allow; then, for a field that
    the chosen values must divide, their multiples by each small value (heads of 3 and 5 leave only 15 among the
    small values, a head width of 1 or 3: 60 gives widths of 20 and 12)."""
    def allowed(v: int) -> bool:
        return all(_allows(kind, v if f == name else chosen[f], v if g == name else chosen[g])
                   for (f, g), kind in kinds.items() if name in (f, g) and ({f, g} - {name}) <= set(chosen) and f != g)

    small = [v for v in SMALL if allowed(v)]
    divisors = [chosen[f] for (f, g), kind in kinds.items() if g == name and f in chosen and kind == "divides"]
    step = math.lcm(*divisors) if divisors else 0
    multiples = sorted({step * k for k in SMALL} - set(small)) if step else []
    return small + [v for v in multiples if allowed(v)]


def _partners(trial: dict, name: str, v: int, chosen: dict, kinds: dict) -> dict:
    """``trial`` with the fields not yet chosen that a relation ties to ``name`` kept valid: a multiple of ``v``
    (divides), above it (below), equal."""
    out = dict(trial)
    for (f, g), kind in kinds.items():
        if f == name and g not in chosen:
            out[g] = v if kind == "equals" else v * max(1, trial[g]) if kind == "divides" else max(trial[g], v + 1)
    return out


def tiny_values(domain: Domain, base, least: int = 0, more_layers: int = 0) -> dict:
    """Small values (``least`` at least) for every size field, found on the meta device one field at a time
    (divisors before their multiples), each the first that traces with the base structure and leaves no factor
    or dimension of the base degenerate (below 4, or below its base value: a head width of 1 changes the code's
    path); the layer counts stay at their fewest (``more_layers`` more)."""
    found = domain.found
    values = {**domain.start, **{n: v + more_layers for n, v in domain.low.items()}, **domain.held}
    chosen = {n: v for n, v in domain.held.items() if n in found.fields}  # a partner of one divides it
    kinds = {pair: kind for pair, kind in _kinds(found, domain.orders).items() if not in_product(domain, pair)}
    solved = {right[-1] for _, right in all_products(domain)}  # a product of the others: never chosen on its own
    order = sorted([n for n in [*found.free, *domain.cost_fields] if n not in domain.low and n not in solved],
                   key=lambda n: (len(_closure(found, n)), n), reverse=True)
    for name in order:
        for v in _candidates(name, chosen, kinds):
            if v >= values[name]:
                break
            if v < least:
                continue
            trial = _products(domain, _partners({**values, name: v}, name, v, chosen, kinds))
            if _fits(domain, base, trial):
                values, chosen[name] = trial, v
                break
    return _divided_together(domain, base, values, [n for n in order if n not in chosen])


def _fits(domain: Domain, base, trial: dict | None) -> bool:
    """Whether ``trial`` keeps every value the costs hold (a partner moved along may not move one) and traces with
    the base structure at the widths the forward pass runs at, no factor or dimension of the base made
    degenerate."""
    if not trial or any(trial.get(n, v) != v for n, v in domain.held.items()):
        return False
    obs = _observed(domain, trial)
    return obs is not None and obs.structure == base.structure and not _degenerate(obs, base) \
        and regular_widths(domain, trial)


def _divided_together(domain: Domain, base, values: dict, left: list[str]) -> dict:
    """``values`` with each of the fields ``left`` at a start above every small value divided, together with
    another of them, by the largest common power of two that traces: no one small value of a field traces alone
    where the config holds a product of them equal (Bamba's Mamba heads times their width is twice the hidden
    width), and only a pair divided alike keeps it."""
    left = sorted((n for n in left if _size(values[n])), key=lambda n: -values[n])
    done: set = set()
    for name in [n for n in left if values[n] > max(SMALL)]:
        for partner in [n for n in left if n != name and not {n, name} & done]:
            power = min(_twos(values[name]), _twos(values[partner]))
            trials = (_products(domain, {**values, name: values[name] >> p, partner: values[partner] >> p})
                      for p in range(power, 0, -1))
            trial = next((t for t in trials if _fits(domain, base, t)), None)
            if trial is not None:
                values, done = trial, done | {name, partner}
                break
    return values


def _twos(value: int) -> int:
    """How many times two divides ``value``."""
    return (value & -value).bit_length() - 1


def _products(domain: Domain, values: dict) -> dict | None:
    """``values`` with the last field of each product equality's right side solved (``H = A · D``, ``A = expand ·
    H / D``); None where it is not a whole number."""
    out = dict(values)
    for left, (*first, solved) in all_products(domain):
        total, other = math.prod(out[n] for n in left), math.prod(out[n] for n in first)
        if total % other:
            return None
        out[solved] = total // other
    return out


def _observed(domain: Domain, values: dict):
    """The trace of a candidate, None where it does not trace with one product per key (a width of 1 takes another
    path on some layers only, EXAONE 4's rotary ones): a size the tiny model cannot take, not a refusal."""
    try:
        return domain.observe(values, BASE_SEQ, BASE_BATCH)
    except Untraceable:
        return None


def _degenerate(obs, base) -> bool:
    return any(obs.targets[t] < min(v, 4) for t, v in base.targets.items() if t[0] in ("factor", "dim") and t in
               obs.targets)


#: (the least size, the layers added) of each try at a tiny model that runs: a table of positions shorter than
#: the length or an index past a small vocabulary runs at 16; MPNet takes 32 relative-position buckets whatever
#: its config says; RWKV's initialisation divides by the layers less one
TRIES = ((0, 0), (16, 0), (32, 0), (0, 1))


def check_real(domain: Domain, costs: Costs, symbols: dict, base) -> RealCheck:
    """The tiny model's forward and training FLOPs and cache bytes, counted by PyTorch, beside the formulas; a
    model that does not run is tried again at the next of :data:`TRIES` (one whose structure is the base's)."""
    check = None
    for least, more_layers in TRIES:
        values = tiny_values(domain, base, least, more_layers)
        if more_layers:
            obs = _observed(domain, values)
            if obs is None or obs.structure != base.structure:
                break
        check = _checked(domain, costs, symbols, values)
        if check.reason is None or "does not run" not in check.reason:
            break
    return check


def _checked(domain: Domain, costs: Costs, symbols: dict, values: dict) -> RealCheck:
    torch, _ = libraries()
    from torch.utils.flop_counter import FlopCounterMode

    probe = domain.observe(values, BASE_SEQ, BASE_BATCH, beyond=True)
    if probe is None:
        return RealCheck(reason="no small configuration traces")
    built = domain.builder.observe({**values, **domain.held})
    if built is None or built.total > LARGEST:  # the sizes did not come down: no real model of that size is run
        return RealCheck(values=_shown(domain, values),
                         reason=f"no small configuration was found ({'?' if built is None else built.total} "
                                f"parameters)")
    seq = max([LENGTH, *(w + 2 for w in probe.windows)])
    if seq % 2 == 0:
        seq += 1
    try:
        model = _real_model(domain, values)
        given = inputs(model, seq, BATCH_SIZE, device="cpu")
        cached = {"use_cache": False} if takes(model, "use_cache") else {}
        with quiet(), FlopCounterMode(display=False) as counter:
            model(**given, **cached)
        forward = counter.get_total_flops()
        with quiet(), FlopCounterMode(display=False) as counter:
            loss = scalar(model(**given, **cached))
            if loss is not None:
                loss.backward()
        training = counter.get_total_flops()
        held = None
        if cached and costs.cache is not None:
            with quiet(), shapes_only(), torch.no_grad():
                held = cache_tensors(getattr(cached_forward(model, given), "past_key_values", None))
    except Exception as exc:  # whatever the modeling code raises on the CPU: recorded, the costs stay unchecked
        text = f"{type(exc).__name__}: {exc}".splitlines()
        return RealCheck(values=_shown(domain, values), reason="the tiny real model does not run: " + text[0][:160])
    subs = _substitution(domain, values, seq, symbols)
    figures = {"forward": [int(costs.forward.xreplace(subs)), forward],
               "training": [int((costs.forward + costs.backward).xreplace(subs)), training]}
    if costs.cache is not None:
        element = torch.get_default_dtype().itemsize
        for part in ("self", "cross"):
            formula = sum((t.held() for t in costs.cache if t.part == part), sp.Integer(0))
            counted = sum(_elements(t.shape) for t in held or () if t.part == part) * element
            figures[f"cache {part}"] = [int(formula.xreplace(subs)) * element, counted]
    return RealCheck(_shown(domain, values), seq, BATCH_SIZE, figures)


def _real_model(domain: Domain, values: dict):
    """The model of ``values`` on the CPU with random weights, eager attention and eager experts."""
    torch, _ = libraries()
    config = every_layer(with_language(config_for_class(domain.builder.model_class,
                                                        domain.builder.config({**values, **domain.held}))))
    torch.manual_seed(0)
    kwargs = {"experts_implementation": "eager"} if _can_set_experts(domain.builder.model_class) else {}
    with quiet():
        model = domain.builder.model_class._from_config(config, attn_implementation=ATTENTION, **kwargs)
    return model.train()


def _substitution(domain: Domain, values: dict, seq: int, symbols: dict) -> dict:
    from .engine import variables

    point = variables(domain.found, {**{n: domain.found.flags[n].base for n in domain.found.flag_variables},
                                     **values})
    point.update({n: values.get(n, b) for n, b in domain.cost_fields.items()})
    subs = {symbols[n]: sp.Integer(v) for n, v in point.items()}
    subs[SEQ], subs[BATCH] = sp.Integer(seq), sp.Integer(BATCH_SIZE)
    return subs


def _shown(domain: Domain, values: dict) -> dict:
    """The values of the fields the formulas are written in."""
    return {n: values[n] for n in [*domain.found.free, *domain.cost_fields] if n in values}


def _elements(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
