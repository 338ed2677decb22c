"""Probes beyond each field's own move: partners a field builds only with, relations a factor of 3 hides, fields the
base's few layers hide (a period of attention layers, its offset), sizes whose value 1 builds another structure,
held fields the config class refuses to change and held fields that only add parameters when moved up."""

from __future__ import annotations

import re

from .discovered import Discovery, common, effects, moves, same
from .probing import Builder, per_layer

def partner(builder: Builder, found: Discovery, name: str, start: dict) -> None:
    """A field that builds when multiplied only with another: the relation ``name ⊑ partner`` (or a pair)."""
    f = found.fields[name]
    if f.base <= 0:
        return
    others = [g for g, o in found.fields.items() if g != name and o.kind != "derived"
              and isinstance(o.base, int) and o.base > 0]
    relevant = [g for g in others if found.fields[g].free]
    partners = [(g,) for g in others] + [(g, h) for i, g in enumerate(relevant) for h in relevant[i + 1:]]
    for group in partners:
        values = {**found.base, name: f.base * 3, **{g: found.fields[g].base * 3 for g in group}}
        obs = builder.observe(values)
        if same(found, obs):
            moved = effects(found.observation, obs)
            # moved together by one multiplier, a ratio (the head width) stays put: the partners three times
            # further show what this field moves through it
            further = builder.observe({**values, **{g: found.fields[g].base * 9 for g in group}})
            if same(found, further):
                moved |= effects(found.observation, further)
            f.moved("scale", moved)
            for g in group:
                if found.fields[g].kind == "fixed":
                    found.fields[g].moved("scale", moved)
            found.relations |= {(name, g) for g in group}
            return


def ceiling(builder: Builder, found: Discovery, name: str) -> None:
    """A held field at the value of another that the config class takes one higher only with that other one higher
    too, and not past it: the order ``name ≤ other`` it enforces (a router's groups chosen per token at most the
    groups there are: DeepSeek-style ``topk_group ≤ n_group``, both 1 by default).  Only at equal bases: below its
    bound a field would have moved up alone.  Its own effects are those of the pair moved against the other moved
    alone; kept in ``found.orders``, a condition the reader enforces."""
    f = found.fields[name]
    up = f.base + 1 if _at_least(f.base, 1) else None
    if up is None or builder.read_back({**found.base, name: up}) is not None:
        return  # the config takes it higher alone: it fails to build for another reason than an order
    for other, g in found.fields.items():
        if other == name or g.kind == "derived" or g.base != f.base or isinstance(g.base, bool) \
                or builder.read_back({**found.base, name: up, other: up}) is None \
                or builder.read_back({**found.base, name: up + 1, other: up}) is not None:
            continue
        reference = builder.observe({**found.base, other: up})
        both = builder.observe({**found.base, name: up, other: up})
        if same(found, reference) and same(found, both):
            f.moved("jitter", effects(reference, both))
            found.orders.add((name, other))
            return


def doubled(builder: Builder, found: Discovery, name: str) -> None:
    """A held power of two whose every move the config class refuses, but which it takes doubled and halved (Mimi's
    codebook size, "must be a power of 2"): where both build and change no shape, the field is irrelevant, moved
    only by doubling (see :func:`~.sampling.draw`).  One that changes shapes stays held: its formula would hold
    only at powers of two, a condition this engine does not write."""
    f = found.fields[name]
    if not _at_least(f.base, 2) or f.base & (f.base - 1) \
            or any(builder.read_back({**found.base, name: v}) is not None for _, v in moves(f.base)):
        return
    builds = [builder.observe({**found.base, name: v}) for v in (f.base * 2, f.base // 2)]
    if all(same(found, obs) and not effects(found.observation, obs) for obs in builds):
        f.moved("double", set())


def missed_relations(builder: Builder, found: Discovery) -> bool:
    """Relations the ×3 probe missed because 3 happened to divide (8 heads of a width of 2304): each scaled field
    moved by ×7 alone, and when that does not build, with one partner moved too.  Whether any was found."""
    before = set(found.relations)
    for name, f in found.fields.items():
        if not (f.free and f.step == "scale" and f.base > 0) or any(a == name for a, _ in found.relations):
            continue
        if builder.observe({**found.base, name: f.base * 7}) is not None:
            continue
        for other, g in found.fields.items():
            if other != name and g.free and g.step == "scale" and g.base > 0:
                if same(found, builder.observe({**found.base, name: f.base * 7, other: g.base * 7})):
                    found.relations.add((name, other))
                    break
    return found.relations != before


#: the factor the layer counts are raised by to probe again the fields the base's few layers hide
DEEPER = 3


def deeper(builder: Builder, found: Discovery) -> None:
    """Fields that change no shape at the base only because it has too few layers, found with the layer counts
    raised by :data:`DEEPER` and made variables: a period of attention layers the base's layers end before (Jamba:
    an attention layer where ``i % attn_layer_period == attn_layer_offset``).  An offset below such a period shows
    only where the layers end near it (the layers 4, 10, 16 of 18 are as many as 3, 9, 15): it is moved by one
    at each of as many layer counts as the base has layers, and gets the relation ``offset ⊑ period``."""
    counts = {n: f.base for n, f in found.fields.items()
              if f.free and f.counts and "layer" in n.rpartition(".")[2] and isinstance(f.base, int) and f.base > 0}
    hidden = [n for n, f in found.fields.items() if f.kind == "irrelevant" and isinstance(f.base, int)
              and not isinstance(f.base, bool) and f.base > 0 and not common(n)]
    if not counts or not hidden:
        return
    counts = _raised(builder, found, counts)
    periods = []
    for depth in range(max(counts.values(), default=-1) + 1):
        deep = {**found.base, **{n: v * DEEPER - depth for n, v in counts.items()}}
        reference = builder.observe(deep)
        if not same(found, reference):
            if depth == 0:
                return
            continue
        for name in hidden if depth == 0 else _offsets(found, hidden, periods):
            f = found.fields[name]
            for kind, value in moves(f.base) if depth == 0 else [("jitter", f.base + 1), ("jitter", f.base - 1)]:
                obs = builder.observe({**deep, name: value})
                if same(found, obs) and effects(reference, obs):
                    f.moved(kind, effects(reference, obs))
                    found.hidden[name] = (deep, value)
                    if depth == 0:
                        periods.append(name)
                    else:
                        found.relations.add((name, _period_of(builder, found, name, periods)))
                    break
        if not periods:
            return


def _raised(builder: Builder, found: Discovery, counts: dict) -> dict:
    """The layer counts to raise: all of them, or, where that leaves the base's structure, the first alone that
    keeps it (a count of layers "layer" names too, the first layer with experts, raised with the others, may
    pass the last layer there is: ERNIE 4.5's experts from ``moe_layer_start_index`` on vanish)."""
    if same(found, builder.observe({**found.base, **{n: v * DEEPER for n, v in counts.items()}})):
        return counts
    for name, value in counts.items():
        if same(found, builder.observe({**found.base, name: value * DEEPER})):
            return {name: value}
    return {}


def _offsets(found: Discovery, hidden: list[str], periods: list[str]) -> list[str]:
    """The fields still hidden that may be offsets of the periods found: each below one of them."""
    top = max(found.fields[p].base for p in periods)
    return [n for n in hidden if found.fields[n].kind == "irrelevant" and found.fields[n].base < top]


def _period_of(builder: Builder, found: Discovery, offset: str, periods: list[str]) -> str:
    """The period an offset must stay below: the first whose value the offset cannot take."""
    for period in periods:
        if found.fields[offset].base < found.fields[period].base and \
                builder.observe({**found.base, offset: found.fields[period].base}) is None:
            return period
    return periods[0]


def least(builder: Builder, found: Discovery) -> dict:
    """The free sizes (not layer counts: a pattern of layers has its own rule) at 2 or more whose value 1 builds
    with other parameters (Jamba: a layer of one expert is a plain MLP, without the router the formula counts),
    each → 2, where 2 builds as the base does.  A size whose default is 1 is left alone: the default config must
    be counted, and a field lifted from it (Qwen2-MoE's sparse step: experts on every layer at 1) holds there."""
    out = {}
    for name, f in found.fields.items():
        if not f.free or isinstance(f.base, bool) or not isinstance(f.base, int) or f.base < 2 \
                or "layer" in name.rpartition(".")[2] or not _at_least(found.defaults.get(name, f.base), 2):
            continue
        one = builder.observe({**found.base, name: 1})
        if one is not None and not same(found, one) and same(found, builder.observe({**found.base, name: 2})):
            out[name] = 2
    return out


def _at_least(value, lowest: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= lowest


def refused(builder: Builder, found: Discovery, name: str) -> bool:
    """Whether transformers refuses every other value of ``name`` tried (×3, ×2, ½, ±1, +2; from 0, 1 and 2)
    for the field's own sake: no config transformers accepts has another, so holding it leaves none out.  Only the
    config class and the model class's own ``__init__`` are asked (:meth:`~.probing.Builder.refusal`: a head class
    may refuse what its config class takes, as Reformer's causal LM refuses attention to later chunks), so a value
    a module the class builds fails on is no refusal.  A size at 0 counts (Gemma 4's assistant validates its
    per-layer input widths to be 0); a negative value is never tried, as a class may refuse it merely for being
    negative.  A refusal that names another field (a per-layer list of as many entries, another field of the same
    name it must equal) is a relation, not this: the field is held as any other."""
    value = found.fields[name].base
    leaf = name.rpartition(".")[2]
    others = {k.rpartition(".")[2] for k in found.defaults if k != name}
    # a label map is keyed by small numbers too, and no per-layer list
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or leaf in others or \
            value > 0 and any(per_layer(v, value) for k, v in found.defaults.items() if not common(k)):
        return False
    tried = {v for v in (value * 3, value * 2, value + 1, value + 2, value - 1, value // 2) if v > 0} - {value}
    for v in tried:
        text = builder.refusal({**found.base, name: v})
        if text is None or any(re.search(rf"\b{re.escape(other)}\b", text) for other in others - {leaf}):
            return False
    return True


def liftable(builder: Builder, found: Discovery) -> dict:
    """The held fields whose next value up builds with every parameter of the base and more: each → that value."""
    out = {}
    for name, f in found.fields.items():
        if f.kind != "fixed" or not isinstance(f.base, int) or f.base < 0:
            continue
        obs = builder.observe({**found.base, name: f.base + 1})
        if obs is not None and not obs.uneven() and obs.regime > found.observation.regime:
            out[name] = f.base + 1
    return out
