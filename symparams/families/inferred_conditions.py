"""What a config.json's values must meet for an inferred formula to count them: the conditions the fit held
(values held, lowest values, relations between fields), the fields a config leaves out computed as transformers
computes them, and what the costs need besides (a flag they hold, a relation only the forward pass needs, a head
width transformers' model runs at)."""

from __future__ import annotations

import json
from typing import Mapping

import sympy as sp

from ..core.errors import SymparamsError
from .inferred_data import OutsideConditions, formula, names_in, parameter_names

def _followed(name: str, rule, known: dict, source: str) -> int:
    """A field the config.json leaves out and transformers computes from others (``num_decoder_layers`` is
    ``num_layers``): its value by the rule the data holds."""
    if rule is None:
        raise SymparamsError(f"{source}: key {name} is missing; transformers computes it from other keys in a way "
                             f"the inferred data does not hold: give it")
    value = formula(rule, {k: sp.Integer(int(v)) for k, v in known.items()})  # a flag of the rule as 0/1
    if not (value.is_Integer and value >= 0):
        raise SymparamsError(f"{source}: key {name} is missing, and the value transformers would give it is not a "
                             f"whole number here ({value})")
    return int(value)


def _check_conditions(conditions: dict, known: dict, defaults: dict, follows: dict, reader, source: str) -> dict:
    """One line naming the first held value the config changes or field it sets that the formula needs unset;
    else the values known, held ones included."""
    where = f"{source}: outside the inferred formula's conditions:"
    for key, held in sorted(conditions.get("fixed", {}).items()):
        if isinstance(held, bool):
            value = reader.bool(key, default=defaults.get(key, held))
        elif not reader.has(key) and key in follows:
            value = _followed(key, follows[key], known, source)
        else:
            value = reader.int(key, default=defaults.get(key, held), minimum=0)
        if value != held:
            sole = " (the only value transformers accepts)" if key in conditions.get("sole", ()) else ""
            raise OutsideConditions(f"{where} {key} is {_json(value)}, the formula holds only for "
                                    f"{key} = {_json(held)}{sole}")
        known[key] = value
    _check_minimum(conditions, known, source)
    for key in conditions.get("unset", ()):
        if reader.has(key) and reader.get(key) != []:  # an empty list sets nothing (save_pretrained writes one)
            raise OutsideConditions(f"{where} {key} is set, the formula holds only with {key} unset (null)")
    for key in conditions.get("given", ()):
        if not reader.has(key):
            raise OutsideConditions(f"{where} {key} is unset, the formula holds only with {key} set")
    return known


def _check_minimum(conditions: dict, known: dict, source: str) -> None:
    """One line naming the first field below the lowest value the formula holds for (Switch Transformers' sparse
    step of 1 makes every layer sparse, a structure of its own)."""
    for key, lowest in sorted(conditions.get("minimum", {}).items()):
        if key in known and known[key] < lowest:
            raise OutsideConditions(f"{source}: outside the inferred formula's conditions: {key} is {known[key]}, "
                                    f"the formula holds only for {key} ≥ {lowest}")


def _check_relations(conditions: dict, known: dict, source: str) -> None:
    """One line naming the first relation between fields the config breaks."""
    where = f"{source}: outside the inferred formula's conditions:"
    for text in conditions.get("relations", ()):
        left, kind, right = parse_relation(text)
        a, b = side_value(left, known), side_value(right, known)
        if a is not None and b is not None and not _holds(kind, a, b):
            raise OutsideConditions(f"{where} {left} = {a}, {right} = {b}; the formula needs {text}")


def _check_sums(conditions: dict, known: dict, defaults: dict, reader, source: str) -> None:
    """One line for a list of whole numbers whose entries do not add up to the size they must (Reformer's axial
    position widths to its hidden size; transformers refuses to build it): read from the config.json, else its
    default."""
    for listed, size in sorted(conditions.get("sums", {}).items()):
        entries = reader.data[listed] if reader.has(listed) else defaults.get(listed)
        whole = isinstance(entries, (list, tuple)) and all(type(x) is int for x in entries)
        if not whole or sum(entries) != known.get(size):
            raise OutsideConditions(f"{source}: outside the inferred formula's conditions: {listed} is "
                                    f"{_json(entries)}, the formula holds only where its entries add up to "
                                    f"{size} = {_json(known.get(size))}")


def other_sides(conditions: dict, known: Mapping, defaults: Mapping, reader) -> dict:
    """The fields a relation names that the formula does not count by (a top-k of router groups at most the
    groups: both shape nothing), read from the config.json, else their defaults: the relation holds for them too."""
    out = {}
    for text in conditions.get("relations", ()):
        left, _, right = parse_relation(text)
        for name in {*left.split("*"), *right.split("*")} - set(known):
            if reader.has(name) or isinstance(defaults.get(name), int):
                out[name] = reader.int(name, default=defaults.get(name), minimum=0)
    return out


def side_value(side: str, values: Mapping):
    """A relation's side at ``values``: a field's value, or a product's (``expand*hidden_size``, a product of
    fields the config class holds equal to another); None when a field of it has no value."""
    out = 1
    for name in side.split("*"):
        if not isinstance(values.get(name), int):
            return None
        out *= values[name]
    return out


def _kinds_listed(symbols: Mapping[str, str], reader, source: str) -> dict[str, int]:
    """The number of layers of each kind (a field ``list#kind`` of the formula) a config.json's per-layer list
    holds; a list absent leaves them to the rule transformers computes them by (``follows``)."""
    out = {}
    kinds: dict[str, list[str]] = {}
    for name in symbols:
        listed, mark, kind = name.partition("#")
        if mark:
            kinds.setdefault(listed, []).append(kind)
    for listed, known in kinds.items():
        if reader.has(listed):
            entries = _layer_kinds(reader, listed, known, source)
            out.update({f"{listed}#{kind}": entries.count(kind) for kind in known})
    return out


def _check_forced(entry: dict, reader, source: str) -> None:
    """One line for a per-layer list whose last layer is of another kind than the one the config class forces
    there (``forced``): transformers builds that layer otherwise than the file's list says."""
    for listed, kind in sorted(entry.get("forced", {}).items()):
        entries = expanded(reader.data[listed]) if reader.has(listed) else None
        if entries and entries[-1] != kind:
            raise OutsideConditions(f"{source}: outside the inferred formula's conditions: {listed} ends with "
                                    f"{entries[-1]!r}, and transformers makes the last layer {kind!r}")


def _refuse_layers_without_list(entry: dict, reader, listed: Mapping[str, int], source: str) -> None:
    """One line for a layer count set while the per-layer list the formula counts layers by is left out, where the
    data holds no rule for how transformers computes that list from the count: the formula's counts of each kind
    are the default list's, right only for its length."""
    groups: dict[str, int | None] = {}
    for name in entry["symbols"]:
        group, mark, _ = name.partition("#")
        if mark and name not in listed and name not in entry.get("follows", {}):
            default = entry.get("defaults", {}).get(name, 0)  # None: the default leaves the list unset (seeded)
            groups[group] = None if default is None or groups.get(group, 0) is None else groups.get(group, 0) + default
    for field in entry.get("conditions", {}).get("derived", ()):
        if "layer" not in field or not reader.has(field):
            continue
        value = reader.int(field, minimum=0)
        for group, length in sorted(groups.items()):
            if length is None:
                raise OutsideConditions(f"{source}: outside the inferred formula's conditions: {field} is {value} "
                                        f"and {group} is left out; the formula counts layers by the kinds {group} "
                                        f"lists, and the default config gives no such list (give {group})")
            if value != length:
                raise OutsideConditions(f"{source}: outside the inferred formula's conditions: {field} is {value} "
                                        f"and {group} is left out; the formula counts layers by the kinds {group} "
                                        f"lists and holds without it only for {field} = {length} (give {group})")


def _layer_kinds(reader, listed: str, known, source: str) -> list:
    """A config.json's per-layer list, one kind per layer; one line when it is none, or holds a kind the formula
    does not know."""
    where = f"{source}: outside the inferred formula's conditions:"
    entries = expanded(reader.data[listed])
    if entries is None:
        raise OutsideConditions(f"{where} key {listed} is no list of layer kinds the formula reads")
    for kind in sorted(set(entries) - set(known)):
        raise OutsideConditions(f"{where} {listed} has layers of kind {kind!r}, the formula knows only "
                                f"{', '.join(map(repr, known))}")
    return entries


def _check_kinds(kinds: dict, reader, known: dict, source: str) -> None:
    """One line for a per-layer list of kinds the config.json writes (``layer_types``) that does not have, of each
    kind, as many layers as the formula counts (the list transformers computes when the file leaves it out):
    the formula was fitted on those."""
    where = f"{source}: outside the inferred formula's conditions:"
    for listed, rules in kinds.items():
        if not reader.has(listed):
            continue
        entries = _layer_kinds(reader, listed, rules, source)
        for kind, rule in rules.items():
            if rule is None:
                raise OutsideConditions(f"{where} key {listed} is set, and the inferred data cannot tell how many "
                                        f"layers of each kind the formula holds for")
            wanted = _followed(f"{listed}#{kind}", rule, known, source)
            if entries.count(kind) != wanted:
                raise OutsideConditions(f"{where} {listed} has {entries.count(kind)} layers of kind {kind!r}, the "
                                        f"formula holds only with {wanted} (as transformers computes the list)")


def _json(value) -> str:
    return json.dumps(value)


_RELATIONS = {" divides ": "divides", " = ": "equals", " < ": "below", " ≠ ": "differs", " ≥ ": "atleast"}


def parse_relation(text: str) -> tuple[str, str, str]:
    """``(left, kind, right)`` of a relation as the data writes it (``n_head divides n_embd``, ``E ≠ H``,
    ``M ≥ L``)."""
    for word, kind in _RELATIONS.items():
        left, found, right = text.partition(word)
        if found:
            return left, kind, right
    raise SymparamsError(f"the inferred data holds a relation it cannot read: {text[:60]!r}")


def _holds(kind: str, a: int, b: int) -> bool:
    if kind == "divides":
        return a > 0 and b % a == 0
    return {"equals": a == b, "differs": a != b, "atleast": a >= b}.get(kind, a < b)


def _read_costs(entry: dict, reader, known: dict, values: dict, numbers: dict) -> str | None:
    """The fields only the inferred costs follow (a sliding window, a top-k), and the standard symbols only they
    use, put into ``numbers``; why the costs do not hold for this config (a flag they hold at a value, a relation
    only the forward pass needs), None when they do.  The count holds either way."""
    costs = entry.get("costs") or {}
    if not costs.get("exact"):
        return None
    for name in set(values) - parameter_names(entry):  # a head count only the costs follow: put in as a number
        numbers[name] = values.pop(name)
    for field, name in costs["symbols"].items():
        value = reader.int(field, default=costs["defaults"].get(field), minimum=0)
        if value is None:
            return f"key {field} is null, and the inferred costs need a number"
        numbers.setdefault(name, value)
        known[field] = value
    for key, held in sorted(costs.get("held", {}).items()):
        value = reader.bool(key, default=held) if isinstance(held, bool) else reader.get(key, held) \
            if isinstance(held, str) else reader.int(key, default=held, minimum=0)
        if value != held:
            return f"the inferred costs hold only for {key} = {_json(held)}"
    for name, least in sorted(costs.get("least", {}).items()):
        value = _costs_side(reader, costs, known, name)
        if value is not None and value < least:
            return f"the inferred costs hold only for {name} ≥ {least} (it is {value}): fewer were never traced"
    for text in costs.get("relations", ()):
        left, kind, right = parse_relation(text)
        sides = {n: _costs_side(reader, costs, known, n) for n in (left, right)}
        if None in sides.values():
            missing = left if sides[left] is None else right
            return f"the inferred costs need {text}, and the config does not give {missing}"
        if not _holds(kind, sides[left], sides[right]):
            return f"the inferred costs need {text} ({left} is {sides[left]}, {right} is {sides[right]})"
    known_values = {**values, **numbers}
    return _kinds_refused(costs, reader, known_values) or _width_refused(costs, known_values) \
        or _rotary_refused(costs, reader, known_values)


#: the kinds a per-layer list (``layer_types``) names a layer whose cache keeps a sliding window, or every token:
#: transformers gives a chunked layer the same sliding cache (``LAYER_TYPE_CACHE_MAPPING``)
CACHE_KINDS = {"DynamicSlidingWindowLayer": ("sliding_attention", "chunked_attention"),
               "DynamicLayer": ("full_attention",)}
#: where a config.json writes its per-layer list of attention kinds (a multimodal config: in its text config)
KIND_LISTS = ("layer_types", "text_config.layer_types")


def _kinds_refused(costs: dict, reader, values: Mapping[str, int]) -> str | None:
    """Why a config.json's own list of sliding and full attention layers is outside the costs: their cache holds
    as many layers of each as the list transformers computes when the file leaves it out (Gemma 3: one full layer
    in every 6), and another list was never traced."""
    listed = next((k for k in KIND_LISTS if reader.has(k)), None)
    entries = expanded(reader.get(listed)) if listed else None
    if not entries or not any(set(entries) & set(kinds) for kinds in CACHE_KINDS.values()):
        return None
    scope = {name: sp.Integer(v) for name, v in values.items()}
    for part, kind, _, layers, *_ in costs.get("cache") or ():
        if part != "self" or kind not in CACHE_KINDS or not names_in(layers) <= set(scope):
            continue
        kinds = CACHE_KINDS[kind]
        wanted, have = formula(layers, scope), sum(entries.count(k) for k in kinds)
        if wanted.is_integer and int(wanted) != have:
            named = " or ".join(repr(k) for k in kinds)
            return (f"{listed} has {have} layers of kind {named}, the inferred costs hold only with "
                    f"{int(wanted)} (as transformers computes the list)")
    return None


def _costs_side(reader, costs: dict, known: Mapping[str, int], side: str) -> int | None:
    """A side of a relation of the costs: a field's value, or a product's (``head_dim*num_attention_heads``, which
    Helium's forward pass needs equal to ``hidden_size``; ``32*mamba_n_heads``); None where a field of it has no
    value."""
    out = 1
    for name in side.split("*"):
        value = int(name) if name.isdigit() else known[name] if name in known else _costs_field(reader, costs, name)
        if value is None:
            return None
        out *= value
    return out


def _costs_field(reader, costs: dict, name: str) -> int | None:
    """A field no shape follows that a relation of the costs names (a key/value head count MLA's attention needs
    equal to the head count): the config's value, else the config class's default the costs recorded (None:
    neither gives one)."""
    return reader.int(name, default=costs.get("defaults", {}).get(name), minimum=0)


def _width_refused(costs: dict, values: Mapping[str, int]) -> str | None:
    """Why transformers' model does not run at these head widths (see :mod:`~symparams.analysis.inference.running`:
    a rotary embedding needs an even rotated width), None where it does: no FLOPs for a model that does not run."""
    scope = {name: sp.Integer(v) for name, v in values.items()}
    for module, _, heads, key_width, value_width, _ in costs.get("attention") or ():
        for what, quantity in (("heads", heads), ("key width", key_width), ("value width", value_width)):
            if not isinstance(quantity, list) or not names_in(quantity) <= set(scope):
                continue
            value = formula(quantity, scope)
            if not value.is_integer:  # traced only where it is whole: ConvBERT's H/(2·heads) fails to run at 4.5
                name = sp.sstr(formula(quantity, {n: sp.Symbol(n) for n in names_in(quantity)}))
                return (f"the inferred costs' {what} of {module}, {name}, comes to {value} here, not a whole "
                        f"number: they were traced only where it is one")
    for quantity, modulus, residues in costs.get("runs", ()):
        if not names_in(quantity) <= set(scope):  # a width the config does not give: where it runs is unknown
            return "the inferred costs need the head widths they were traced at, which this config does not give"
        value = formula(quantity, scope)
        if value.is_integer and (int(value) % modulus if modulus else int(value)) not in residues:
            name = sp.sstr(formula(quantity, {n: sp.Symbol(n) for n in names_in(quantity)}))
            need = f"{name} = {residues[0]}" if modulus == 0 else f"{name} even" if (modulus, residues) == (2, [0]) \
                else f"{name} to be {' or '.join(map(str, residues))} modulo {modulus}"
            return (f"the inferred costs need {need} ({name} is {value}): the model transformers builds does not "
                    f"run at other head widths (traced)")
    return None


def _rotary_refused(costs: dict, reader, values: Mapping[str, int]) -> str | None:
    """Why a config's own ``partial_rotary_factor`` (top level, or in ``rope_parameters`` as transformers 5 writes
    it) is outside the costs: the head widths they run at (``runs``)
    were traced at the class's default share.  transformers turns ``int(W · factor)`` channels of a head of W, and
    its cosine ``2·ceil`` of half of them: an odd number fails, or (one) runs a channel wider; so the costs need
    that number even for the config's own factor too (the traced rules are that at the default)."""
    share = reader.get("partial_rotary_factor")
    nested = reader.get("rope_parameters")
    if share is None and isinstance(nested, dict):
        share = nested.get("partial_rotary_factor")
    if share is None:
        return None
    if isinstance(share, bool) or not isinstance(share, (int, float)):
        return f"key partial_rotary_factor is {_json(share)}, and the inferred costs need a number"
    scope = {name: sp.Integer(v) for name, v in values.items()}
    for quantity, modulus, _ in costs.get("runs", ()):
        value = formula(quantity, scope) if modulus and names_in(quantity) <= set(scope) else None
        if value is not None and value.is_integer and int(int(value) * share) % 2:  # as transformers rounds it
            name = sp.sstr(formula(quantity, {n: sp.Symbol(n) for n in names_in(quantity)}))
            return (f"the inferred costs need int({name} * partial_rotary_factor) even (it is "
                    f"{int(int(value) * share)}): transformers' rotary embedding does not run at an odd rotated "
                    f"width, or runs one channel wider")
    return None


def expanded(value) -> list | None:
    """A per-layer list as one entry per layer: the list itself, or a run-length list ``[[kinds, repeats], ...]``
    (GPT-Neo's ``attention_types``, ``[[["global", "local"], 12]]``) written out; None for anything else.

    >>> expanded([[["global", "local"], 2]]), expanded(("full", "sliding")), expanded(3)
    (['global', 'local', 'global', 'local'], ['full', 'sliding'], None)
    """
    if not isinstance(value, (list, tuple)) or not value:
        return None
    if run_length(value):
        return [kind for kinds, repeats in value for _ in range(repeats) for kind in kinds]
    return list(value) if all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value) else None


def kinds_listed(value) -> list | None:
    """A per-layer list of kinds, one per layer (see :func:`expanded`); None where ``value`` is none, or holds
    anything but text.

    >>> kinds_listed([[["global", "local"], 1]]), kinds_listed([1, 2])
    (['global', 'local'], None)
    """
    entries = expanded(value)
    return entries if entries and all(isinstance(e, str) for e in entries) else None


def run_length(value) -> bool:
    """Whether a per-layer list is written as runs, ``[[kinds, repeats], ...]``."""
    return isinstance(value, (list, tuple)) and bool(value) and all(
        isinstance(r, (list, tuple)) and len(r) == 2 and isinstance(r[0], (list, tuple)) and isinstance(r[1], int)
        and not isinstance(r[1], bool) for r in value)
