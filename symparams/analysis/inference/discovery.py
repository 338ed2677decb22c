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
config out.  A held field the config class takes one higher only with another
at the same value one higher too is kept at most that field (an order the
reader enforces: DeepSeek-style ``topk_group ≤ n_group``); a held power of two
it takes only doubled or halved, changing no shape there, is irrelevant and
moved by doubling (Mimi's codebook size).  A *branch* (:class:`Branch`)
starts discovery elsewhere, and the
engine fits it as a formula of its own: a held field one above its default
(kept there or higher), a field the default leaves unset (None) set, or two
widths meeting (or parting) where that changes the structure.

Per-layer lists: a layer count the config refuses to move alone, because a
list it does not compute must have as many entries (GPT-Neo), moves with the
list retiled; a list of layer kinds that shape the parameters makes each
kind's number of layers a field of its own (``layer_types#full_attention``).
"""

from __future__ import annotations

from ...families.inferred import expanded
from .computed import computed_for
from .discovered import Branch, Discovery, Field, Uninferable, common, effects, moves, same
from .layers import kinds_matter, per_layer_lists
from .probing import Builder, Observation, computed_when_unset, parent_written, retiled
from .products import product_equalities
from .relations import ceiling, deeper, doubled, least, liftable, partner, refused

#: the largest layer count of a base configuration, tried in turn: builds cost time per layer, not per width, so
#: the base is the smallest of these that keeps every kind of layer the default config has (a full-attention layer
#: in every 6 appears only from 6 layers on)
BASE_LAYERS = (4, 6, 8, 12, 16)
#: expert counts above this are lowered in the base configuration, as layer counts are
BASE_EXPERTS = 16
#: relevant flags beyond this many stay at their defaults
MAX_FLAGS = 4


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
    _sums(builder, ints, defaults)
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
                      companions=dict(builder.companions), kinds=dict(builder.kinds), sums=dict(builder.sums),
                      computed=computed_for(getattr(builder, "model_type", "")))
    for name in fields:
        _probe(builder, found, name, start)
    for name in fields:  # an order first: moved ×3 with its bound, it would be taken to divide it
        if fields[name].kind == "fixed":
            ceiling(builder, found, name)
    for name in fields:
        if fields[name].kind == "fixed":
            partner(builder, found, name, start)
    for name in fields:
        if fields[name].kind == "fixed":
            doubled(builder, found, name)
    found.products = product_equalities(builder, found)
    deeper(builder, found)
    if not left_out and (freer := _left_out(builder, found, lift, lifted, branch)) is not None:
        return freer
    fields.update({n: Field(n, defaults[n], kind="derived") for n in left_out})
    found.least = least(builder, found)
    more = liftable(builder, found) if lift else {}
    if more:
        return discover(builder, lift=False, lifted={**lifted, **more}, branch=branch, left_out=left_out)
    for name, f in fields.items():
        f.sole = f.kind == "fixed" and refused(builder, found, name)
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
    output ones, so none of them moves alone); left out, it follows the others as in a config.json without it.
    So is a field the parent config writes into a sub-config (see :func:`~.probing.parent_written`)."""
    held = [n for n, f in found.fields.items() if f.kind == "fixed"]
    config = builder.config({}) if held and hasattr(builder, "config") else None  # a test's toy has no config
    written = parent_written(builder.model_type) if config is not None else frozenset()
    computed = frozenset(n for n in held if config is not None and (computed_when_unset(config, n) or n in written))
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


def _sums(builder: Builder, ints: dict, defaults: dict) -> None:
    """Sizes that do not build moved alone because a list of whole numbers the config does not compute must add
    up to them (Reformer's axial position widths to the hidden size): moved ×3 with the list's last entry taking
    up the difference, they build (the builder writes the list so from then on, and the reader checks the sum).
    Only such a size is moved so: one that builds alone, or not even with the list, is left as it was."""
    for size, value in ints.items():
        if value < 2 or common(size) or "layer" in size.rpartition(".")[2]:
            continue
        for listed, entries in defaults.items():
            if not _whole_numbers(entries) or len(entries) < 2 or sum(entries) != value \
                    or listed.rpartition(".")[0] != size.rpartition(".")[0] or size in builder.sums:
                continue
            moved = {size: value * 3}
            if builder.observe(moved) is None and \
                    builder.observe({**moved, listed: [*entries[:-1], entries[-1] + 2 * value]}) is not None:
                builder.sums[size] = (listed, list(entries))
                builder.built.clear()  # the builds cached with the size alone now write the list too
                break


def _whole_numbers(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in value)


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


def _probe(builder: Builder, found: Discovery, name: str, start: dict) -> None:
    f = found.fields[name]
    for kind, value in moves(f.base):
        back = builder.read_back({**found.base, name: value}, others=found.fields)
        if back is not None and back[name] is None:
            # no one value to read back (Gemma 4's head width, which its full-attention layers override per
            # layer): nothing says the config computed it, so it is held here, and the partner search may yet
            # move it (with the first partner it builds with: Gemma 4's head_dim with vocab_size, a relation)
            return
        if back is not None and back[name] != value:
            # the config computes it from others, not a variable; unless the value given shapes a tensor before
            # the config overwrites it (BailingHybrid's linear-attention heads take head_dim, then head_dim
            # becomes qk_rope_head_dim): then it is held, and a file that changes it refused
            given = builder.observe({**found.base, name: value})
            if given is None or given.shapes == found.observation.shapes:
                f.kind = "derived"
            return
        followers = {g for g, v in back.items() if g != name and v != found.fields[g].base} if back else set()
        # a field the config moves along (a KV head count defaulting to the head count) is pinned, so that the
        # effect seen is this field's own
        pinned = {g: found.fields[g].base for g in followers}
        obs = builder.observe({**found.base, name: value, **pinned})
        if not same(found, obs) and pinned:
            obs = builder.observe({**found.base, name: value})
        if same(found, obs):
            f.moved(kind, effects(found.observation, obs))
            f.followers = followers
            return


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
        # a field the config moves along may undo this one's effect (Switch Transformers' sparse step, layers //
        # sparse layers, keeps one sparse layer as the layers triple): pinned, as the field's own probe pins it
        pinned = builder.observe({**toggled, name: value, **partners, **{g: found.fields[g].base for g in f.followers}})
        if f.followers and pinned is not None and pinned.regime == base.regime:
            more |= {e for e in effects(base, pinned) if e[1] in new}
        if name in found.hidden:  # a field the base's few layers hide: at the layers it shows at, toggled too
            deep, moved = found.hidden[name]
            reference = builder.observe({**deep, flag: not found.flags[flag].base})
            obs = builder.observe({**deep, flag: not found.flags[flag].base, name: moved})
            if reference is not None and obs is not None:
                more |= {e for e in effects(reference, obs) if e[1] in new}
        if more:
            f.moved(f.step, more)
