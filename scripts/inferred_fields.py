"""What the data file records of a class's config fields beside its formula: each field's default, the texts
that change the count, the lists held at their defaults, and what a field left out of a config.json means (the
field it follows, the per-layer kinds it counts); the keys read beside the fields come from
:mod:`config_keywords`.  Used by ``infer_formulas.py``."""

from __future__ import annotations

import functools
import random

import sympy as sp

from symparams.analysis.inference.audit import next_kind_first
from symparams.analysis.inference.computed import computed_for
from symparams.analysis.inference.layers import KIND, index_lists, kind_counts, per_layer_lists
from symparams.analysis.inference.probing import (Builder, attribute, computed_when_unset, configure,
                                                  held_values, libraries, relisted, written_otherwise)
from symparams.analysis.inference.seeds import SEEDS
from symparams.families.config import flattened
from symparams.families.inferred import expanded, parse_relation
from symparams.families.inferred_widths import names_of
from symparams.families.inferred_tree import TOP_K_FIELDS
from config_keywords import (aliases_of, default_config, is_layer_kinds, layer_pattern_keys, legacy_of, mappings_of,
                             per_layer_overrides)
from sub_config_defaults import sub_fields


def defaults_of(model_type: str, fields) -> dict:
    """The default config's value of each of ``fields`` (what a config.json that leaves one out means)."""
    config = default_config(model_type)
    values = held_values(config)  # a field the class writes otherwise (Dory's doubled layers) as it holds it
    values.update({name: attribute(config, name) for name in fields if KIND in name})  # layers of one kind
    # a value the engine had to seed has no default a config.json may leave it to: DBRX's bare default holds one
    # key/value head and does not build; read with it, a config without the key would be counted, and wrongly
    values.update({name: None for name in flattened(SEEDS.get(model_type, {}))})
    return {name: values[name] for name in sorted(fields) if name in values}


def with_defaults(entry: dict) -> dict:
    """An exact entry with its fields' defaults and how the config fills a field left out (kept in the entry;
    computed here for entries written before they were)."""
    if entry.get("branches"):
        entry = {**entry, "branches": [with_defaults(b) for b in entry["branches"]]}
    if not entry["exact"] or "lists" in entry:
        return entry
    if "follows" in entry:  # written before the lists were recorded
        return {**entry, **_lists(entry)}
    fixed = entry.get("conditions", {}).get("fixed", {})
    # a width the modeling code computes with a float is no field: the data holds its rule, and the fields it reads
    computed = {k: v for k, v in computed_for(entry["model_type"]).items() if k in entry["symbols"]}
    read = sorted(set().union(*map(names_of, computed.values())) - set(entry["symbols"])) if computed else []
    # a relation may name fields the formula does not count by (a top-k of router groups at most the groups)
    related = sorted({n for text in entry.get("conditions", {}).get("relations", ())
                      for side in parse_relation(text)[::2] for n in side.split("*")} - set(entry["symbols"]))
    # a list whose entries must add up to a size: its default is what a config.json that leaves it out adds up
    summed = list(entry.get("conditions", {}).get("sums", {}))
    fields = [*(k for k in entry["symbols"] if k not in computed), *entry["flags"], *fixed, *read, *related, *summed]
    sizes = sorted([*(k for k in entry["symbols"] if k not in computed),
                    *(k for k, v in fixed.items() if not isinstance(v, bool))])
    known = set(fields).union(*(entry.get("conditions", {}).get(k, ()) for k in ("irrelevant", "derived", "unset")))
    flags = [*entry["flags"], *(k for k, v in fixed.items() if isinstance(v, bool))]
    # how many experts a token uses changes no shape, but the active count reads it
    top_k = [prefix + name for prefix in ("", "text_config.") for name in TOP_K_FIELDS]
    # a list whose kind counts are the formula's own fields is read as it is; another is checked against the rules
    kinds = {listed: rules for listed, rules in kinds_of(entry["model_type"], entry["class"], tuple(sizes)).items()
             if not any(name.startswith(listed + KIND) for name in entry["symbols"])}
    defaults = defaults_of(entry["model_type"], [*fields, *top_k])
    # a sub-config given without a field takes its class's default (or rule), not the default config's
    given = sub_fields({**entry, "defaults": defaults})
    return {**entry, "defaults": defaults, **given,
            "follows": follows(entry["model_type"], sizes, tuple(entry["flags"])),
            "aliases": aliases_of(entry["model_type"], known),
            **({"texts": texts_of(entry["model_type"])} if flags else {}), **({"kinds": kinds} if kinds else {}),
            **({"computed": computed} if computed else {}),
            **({"legacy": legacy} if (legacy := legacy_of(entry["model_type"], entry["class"])) else {}),
            **({"written": written} if (written := written_of(entry["model_type"])) else {}),
            **({"mappings": found} if (found := mappings_of(entry["model_type"], entry["class"])) else {}),
            **({"per_layer": found} if (found := per_layer_overrides(entry["model_type"], entry["class"])) else {}),
            **_lists(entry), **_indexes(entry, tuple(sizes)), **_forced(entry)}


#: text keys whose other values run other products than the traced ones, by type → the value traced (a config.json
#: that sets another is outside the costs; the count holds either way): Funnel's "factorized" attention multiplies
#: its relative positions otherwise than the default "relative_shift"
COST_TEXTS = {"funnel": ("attention_type",)}


def with_cost_texts(model_type: str, costs: dict) -> dict:
    """``costs`` (exact) with the text keys of :data:`COST_TEXTS` held at the default config's values, and the keys
    of :func:`layer_pattern_keys` at their defaults."""
    texts = COST_TEXTS.get(model_type, ())
    if not costs.get("exact"):
        return costs
    patterns = {k: v for k, v in layer_pattern_keys(model_type).items()
                if k not in costs.get("symbols", {}) and k not in costs.get("defaults", {})}
    if not texts and not patterns:
        return costs
    base = default_config(model_type)
    return {**costs, "held": {**costs["held"], **patterns, **{k: getattr(base, k) for k in texts}}}


def _forced(entry: dict) -> dict:
    """``{"forced": ...}``: each per-layer list whose kinds the formula counts (``list#kind`` fields) and whose last
    entry the config class rewrites as it reads a file (Gemma 4's text config makes its last layer a full-attention
    one, whatever the file says) → that kind.  Counted by its kinds as written, a file ending otherwise would miss
    the layer transformers changes: the reader refuses it."""
    lists = sorted({name.partition(KIND)[0] for name in entry["symbols"] if KIND in name})
    out = {listed: kind for listed in lists if (kind := forced_last(entry["model_type"], listed)) is not None}
    return {"forced": out} if out else {}


@functools.lru_cache(maxsize=None)
def forced_last(model_type: str, listed: str) -> str | None:
    """The kind the config class gives the last entry of the per-layer list ``listed`` (dotted) whatever it is
    given: the default list with its last entry set to each other kind reads back with it; else None."""
    flat = flattened(default_config(model_type).to_dict())
    entries = expanded(flat.get(listed))
    if not entries or len(set(entries)) < 2:
        return None
    last = entries[-1]
    for other in sorted(set(entries) - {last}):
        back = _read(model_type, {listed: relisted(flat[listed], [*entries[:-1], other])}, [listed])
        held = None if back is None else expanded(back[listed])
        if not held or held[-1] != last:
            return None
    return last


@functools.lru_cache(maxsize=None)
def written_of(model_type: str) -> dict:
    """How the config class writes a config.json otherwise than it holds the config (see
    :func:`~symparams.analysis.inference.probing.written_otherwise`), as the reader undoes it: ``list``, the
    per-layer list whose entries ``marks`` (written, never held) show the written form; ``fields``, each whole
    number → the factor it is written times over, the same at three times the values; ``computed``, those the
    class computes when a file leaves them out.  {} for a class that writes what it holds, or whose written form
    is not so simple (then a file in it is read as written, and the audit finds the difference)."""
    config = default_config(model_type)
    otherwise = written_otherwise(config)
    lists = {k: sorted(set(map(str, w)) - set(map(str, h))) for k, (w, h) in otherwise.items() if isinstance(w, list)}
    lists = {k: marks for k, marks in lists.items() if marks}
    numbers = {k: (w, h) for k, (w, h) in otherwise.items() if isinstance(w, int)}
    if len(lists) != 1 or not numbers or any(h <= 0 or w % h for w, h in numbers.values()):
        return {}
    fields = {k: w // h for k, (w, h) in numbers.items()}
    try:
        tripled = configure(model_type, {k: 3 * h for k, (_, h) in numbers.items()})
    except Exception:  # the class refuses the tripled values: the factors are not confirmed
        return {}
    again = written_otherwise(tripled)
    if any(again.get(k) != (3 * h * fields[k], 3 * h) for k, (_, h) in numbers.items()):
        return {}
    (listed, marks), = lists.items()
    return {"list": listed, "marks": marks, "fields": fields,
            "computed": sorted(k for k in fields if computed_when_unset(config, k))}


def _lists(entry: dict) -> dict:
    """``{"lists": ...}``: the class's lists of whole numbers that change its count (see :func:`lists_of`), and
    ``{"repeats": ...}``: those of them the config class computes as one of the formula's fields once per layer
    (see :func:`repeats_of`), read when they are that field's value on every layer."""
    # a list whose entries must add up to a size was fitted with all but its last entry at their defaults (the last
    # took up the size's moves): held so, whether or not another split changes the count (the per-tensor shapes it
    # does change); the reader checks the last entry with the sum
    summed = defaults_of(entry["model_type"], entry.get("conditions", {}).get("sums", {}))
    lists = {**lists_of(entry["model_type"], entry["class"]), **{k: list(v) for k, v in summed.items()}}
    lists = {k: v for k, v in lists.items()
             if k not in entry["symbols"] and not any(name.startswith(k + KIND) for name in entry["symbols"])}
    repeats = repeats_of(entry["model_type"], tuple(lists), tuple(entry["symbols"]))
    return {"lists": {k: v for k, v in lists.items() if k not in repeats}, **({"repeats": repeats} if repeats else {})}


def repeats_of(model_type: str, lists: tuple, fields: tuple) -> dict:
    """Each of ``lists`` that the config class computes, when a config.json leaves it out, as one of ``fields``
    repeated once per layer (Laguna's ``num_attention_heads_per_layer``, ``num_attention_heads`` on each layer) →
    ``{"field": ..., "layers": ...}``: such a list is the formula's own field written per layer, so a config.json
    giving that field's value on each of its layers is counted by the formula, and any other list is refused.
    Found by moving each field and reading the list back: it must follow the field, at two values, and the layer
    count."""
    out = {}
    for listed in lists:
        for field in fields:
            layers = _repeating(model_type, listed, field, fields)
            if layers is not None:
                out[listed] = {"field": field, "layers": layers}
                break
    return out


def _repeating(model_type: str, listed: str, field: str, fields: tuple) -> str | None:
    """The layer count ``listed`` has an entry for, when the config computes it as ``field`` on each layer."""
    _, transformers = libraries()
    flat = flattened(transformers.AutoConfig.for_model(model_type).to_dict())
    base = _read(model_type, {}, [listed, field])
    if base is None or not _size(base[field]) or not isinstance(base[listed], (list, tuple)):
        return None
    # the layer count: a whole-number key naming layers with as many as the list has entries
    layers = [k for k, v in flat.items() if "layer" in k.rpartition(".")[2] and _size(v) and v == len(base[listed])]
    for count in layers:
        tries = [{field: base[field] * 2}, {field: base[field] + 1, count: flat[count] + 1}]
        backs = [_read(model_type, moved, [listed, field, count]) for moved in tries]
        if all(back is not None and list(back[listed]) == [back[field]] * back[count] for back in backs):
            return count
    return None


@functools.lru_cache(maxsize=None)
def lists_of(model_type: str, cls: str) -> dict:
    """The default config's lists of whole numbers whose other values change the count (TAPAS's
    ``type_vocab_sizes``, Reformer's ``axial_pos_embds_dim``, the layers Qwen3-Next keeps dense in
    ``mlp_only_layers``), and its per-layer lists of kinds whose other orders do (LFM3's ``layer_types``), each →
    its default: the formulas were fitted with it, so a config.json that sets one otherwise is refused (a list
    the formula counts by its kinds is read instead: see :func:`_lists`)."""
    flat = flattened(default_config(model_type).to_dict())
    lists = {k: v for k, v in flat.items() if (_whole_numbers(v) or is_layer_kinds(v)) and "token_id" not in k}
    if not lists:
        return {}
    builder = Builder(model_type, cls)
    base = builder.observe({})
    if base is None:
        return {}
    return {k: list(v) for k, v in sorted(lists.items())
            if any(obs is not None and obs.total != base.total
                   for obs in (builder.observe({k: other}) for other in _other_lists(list(v))))}


#: between an index list's name and its layer count: how many of those layers it names
#: (``moe_layers#below:num_hidden_layers``)
LISTED = KIND + "below:"


def _indexes(entry: dict, sizes: tuple) -> dict:
    """``{"indexes": ...}``: the class's lists that name layers by index (see :func:`indexes_of`)."""
    found = indexes_of(entry["model_type"], entry["class"], sizes)
    return {"indexes": found} if found else {}


@functools.lru_cache(maxsize=None)
def indexes_of(model_type: str, cls: str, sizes: tuple) -> dict:
    """The lists of :func:`lists_of` that name layers by their indices (Llama 4's ``moe_layers``: the layers whose
    MLP is a mixture of experts) → ``{"layers": the layer count they index, "count": how many layers the config
    class lists, a rule in the size fields as ``follows`` holds one}``.  A model that asks only whether a layer is
    listed depends on how many are, not which: a config.json's own list of as many layers is counted, another
    refused.  A list no size moves may count the layers of one kind (:func:`_kind_rule`).  A list whose count
    no rule fits stays held at its default (:func:`lists_of`)."""
    flat = flattened(default_config(model_type).to_dict())
    held = lists_of(model_type, cls)
    out = {}
    for listed, layers in index_lists(flat).items():
        if listed not in held:
            continue
        # left out (null), the config class computes the list from the sizes: a sub-config otherwise keeps the
        # default's list while the step it was computed from moves (Llama 4's text config)
        name, unset = listed + LISTED + layers, {listed: None}
        base = _read(model_type, unset, [*sizes, name]) or {}
        if base.get(name) is None:  # a list the class computes beside its fields keeps a null as given (Zamba2's
            unset = {}  # hybrid_layer_ids): left out of the file, it is computed
            base = _read(model_type, unset, [*sizes, name]) or {}
        leaders = [f for f in sizes if isinstance(base.get(f), int) and _moves(model_type, f, name, base, unset)]
        rule = _fit_follower(model_type, name, leaders, base, given=unset) if leaders \
            else _kind_rule(model_type, name, sizes, unset, flat) or base.get(name)
        if rule is not None:
            out[listed] = {"layers": layers, "count": rule}
    return out


def _kind_rule(model_type: str, name: str, sizes: tuple, unset: dict, flat: dict) -> str | None:
    """The kind count of the formula (``layers_block_type#hybrid``) that an index list names as many layers as, on
    the default per-layer list, on it reversed and on it with its first layer of another kind (Zamba2's
    ``hybrid_layer_ids``, its hybrid layers): no size moves such a list, and a file that changes the kinds but keeps
    the default's list builds as many adapters as the list names, not as the kinds count."""
    for kind in (s for s in sizes if KIND in s):
        listed, _, mark = kind.partition(KIND)
        entries = expanded(flat.get(listed))
        others = sorted(set(entries or ()) - {mark})
        if not entries or not others:
            continue
        changed = [others[0] if entries[0] == mark else mark, *entries[1:]]
        tries = [_read(model_type, {**unset, listed: relisted(flat[listed], e)}, [name, kind])
                 for e in (entries, entries[::-1], changed)]
        if all(t is not None and t[name] is not None and t[name] == t[kind] for t in tries):
            return kind
    return None


def _whole_numbers(value) -> bool:
    """A list of whole numbers, or of lists of them (Mllama's supported aspect ratios, pairs of tile counts)."""
    return isinstance(value, (list, tuple)) and all(
        _whole_numbers(x) if isinstance(x, (list, tuple)) else isinstance(x, int) and not isinstance(x, bool)
        for x in value)


def _other_orders(value: list) -> list[list]:
    """Other per-layer lists of the same kinds: the layers before the last reversed, the list turned by one, the
    first two kinds swapped, and the first layer of the next kind (a count that follows the list's kinds, their
    order or how many layers each has changes: Nemotron-H's four layers are one of each kind, so only the last
    moves its count).

    >>> _other_orders(["conv", "conv", "attention", "conv"])
    [['attention', 'conv', 'conv', 'conv'], ['conv', 'attention', 'conv', 'conv'], ['attention', 'attention', 'conv', 'attention'], ['attention', 'conv', 'attention', 'conv']]
    """
    kinds = sorted(set(value))
    swap = {kinds[0]: kinds[-1], kinds[-1]: kinds[0]}
    return [[*reversed(value[:-1]), value[-1]], [*value[1:], value[0]], [swap.get(k, k) for k in value],
            next_kind_first(value)]


def _other_lists(value: list) -> list[list]:
    """Other values of a list of whole numbers to try: emptied, one entry more, each entry doubled or one more, one
    moved from the last entry to the first (Reformer's axial widths must sum to the hidden size); for an empty
    list, the first layers' numbers.  A list of lists: emptied, its last entry once more, or left out (how many
    aspect ratios Mllama's tile embeddings have a row for); a list of layer kinds: :func:`_other_orders`."""
    if is_layer_kinds(value):
        return _other_orders(value)
    if any(isinstance(x, (list, tuple)) for x in value):
        return [[], [*value, value[-1]], value[:-1]]
    if not value:
        return [[0], [1], [0, 1]]
    moved = [[value[0] + 1, *value[1:-1], value[-1] - 1]] if len(value) > 1 else []
    return [[], value + value[-1:], [x * 2 for x in value], [x + 1 for x in value], *moved]


#: text keys of every config.json that say nothing of its structure
NOT_STRUCTURE = ("_name_or_path", "dtype", "model_type", "torch_dtype", "transformers_version")


def texts_of(model_type: str) -> dict:
    """The default config's text keys: a config class may compute a flag from one (T5's ``is_gated_act`` from
    ``feed_forward_proj``), so a config.json that leaves a flag out takes its default only with these texts."""
    base = flattened(default_config(model_type).to_dict())
    return {k: v for k, v in sorted(base.items()) if isinstance(v, str) and k.rpartition(".")[2] not in NOT_STRUCTURE}


def _read(model_type: str, values: dict, names) -> dict | None:
    """What the config class makes of ``values`` for ``names`` (None: it refuses them)."""
    try:
        config = configure(model_type, values)
    except Exception:  # the config class refuses these values
        return None
    return {n: _listed(config, n) if LISTED in n else attribute(config, n) for n in names}


def _listed(config, name: str) -> int | None:
    """How many layers an index list of ``config`` names (``list#below:layers``): its entries below the layer
    count (a default list the config class does not compute stays as it is when the layers are fewer)."""
    listed, _, layers = name.partition(LISTED)
    entries, count = attribute(config, listed), attribute(config, layers)
    return len({i for i in entries if i < count}) if _whole_numbers(entries) and _size(count) else None


def follows(model_type: str, sizes: list[str], flags: tuple = ()) -> dict:
    """Each size field the config class computes from others when a config.json leaves it out (T5's
    ``num_decoder_layers`` is ``num_layers``, a head width ``hidden_size // num_attention_heads``): its formula
    in their names, fitted exactly on the values the config class computes; None when no formula fits.  A flag
    of the formula that moves it is a 0/1 variable of the rule (MobileBERT's ``true_hidden_size`` is
    ``intra_bottleneck_size`` with ``use_bottleneck``, else ``hidden_size``)."""
    return dict(_follows(model_type, tuple(sizes), tuple(flags)))


@functools.lru_cache(maxsize=None)  # the classes of one type share their fields
def _follows(model_type: str, sizes: tuple, flags: tuple = ()) -> tuple:
    base = _read(model_type, {}, [*sizes, *flags])
    if base is None:
        return ()
    out = {}
    for name in sizes:
        switches = [f for f in flags if isinstance(base[f], bool) and _switches(model_type, f, name, base)]
        # a size may move it only with a flag flipped (the width without the bottleneck)
        settings = [{}, *({f: not base[f]} for f in switches)]
        leaders = [f for f in sizes if f != name and isinstance(base[f], int)
                   and any(_moves(model_type, f, name, base, given) for given in settings)]
        if leaders or switches:
            out[name] = _fit_follower(model_type, name, leaders, base, switches)
    return tuple(out.items())


def _switches(model_type: str, flag: str, name: str, base: dict) -> bool:
    back = _read(model_type, {flag: not base[flag]}, [name])
    return back is not None and back[name] != base[name]


@functools.lru_cache(maxsize=None)
def kinds_of(model_type: str, cls: str, sizes: tuple) -> dict:
    """Each per-layer list of kinds that shapes the parameters (see :mod:`symparams.analysis.inference.layers`) →
    how many layers of each kind the config class computes from the size fields (a rule as ``follows`` holds
    one; a whole number when no size moves it)."""
    out = {}
    for listed, kinds in kind_counts(model_type, cls).items():
        base = _read(model_type, {}, sizes) or {}
        rules = {}
        for kind in kinds:
            name = f"{listed}{KIND}{kind}"
            count = (_read(model_type, {}, [name]) or {}).get(name)
            leaders = [f for f in sizes
                       if isinstance(base.get(f), int) and _moves(model_type, f, name, {**base, name: count})]
            rules[kind] = _fit_follower(model_type, name, leaders, base) if leaders else \
                _layers_counted(model_type, name, sizes) or count
        out[listed] = rules
    return out


def _layers_counted(model_type: str, name: str, sizes: tuple) -> list | None:
    """A kind count (``indexer_types#full``) that the config class computes as its layer count, where the formula
    counts that layer count's layers by the kinds of another list (GLM-MoE-DSA's ``mlp_layer_types#dense`` and
    ``#sparse``, whose sum is ``num_hidden_layers``): that sum, as a rule; None where there is no such list or
    the count does not follow the layers."""
    lists = per_layer_lists(flattened(default_config(model_type).to_dict()))
    for listed, layers in lists.items():
        kinds = [s for s in sizes if s.startswith(listed + KIND)]
        if not kinds or name.startswith(listed + KIND):
            continue
        if all((_read(model_type, {layers: n}, [name]) or {}).get(name) == n for n in (3, 7)):
            return [["1", [[kind, 1]], []] for kind in kinds]
    return None


def _moves(model_type: str, leader: str, name: str, base: dict, given: dict | None = None) -> bool:
    start = _read(model_type, given, [name]) if given else base
    if start is None:
        return False
    for value in (base[leader] * 3, base[leader] + 1, base[leader] * 2, base[leader] // 2):
        back = _read(model_type, {**(given or {}), leader: value}, [name])
        if back is not None and back[name] != start[name]:
            return True
    return False


def _size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _fit_follower(model_type: str, name: str, leaders: list[str], base: dict, switches: list[str] = (),
                  given: dict | None = None):
    from symparams.analysis.inference.fitting import expression, fit
    from symparams.analysis.inference.result import encode_value

    rng = random.Random(f"{model_type}/{name}")
    points, values = [], []
    for _ in range(400):  # half the draws are multiples of the defaults: a config class may want divisibility
        if len(points) == 40:
            break
        jitter = rng.random() < 0.5
        point = {f: max(1, base[f] * rng.randint(1, 4) + rng.randint(-3, 3) if jitter else base[f] * rng.randint(1, 8))
                 for f in leaders}
        point.update({f: rng.random() < 0.5 for f in switches})
        # the other sizes scaled by lcm(1..8), so that a width the config wants divisible by a leader is; unscaled
        # where the config class refuses them scaled (ZAYA takes one expert per token, no more)
        scaled = {f: v * 840 for f, v in base.items() if f not in leaders and f != name and _size(v)}
        back = next((read for others in (scaled, {})
                     if (read := _read(model_type, {**others, **point, **(given or {})}, [name])) is not None), None)
        if back is not None and isinstance(back[name], int) and not isinstance(back[name], bool):
            points.append(point)
            values.append(back[name])
    # a count of layers of one kind may be a layer pattern: a period of a layer count
    layers = frozenset(f for f in leaders if "layer" in f.rpartition(".")[2])
    points = [{f: int(v) for f, v in p.items()} for p in points]  # a flag as 0/1
    names = [*leaders, *switches]
    found = fit(points, values, names, frozenset(switches), layers=layers) if len(points) >= 20 else None
    if found is None:
        return None
    return encode_value(sp.expand(expression(found, {f: sp.Symbol(f) for f in names})))
