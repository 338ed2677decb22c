"""Which config fields are sizes, how they relate, and where a formula of their own starts.

Builds cost time per layer, so the probes start from a base configuration
with few layers (and experts), but never fewer than keep every parameter
name of the default config: a full-attention layer in every 6 needs 6 layers.

Perturbation, with no knowledge of the architecture: each integer field is
multiplied by 3 (else moved by ±1); a field that builds only when another is
multiplied with it gets the relation ``f ⊑ g`` ("f's multiplier divides
g's"), which covers divisibility (heads | hidden), ordering (dense layers <
layers) and equal pairs.  A field whose move leaves every shape unchanged is
irrelevant; one that never builds when moved is held fixed.  Each boolean
field is toggled: a flag that changes shapes becomes a 0/1 variable.

A held field whose move up only adds parameters (a token-type vocabulary of
0, no dense layers before the experts, an expert on every layer) is *lifted*:
discovery starts again with it at the larger value, so it becomes a variable,
and the verification checks the formula at its default value too (the added
parameters must vanish there, or the lift is dropped).  A held field the
config class refuses to change at all is marked *sole*: holding it leaves no
config out.  A *branch* (:class:`Branch`) starts discovery elsewhere, and the
engine fits it as a formula of its own: a held field one above its default
(kept there or higher), a field the default leaves unset (None) set, or two
widths meeting (or parting) where that changes the structure.

Per-layer lists: a layer count the config refuses to move alone, because a
list it does not compute must have as many entries (GPT-Neo), moves with the
list retiled; a list of layer kinds that shape the parameters makes each
kind's number of layers a field of its own (``layer_types#full_attention``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...families.inferred import expanded
from .layers import kinds_matter, per_layer_lists
from .probing import Builder, Observation, common_fields, computed_when_unset, per_layer, relisted, retiled

#: the largest layer count of a base configuration, tried in turn: builds cost time per layer, not per width, so
#: the base is the smallest of these that keeps every kind of layer the default config has (a full-attention layer
#: in every 6 appears only from 6 layers on)
BASE_LAYERS = (4, 6, 8, 12, 16)
#: expert counts above this are lowered in the base configuration, as layer counts are
BASE_EXPERTS = 16
#: relevant flags beyond this many stay at their defaults
MAX_FLAGS = 4


@dataclass
class Field:
    """A config field and what moving it does.

    ``kind`` is free (a variable of the formula), irrelevant (moves, changes no shape), fixed (cannot move) or
    derived (the config computes it); ``step`` is how it moves: scale (×3, so by multipliers) or jitter (±1).
    """

    name: str
    base: Any
    kind: str = "fixed"
    step: str = ""
    effects: set = field(default_factory=set)
    followers: set = field(default_factory=set)  # fields the config moves along with this one (their default)
    sole: bool = False  # held, and the config class itself refuses every other value tried (ZAYA's top-1 routing)

    @property
    def free(self) -> bool:
        return self.kind == "free"

    @property
    def counts(self) -> bool:
        """Whether moving it changes how many instances some parameter has (a layer count)."""
        return any(e[0] == "count" for e in self.effects)

    def moved(self, step: str, effects: set) -> None:
        self.step, self.effects = step, self.effects | effects
        self.kind = "free" if self.effects else "irrelevant"


@dataclass(frozen=True)
class Branch:
    """Where a formula of its own holds, and where its discovery starts (each a tuple of pairs, so a branch is a
    value): ``minimum``, fields at these values or above (a field held at 0 or 1 whose larger values build);
    ``given``, fields the default config leaves unset (None), set here from these values (GPT-2's ``n_inner``);
    ``split``, ``(left, kind, right)``: the side (equals or differs) of a change of structure two fields meeting
    makes (a projection between two widths exists only where they differ), started from ``start``'s values."""

    minimum: tuple = ()
    given: tuple = ()
    split: tuple = ()
    start: tuple = ()

    @property
    def overrides(self) -> dict:
        """The values discovery starts from."""
        return {**dict(self.minimum), **dict(self.given), **dict(self.start)}


@dataclass
class Discovery:
    """The outcome of the perturbation phase."""

    base: dict
    observation: Observation
    fields: dict[str, Field]
    flags: dict[str, Field]
    relations: set = field(default_factory=set)
    defaults: dict = field(default_factory=dict)
    lifted: dict = field(default_factory=dict)  # field → its default, for the fields discovery started above it
    branch: Branch = Branch()  # where this formula holds, when it is a branch of another
    optional: dict = field(default_factory=dict)  # unset fields (a tuple) → a value that builds and changes shapes
    quiet: set = field(default_factory=set)  # unset fields whose setting changes no shape
    empty: set = field(default_factory=set)  # lists empty by default whose entries change shapes (or do not build)
    splits: list = field(default_factory=list)  # (left, kind, right, start) of the other side of a meeting
    lowest: dict = field(default_factory=dict)  # layer counts drawn no lower than their base (a pattern of layers
    # whose first few differ: the last layer a full-attention one while there are fewer than a period)
    hidden: dict = field(default_factory=dict)  # fields the base's few layers hide → (the deeper values, the move)
    least: dict = field(default_factory=dict)  # sizes whose value 1 builds another structure (a single expert is
    # a plain MLP, no router): no lower than 2, a condition
    companions: dict = field(default_factory=dict)  # the builder's per-layer lists (see Builder): another builder
    kinds: dict = field(default_factory=dict)  # of the class (the costs') configures layer counts as this one did

    @property
    def minimum(self) -> dict:
        """A branch's fields and their lowest values."""
        return dict(self.branch.minimum)

    @property
    def free(self) -> list[str]:
        return [n for n, f in self.fields.items() if f.free]

    @property
    def flag_variables(self) -> list[str]:
        return [n for n, f in self.flags.items() if f.free]


def effects(a: Observation, b: Observation) -> set:
    """The targets that differ between two builds: ``("count", name)`` and ``("dim", name, i)``."""
    out = set()
    for name in a.shapes.keys() | b.shapes.keys():
        sa, sb = a.shapes.get(name), b.shapes.get(name)
        if sa is None or sb is None or len(sa) != len(sb):
            out.add(("count", name))
        if sa is not None and sb is not None and len(sa[0]) == len(sb[0]):
            out |= {("dim", name, i) for i in range(len(sa[0])) if sa[0][i] != sb[0][i]}
    return out


def candidates(defaults: dict) -> tuple[dict, dict]:
    """(integer fields, boolean fields) of a default config: the size fields to probe and the flags to toggle."""
    ints = {k: v for k, v in defaults.items() if isinstance(v, int) and not isinstance(v, bool)
            and "token_id" not in k and not k.startswith("_")}
    flags = {k: v for k, v in defaults.items() if isinstance(v, bool) and not k.startswith("_")}
    return ints, flags


def lowered(ints: dict, top: int, together: bool = False) -> dict:
    """Layer counts lowered to at most ``top``: each one alone, or (``together``) all by the factor that brings the
    largest to ``top``, so counts that add up (input, recurrent and output layers) or divide (a sparse layer in
    every 4) still do.

    >>> lowered({"num_layers": 12, "num_sparse_layers": 3, "hidden": 64}, 4)
    {'num_layers': 4}
    >>> lowered({"num_layers": 12, "num_sparse_layers": 3, "hidden": 64}, 4, together=True)
    {'num_layers': 4, 'num_sparse_layers': 1}
    """
    layers = {k: v for k, v in ints.items() if "layer" in k and v > 0}
    largest = max(layers.values(), default=0)
    if largest <= top:
        return {}
    if together:
        return {k: max(1, v * top // largest) for k, v in layers.items()}
    return {k: top for k, v in layers.items() if v > top}


def fewer_experts(ints: dict) -> dict:
    """Expert counts lowered to at most :data:`BASE_EXPERTS` (a build makes every expert that is a module of its
    own: NLLB-MoE's 128 per layer).

    >>> fewer_experts({"num_experts": 128, "num_experts_per_tok": 2, "n_shared_experts": 2})
    {'num_experts': 16}
    """
    return {k: BASE_EXPERTS for k, v in ints.items() if k.endswith("experts") and v > BASE_EXPERTS}


def base_values(builder: Builder, ints: dict, lifted: dict) -> tuple[dict, Observation | None]:
    """The base configuration's overrides and its build: the first lowering of the layer counts (and expert
    counts) whose model has every parameter name the default config's has; when none has, the layer counts at
    most 4, else the default."""
    default = builder.observe(lifted)
    first = {**lowered(ints, BASE_LAYERS[0]), **lifted}
    if default is not None:
        seen = []
        for experts in (fewer_experts(ints), {}):
            for top in BASE_LAYERS:
                for together in (False, True):
                    overrides = {**lowered(ints, top, together), **experts, **lifted}
                    if overrides in seen:
                        continue
                    seen.append(overrides)
                    obs = builder.observe(overrides)
                    if obs is not None and obs.shapes.keys() == default.shapes.keys():
                        return overrides, obs
    obs = builder.observe(first)
    return (first, obs) if obs is not None else (dict(lifted), default)


def discover(builder: Builder, lift: bool = True, lifted: dict | None = None, branch: Branch = Branch(),
             left_out: frozenset = frozenset()) -> Discovery:
    """Probe every integer field and boolean flag of ``builder``'s default config (about 1-3 builds each);
    with ``lift``, start again above the held fields that only add parameters when moved up.  ``branch`` starts
    a formula of its own (see :class:`Branch`); ``left_out`` fields are never set, so the config computes them
    (see :func:`_left_out`)."""
    defaults = builder.defaults()
    ints, bools = candidates(defaults)
    ints = {k: v for k, v in ints.items() if k not in left_out}
    ints.update(dict(branch.given))
    _companions(builder, ints, defaults)
    lifted = lifted or {}
    base, observation = base_values(builder, ints, {**lifted, **branch.overrides})
    if observation is None and lifted:  # the lifted values do not build together: hold the fields instead
        return discover(builder, lift=False, branch=branch, left_out=left_out)
    if observation is None:
        what = "the default config" if not branch.overrides else "the default config with " + \
            ", ".join(f"{k} = {v}" for k, v in branch.overrides.items())
        raise Uninferable(f"{what} cannot be built: " + next(iter(builder.errors.values()), "?"))
    base, observation = _kind_variables(builder, base, observation, defaults)
    start = {**ints, **base}
    fields = {n: Field(n, v) for n, v in start.items()}
    found = Discovery(base, observation, fields, {}, set(), defaults, {n: ints[n] for n in lifted}, branch,
                      companions=dict(builder.companions), kinds=dict(builder.kinds))
    for name in fields:
        _probe(builder, found, name, start)
    for name in fields:
        if fields[name].kind == "fixed":
            _partner(builder, found, name, start)
    _deeper(builder, found)
    if not left_out and (freer := _left_out(builder, found, lift, lifted, branch)) is not None:
        return freer
    fields.update({n: Field(n, defaults[n], kind="derived") for n in left_out})
    found.least = _least(builder, found)
    more = _liftable(builder, found) if lift else {}
    if more:
        return discover(builder, lift=False, lifted={**lifted, **more}, branch=branch, left_out=left_out)
    for name, f in fields.items():
        f.sole = f.kind == "fixed" and _refused(builder, found, name)
    for name, f in fields.items():  # a field that follows another by default and needs it to move: equal pair
        found.relations |= {(name, g) for g in f.followers if (g, name) in found.relations
                            and fields[g].base == f.base}
    _unset(builder, found)
    if branch == Branch():
        found.splits = _meetings(builder, found)
    found.flags = {n: _toggle(builder, found, n, v) for n, v in bools.items()}
    _limit_flags(found)
    for flag in found.flag_variables:
        _probe_under_flag(builder, found, flag, start)
    return found


def _left_out(builder: Builder, found: Discovery, lift: bool, lifted: dict, branch: Branch) -> Discovery | None:
    """Discovery again with the held fields the config computes when they are left unset never set, when that
    frees another field: set, such a field pins a sum (Dory's recurrent layers are the layers less the input and
    output ones, so none of them moves alone); left out, it follows the others as in a config.json without it."""
    held = [n for n, f in found.fields.items() if f.kind == "fixed"]
    config = builder.config({}) if held and hasattr(builder, "config") else None  # a test's toy has no config
    computed = frozenset(n for n in held if config is not None and computed_when_unset(config, n))
    if not computed:
        return None
    again = discover(builder, lift, lifted, branch, left_out=computed)
    held = sum(f.kind == "fixed" for n, f in found.fields.items() if n not in computed)
    return again if sum(f.kind == "fixed" for f in again.fields.values()) < held else None


def _companions(builder: Builder, ints: dict, defaults: dict) -> None:
    """Layer counts the config class refuses to move alone because a per-layer list it does not compute from
    them must have as many entries (GPT-Neo's ``attention_types``): moved with the list retiled, they build (the
    builder retiles it from then on)."""
    for count, layers in ints.items():
        if "layer" not in count.rpartition(".")[2] or layers < 2 or builder.read_back({count: layers + 1}):
            continue
        for listed, value in defaults.items():
            entries = expanded(value)
            same_config = listed.rpartition(".")[0] == count.rpartition(".")[0]
            if entries is not None and len(entries) == layers and same_config \
                    and builder.read_back({count: layers + 1, listed: retiled(value, layers + 1)}) is not None:
                builder.companions[count] = (listed, value)
                break


def _kind_variables(builder: Builder, base: dict, observation: Observation, defaults: dict) -> tuple[dict, Observation]:
    """Per-layer lists of kinds whose kinds shape the parameters (a layer of another kind first builds another
    count), one to a layer count: each kind's number of layers becomes a field of its own (``list#kind``), the
    list written out from them kind by kind (see :func:`~.probing.with_kinds`), so a config's own list, in any
    order, is counted by how many layers of each kind it has.  The base and its build with those fields."""
    lists = per_layer_lists(defaults)
    held = builder.read_back(base, others=list(lists)) or {}
    relevant: dict[str, list] = {}
    for listed, count in lists.items():
        entries = expanded(held.get(listed))
        kinds = list(dict.fromkeys(entries or ()))
        if len(kinds) > 1 and kinds_matter(builder, base, listed, entries, defaults[listed], observation.total):
            relevant.setdefault(count, []).append((listed, kinds, entries))
    counts = {}
    for count, found in relevant.items():
        if len(found) == 1:  # two lists of one layer count must add up alike: their counts stay conditions
            listed, kinds, entries = found[0]
            builder.kinds[listed] = (count, tuple(kinds), defaults[listed])
            counts.update({f"{listed}#{kind}": entries.count(kind) for kind in kinds})
    rebuilt = builder.observe({**base, **counts}) if counts else observation
    if rebuilt is None or rebuilt.uneven():
        builder.kinds.clear()
        return base, observation
    return {**base, **counts}, rebuilt


#: the values an unset whole-number field is tried at, in turn, until one builds
UNSET_TRIES = (16, 8, 32, 64, 4, 2, 1)


def _unset(builder: Builder, found: Discovery) -> None:
    """The fields the default config leaves unset (None) that its class declares whole numbers, each set in turn:
    one whose setting changes no shape (at two values) is quiet, one that changes shapes is optional (a branch of
    its own, set, starts from the value found); the rest stay unset, a condition of the formula.  Optional
    fields that build only together (a mixture of experts: how many, how wide, how many a token uses) are tried
    together once."""
    alone = []
    for name in sorted(k for k, v in found.defaults.items() if v is None and k not in dict(found.branch.given)):
        if common(name) or not builder.declares_int(name):
            continue
        tried = ((v, builder.observe({**found.base, name: v})) for v in UNSET_TRIES)
        value, obs = next(((v, o) for v, o in tried if o is not None and not o.uneven()), (None, None))
        if obs is None:
            alone.append(name)
        elif effects(found.observation, obs):
            found.optional[(name,)] = value
        else:
            again = builder.observe({**found.base, name: value * 3})
            if again is not None and not effects(found.observation, again):
                found.quiet.add(name)
    for name in sorted(k for k, v in found.defaults.items() if v == [] and not common(k)):
        _empty_list(builder, found, name)
    if len(alone) > 1 and found.branch == Branch():
        for value in UNSET_TRIES[:2]:
            obs = builder.observe({**found.base, **{name: value for name in alone}})
            if obs is not None and not obs.uneven() and effects(found.observation, obs):
                found.optional[tuple(alone)] = value
                break


def _empty_list(builder: Builder, found: Discovery, name: str) -> None:
    """A list the default config leaves empty: one whose entries (the first layers' numbers, tried) change no
    shape is quiet; one that adds parameters (Qwen4-Exp's per-layer embeddings on the layers it lists), or that
    does not build with them, is a condition of the formula: empty."""
    tries = [builder.observe({**found.base, name: entries}) for entries in ([1], [1, 2])]
    if all(obs is not None and not effects(found.observation, obs) for obs in tries):
        found.quiet.add(name)
    else:
        found.empty.add(name)


def _meetings(builder: Builder, found: Discovery) -> list[tuple]:
    """Pairs of free fields shaping one parameter whose meeting changes the structure: two widths unequal by
    default with a projection between them that vanishes where they are equal (ELECTRA's embedding and hidden
    sizes), or an equal pair (moved only together) whose parting adds one (OPT's word-embedding projection).
    Each as ``(left, kind, right, start)``: the other side's relation and the values its discovery starts from."""
    shaped = {n: {e[1] for e in f.effects if e[0] == "dim"} for n, f in found.fields.items() if f.free}
    names = sorted(shaped)
    out = []
    for i, left in enumerate(names):
        for right in names[i + 1:]:
            a, b = found.fields[left].base, found.fields[right].base
            if not shaped[left] & shaped[right] or not (isinstance(a, int) and isinstance(b, int)):
                continue
            equal = (left, right) in found.relations and (right, left) in found.relations and a == b
            if a != b and not ({(left, right), (right, left)} & found.relations):
                tries = [{left: b}, {right: a}]
            elif equal:
                tries = [{right: b * 2}, {left: a * 2}, {right: b + 1}, {left: a + 1}]
            else:
                continue
            for moved in tries:
                # an equal pair parts wherever it goes; two widths must meet at the value itself
                if _changes(builder, found, moved) and (equal or not _changes(builder, found, _beside(moved))):
                    out.append((left, "differs" if equal else "equals", right, tuple(moved.items())))
                    break
    return out


def _changes(builder: Builder, found: Discovery, moved: dict) -> bool:
    """Whether ``moved`` builds with a structure other than the base's."""
    obs = builder.observe({**found.base, **moved})
    return obs is not None and not obs.uneven() and obs.regime != found.observation.regime


def _beside(moved: dict) -> dict:
    """One value beside a meeting's: the structure must change at the meeting itself, not merely as the field
    moves (a width leaving the one it equals changes it wherever it goes)."""
    return {k: v + 1 for k, v in moved.items()}


def common(name: str) -> bool:
    """Whether a field is one every config has (token ids, the dtype, the task's labels): no size of the
    architecture."""
    return "token_id" in name or name.rpartition(".")[2] in common_fields()


class Uninferable(Exception):
    """The engine cannot infer this type; the message says why, in one line."""


def _moves(value: int) -> list[tuple[str, int]]:
    moves = [("scale", value * 3)] if value > 0 else []
    moves.append(("jitter", value + 1))
    if value - 1 >= 1:
        moves.append(("jitter", value - 1))
    return moves


def _same(found: Discovery, obs: Observation | None, regime=None) -> bool:
    return obs is not None and obs.regime == (regime or found.observation.regime) and not obs.uneven()


def _probe(builder: Builder, found: Discovery, name: str, start: dict) -> None:
    f = found.fields[name]
    for kind, value in _moves(f.base):
        back = builder.read_back({**found.base, name: value}, others=found.fields)
        if back is not None and back[name] != value:
            f.kind = "derived"  # the config computes it from others: not a variable
            return
        followers = {g for g, v in back.items() if g != name and v != found.fields[g].base} if back else set()
        # a field the config moves along (a KV head count defaulting to the head count) is pinned, so that the
        # effect seen is this field's own
        pinned = {g: found.fields[g].base for g in followers}
        obs = builder.observe({**found.base, name: value, **pinned})
        if not _same(found, obs) and pinned:
            obs = builder.observe({**found.base, name: value})
        if _same(found, obs):
            f.moved(kind, effects(found.observation, obs))
            f.followers = followers
            return


#: the factor the layer counts are raised by to probe again the fields the base's few layers hide
DEEPER = 3


def _deeper(builder: Builder, found: Discovery) -> None:
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
    periods = []
    for depth in range(max(counts.values()) + 1):
        deep = {**found.base, **{n: v * DEEPER - depth for n, v in counts.items()}}
        reference = builder.observe(deep)
        if not _same(found, reference):
            continue
        for name in hidden if depth == 0 else _offsets(found, hidden, periods):
            f = found.fields[name]
            for kind, value in _moves(f.base) if depth == 0 else [("jitter", f.base + 1), ("jitter", f.base - 1)]:
                obs = builder.observe({**deep, name: value})
                if _same(found, obs) and effects(reference, obs):
                    f.moved(kind, effects(reference, obs))
                    found.hidden[name] = (deep, value)
                    if depth == 0:
                        periods.append(name)
                    else:
                        found.relations.add((name, _period_of(builder, found, name, periods)))
                    break
        if not periods:
            return


def _least(builder: Builder, found: Discovery) -> dict:
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
        if one is not None and not _same(found, one) and _same(found, builder.observe({**found.base, name: 2})):
            out[name] = 2
    return out


def _at_least(value, lowest: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= lowest


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


def _refused(builder: Builder, found: Discovery, name: str) -> bool:
    """Whether the config class refuses every other value of ``name`` tried (×3, ×2, ½, ±1, +2) for the field's
    own sake: no config transformers accepts has another, so holding it leaves none out.  A refusal that names
    another field (a per-layer list of as many entries, another field of the same name it must equal) is a
    relation, not this: the field is held as any other."""
    value = found.fields[name].base
    leaf = name.rpartition(".")[2]
    others = {k.rpartition(".")[2] for k in found.defaults if k != name}
    if not isinstance(value, int) or value < 1 or leaf in others or \
            any(per_layer(v, value) for v in found.defaults.values()):
        return False
    tried = {value * 3, value * 2, value + 1, value + 2, value - 1, value // 2} - {value, 0}
    for v in tried:
        text = builder.refusal({**found.base, name: v})
        if text is None or any(re.search(rf"\b{re.escape(other)}\b", text) for other in others - {leaf}):
            return False
    return True


def _liftable(builder: Builder, found: Discovery) -> dict:
    """The held fields whose next value up builds with every parameter of the base and more: each → that value."""
    out = {}
    for name, f in found.fields.items():
        if f.kind != "fixed" or not isinstance(f.base, int) or f.base < 0:
            continue
        obs = builder.observe({**found.base, name: f.base + 1})
        if obs is not None and not obs.uneven() and obs.regime > found.observation.regime:
            out[name] = f.base + 1
    return out


def _partner(builder: Builder, found: Discovery, name: str, start: dict) -> None:
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
        if _same(found, obs):
            moved = effects(found.observation, obs)
            # moved together by one multiplier, a ratio (the head width) stays put: the partners three times
            # further show what this field moves through it
            further = builder.observe({**values, **{g: found.fields[g].base * 9 for g in group}})
            if _same(found, further):
                moved |= effects(found.observation, further)
            f.moved("scale", moved)
            for g in group:
                if found.fields[g].kind == "fixed":
                    found.fields[g].moved("scale", moved)
            found.relations |= {(name, g) for g in group}
            return


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
                if _same(found, builder.observe({**found.base, name: f.base * 7, other: g.base * 7})):
                    found.relations.add((name, other))
                    break
    return found.relations != before


def _toggle(builder: Builder, found: Discovery, name: str, value: bool) -> Field:
    flag = Field(name, value)
    obs = builder.observe({**found.base, name: not value})
    if obs is None or obs.uneven():
        return flag
    flag.moved("toggle", effects(found.observation, obs))
    return flag


def _limit_flags(found: Discovery) -> None:
    for name in found.flag_variables[MAX_FLAGS:]:
        found.flags[name].kind = "fixed"


def _probe_under_flag(builder: Builder, found: Discovery, flag: str, start: dict) -> None:
    """Parameters that exist only with ``flag`` toggled: find which fields their shapes follow."""
    toggled = {**found.base, flag: not found.flags[flag].base}
    base = builder.observe(toggled)
    new = base.shapes.keys() - found.observation.shapes.keys() if base is not None else set()
    if not new:
        return
    for name, f in found.fields.items():
        if f.kind in ("fixed", "derived"):
            continue
        value = f.base * 3 if f.step == "scale" else f.base + 1
        partners = {g: found.fields[g].base * 3 for (a, g) in found.relations if a == name}
        obs = builder.observe({**toggled, name: value, **partners})
        if obs is None or obs.regime != base.regime:
            continue
        more = {e for e in effects(base, obs) if e[1] in new}
        if name in found.hidden:  # a field the base's few layers hide: at the layers it shows at, toggled too
            deep, moved = found.hidden[name]
            reference = builder.observe({**deep, flag: not found.flags[flag].base})
            obs = builder.observe({**deep, flag: not found.flags[flag].base, name: moved})
            if reference is not None and obs is not None:
                more |= {e for e in effects(reference, obs) if e[1] in new}
        if more:
            f.moved(f.step, more)
