"""Models of the ``model_type`` values no hand-written family reads: a config.json read into the inferred formulas.

The formulas come from meta-device builds (:mod:`.inferred_data`), the tree
from :mod:`.inferred_tree`; this module reads a config.json into them: every
field with its defaults and aliases, refused in one line outside the
conditions the formulas were verified under, and makes the family and the
model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import sympy as sp

from ..core.errors import SymparamsError
from ..core.family import Constraint, Family, Follows, Switch
from ..core.symbols import SYMBOLS
from .inferred_data import (DATA, HEADS, CeilDiv, FloorDiv, OutsideConditions, covers, data, entries,  # noqa: F401
                            formula, numerator_names, symbol_of, version)
from .inferred_costs import parameter_names
from .inferred_keys import refuse_flags_text_may_set, refuse_unknown_sizes
from .inferred_tree import TOP_K_FIELDS, TOP_K_SYMBOL, _refuse_negative, _scope, build_tree, tree_of_build  # noqa: F401

# -- a config.json of an inferred type -----------------------------------------------

@dataclass(frozen=True)
class Reading:
    """What a config.json says to an inferred type's formula: symbols' values, numbers put in, flags."""

    values: dict  # standard symbol name → value (≥ 1)
    numbers: dict  # symbol name → value, put into the tree (the type's own fields, and fields at 0)
    flags: dict  # flag field → value
    costs_refused: str | None = None  # why the inferred costs do not hold for this config (None: they do)


def class_of(model_type: str, head: str | None, source: str) -> str:
    """The data's class for ``head`` (None: the base model); one line when the type has no such class."""
    cls = "base" if head in (None, "", "none", "base") else head
    known = entries(model_type)
    if cls not in known:
        has = ", ".join(c for c in known) or "none"
        raise SymparamsError(f"{source}: model_type {model_type!r} has no {cls} class in the inferred data "
                             f"(it has: {has}; choose one with --head)")
    entry = known[cls]
    if not entry["exact"]:
        raise OutsideConditions(f"{source}: model_type {model_type!r} ({cls}) has no hand-written family and was "
                                f"not inferred: {entry['reason']}")
    return cls


def read_config(entry: dict, reader, source: str) -> Reading:
    """The fields' values from a config.json (its defaults for missing keys), refused outside the conditions."""
    from .config import REQUIRED

    defaults = entry.get("defaults", {})
    conditions = entry.get("conditions", {})
    follows = entry.get("follows", {})
    reader = _unaliased(reader, entry.get("aliases", {}), source)
    refuse_unknown_sizes(entry, reader.data, source)
    # a size is at least 1, unless the type's default is 0 (no dense layers, no shared experts)
    listed = _kinds_listed(entry["symbols"], reader, source)
    _refuse_layers_without_list(entry, reader, listed, source)
    ints = {f: reader.int(f, default=defaults.get(f, REQUIRED), minimum=0 if defaults.get(f) == 0 else 1)
            for f in entry["symbols"] if f not in listed and (reader.has(f) or f not in follows)}
    ints.update(listed)
    for f, value in ints.items():
        if value is None:  # the type's default is null: the fit was seeded with a number
            raise OutsideConditions(f"{source}: key {f} is missing or null, and the inferred formula needs a number")
    refuse_flags_text_may_set(entry, reader, source)
    flags = {f: reader.bool(f, default=defaults.get(f, REQUIRED)) for f in entry.get("flags", {})}
    known = _check_conditions(conditions, {**ints, **flags}, defaults, follows, reader, source)
    for f in entry["symbols"]:
        if f not in ints:
            ints[f] = known[f] = _followed(f, follows[f], known, source)
    _check_relations(conditions, known, source)
    _check_kinds(entry.get("kinds", {}), reader, known, source)
    values, numbers = {}, {}
    for field_name, name in entry["symbols"].items():
        if name in SYMBOLS and ints[field_name] >= 1:
            values[name] = ints[field_name]
        else:
            numbers[name] = ints[field_name]
    top_k = _top_k(entry, reader)
    if top_k is not None and TOP_K_SYMBOL not in numbers:
        numbers[TOP_K_SYMBOL] = top_k
    _refuse_negative_counts(entry, {**numbers, **values}, flags, source)
    refused = _read_costs(entry, reader, {**known, **flags}, values, numbers)
    return Reading(values, numbers, flags, refused)


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
        value = reader.bool(key, default=held) if isinstance(held, bool) else reader.int(key, default=held, minimum=0)
        if value != held:
            return f"the inferred costs hold only for {key} = {_json(held)}"
    for text in costs.get("relations", ()):
        left, kind, right = parse_relation(text)
        if left in known and right in known and not _holds(kind, known[left], known[right]):
            return f"the inferred costs need {text} ({left} is {known[left]}, {right} is {known[right]})"
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


def run_length(value) -> bool:
    """Whether a per-layer list is written as runs, ``[[kinds, repeats], ...]``."""
    return isinstance(value, (list, tuple)) and bool(value) and all(
        isinstance(r, (list, tuple)) and len(r) == 2 and isinstance(r[0], (list, tuple)) and isinstance(r[1], int)
        and not isinstance(r[1], bool) for r in value)


def _refuse_negative_counts(entry: dict, numbers: Mapping[str, int], flags: Mapping[str, bool], source: str) -> None:
    """Values outside every configuration the fit saw can give a stack a negative count (more dense layers
    before the experts than layers): refused here, so that one real build can count the file instead."""
    scope = None
    for path, count, shape, *_ in entry["parameters"]:
        if any(_may_be_negative(encoded) for encoded in (count, *shape)):
            scope = scope or _scope(entry, numbers, flags)
            _refuse_negative(f"{source}: outside the inferred formula's conditions", path, formula(count, scope),
                             tuple(formula(d, scope) for d in shape))


def _may_be_negative(encoded) -> bool:
    """Whether a formula has a term with a negative coefficient (a difference: layers less dense layers)."""
    return isinstance(encoded, list) and any(term[0].startswith("-") for term in encoded)


def _top_k(entry: dict, reader) -> int | None:
    """How many routed experts a token uses, from the config (else the type's default); None when neither says."""
    defaults = entry.get("defaults", {})
    for prefix in ("", "text_config."):
        for name in TOP_K_FIELDS:
            key = prefix + name
            if reader.has(key) or isinstance(defaults.get(key), int):
                return reader.int(key, default=defaults.get(key))
    return None


def _unaliased(reader, aliases: dict, source: str):
    """The config read with each field under its own name (``num_experts`` is ``num_local_experts``), a
    sub-config's fields as dotted keys (``text_config.hidden_size``)."""
    from .config import flattened

    renamed = {aliases.get(k, k): v for k, v in flattened(reader.data).items()}
    return type(reader)(renamed, reader.source, reader.head)


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
    for key, lowest in sorted(conditions.get("minimum", {}).items()):
        if key in known and known[key] < lowest:
            raise OutsideConditions(f"{where} {key} is {known[key]}, the formula holds only for {key} ≥ {lowest}")
    for key in conditions.get("unset", ()):
        if reader.has(key) and reader.get(key) != []:  # an empty list sets nothing (save_pretrained writes one)
            raise OutsideConditions(f"{where} {key} is set, the formula holds only with {key} unset (null)")
    for key in conditions.get("given", ()):
        if not reader.has(key):
            raise OutsideConditions(f"{where} {key} is unset, the formula holds only with {key} set")
    return known


def _check_relations(conditions: dict, known: dict, source: str) -> None:
    """One line naming the first relation between fields the config breaks."""
    where = f"{source}: outside the inferred formula's conditions:"
    for text in conditions.get("relations", ()):
        left, kind, right = parse_relation(text)
        if left in known and right in known and not _holds(kind, known[left], known[right]):
            raise OutsideConditions(f"{where} {left} = {known[left]}, {right} = {known[right]}; the formula "
                                    f"needs {text}")


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
    """``(left, kind, right)`` of a relation as the data writes it (``n_head divides n_embd``, ``E ≠ H``, ``M ≥ L``)."""
    for word, kind in _RELATIONS.items():
        left, found, right = text.partition(word)
        if found:
            return left, kind, right
    raise SymparamsError(f"the inferred data holds a relation it cannot read: {text[:60]!r}")


def _holds(kind: str, a: int, b: int) -> bool:
    if kind == "divides":
        return a > 0 and b % a == 0
    return {"equals": a == b, "differs": a != b, "atleast": a >= b}.get(kind, a < b)


def _constraints(entry: dict, reading: Reading) -> tuple[Constraint, ...]:
    """The relations between standard symbols, checked again when a value is changed (``--set``)."""
    scope = {name: (sp.sympify(reading.numbers[name]) if name in reading.numbers else symbol_of(f, name))
             for f, name in entry["symbols"].items()}
    out = []
    for text in entry.get("conditions", {}).get("relations", ()):
        left, kind, right = parse_relation(text)
        if left not in entry["symbols"] or right not in entry["symbols"]:
            continue
        a, b = scope[entry["symbols"][left]], scope[entry["symbols"][right]]
        expr = {"divides": b / a, "below": b - a, "equals": 1 / (1 + (a - b) ** 2), "differs": (a - b) ** 2,
                "atleast": a - b + 1}[kind]
        if expr.free_symbols:
            out.append(Constraint(expr, f"the inferred formula needs {text} ({left} is {a}, {right} is {b})"
                                  .replace("{", "(").replace("}", ")")))
    return tuple(out)


def _at_least_zero(entry: dict, numbers: Mapping[str, int]) -> tuple[Constraint, ...]:
    """A count or dimension that a difference of fields gives (layers less dense layers) stays at least 0 when
    a value is changed (``--set``); flags are taken on, where a count has all its terms."""
    scope = None
    out = []
    for path, count, shape, *_ in entry["parameters"]:
        for what, encoded in [("instances", count), *(("dimension", d) for d in shape)]:
            if not _may_be_negative(encoded):
                continue
            scope = scope or _scope(entry, numbers, {name: True for name in entry.get("flags", {})})
            expr = formula(encoded, scope)
            if expr.free_symbols:
                out.append(Constraint(expr + 1, f"these values give {path} fewer than 0 {what}; the inferred formula "
                                                "holds only where every count and dimension is at least 0"))
    return tuple(out)


def branch_of(entry: dict, reader) -> tuple:
    """Which of an entry's formulas a config.json is counted by: the first branch whose side the config is on (the
    fields it sets, at its lowest values or above, the relation of its split), else the entry's own; the
    branch's key (:func:`branch_key`), ``()`` for the entry's own.  A branch's own conditions hold its side too,
    so a config read into the wrong one is refused, never counted."""
    defaults = entry.get("defaults", {})
    for branch in entry.get("branches", ()):
        conditions = branch["conditions"]
        if all(reader.int(k, default=defaults.get(k, v), minimum=0) >= v
               for k, v in conditions.get("minimum", {}).items()) \
                and all(reader.has(k) for k in conditions.get("given", ())) \
                and all(_on_side(text, reader, defaults, entry) for text in conditions.get("split", ())):
            return branch_key(conditions)
    return ()


def _on_side(text: str, reader, defaults: dict, entry: dict) -> bool:
    """Whether a config is on a split's side (its relation holds, fields read with their defaults, or, left out,
    as transformers computes them from others: ERNIE 4.5's last expert layer is the last layer)."""
    left, kind, right = parse_relation(text)
    a, b = (_side_value(k, reader, defaults, entry) for k in (left, right))
    return isinstance(a, int) and isinstance(b, int) and _holds(kind, a, b)


def _side_value(name: str, reader, defaults: dict, entry: dict):
    listed = _kinds_listed(entry["symbols"], reader, reader.source)  # a kind's layers: as the config's list has them
    if name in listed:
        return listed[name]
    rule = entry.get("follows", {}).get(name)
    if reader.has(name) or rule is None:
        return reader.int(name, default=defaults.get(name), minimum=0)
    known = {f: reader.int(f, default=defaults.get(f), minimum=0) for f in _fields_of(rule)}
    return _followed(name, rule, known, reader.source)


def branch_key(conditions: dict) -> tuple:
    """A branch's key: its lowest values, the fields it sets, its split."""
    return (tuple(sorted(conditions.get("minimum", {}).items()))
            + tuple(("set", k) for k in conditions.get("given", ()))
            + tuple(("split", t) for t in conditions.get("split", ())))


def in_branch(entry: dict, key: tuple) -> dict:
    """The entry's branch of ``key`` (:func:`branch_of`), or the entry itself (whose conditions then say where it
    holds)."""
    for branch in entry.get("branches", ()) if key else ():
        if branch_key(branch["conditions"]) == key:
            return branch
    return entry


@lru_cache(maxsize=64)
def family(model_type: str, cls: str, numbers: tuple, flag_defaults: tuple, heads: tuple,
           branch: tuple = (), left_out: tuple = (), costs_refused: str | None = None) -> Family:
    """The family of ``model_type`` with its own fields at ``numbers``; ``heads``: the LM classes (exact, and
    whose conditions the config meets); ``branch``: which of their formulas (:func:`branch_of`); ``left_out``: the
    fields transformers computes from others (:func:`left_out`); ``costs_refused``: why the config is outside the
    inferred costs' conditions.  A field of the type's own that follows others is written as it follows them
    (XLNet's ``d_head`` is H/A), so that it moves with them."""
    known = entries(model_type)
    switches = tuple(Switch(name, value, en=f"config field {name}") for name, value in flag_defaults)
    put_in = dict(numbers)
    follows = _follows(in_branch(known[cls], branch), put_in, left_out)
    put_in.update({str(f.symbol): f.expr for f in follows if str(f.symbol) not in SYMBOLS})

    def build(switch_values, head):
        entry = in_branch(known[class_of(model_type, head, model_type)], branch)
        for key, held in entry.get("conditions", {}).get("fixed", {}).items():
            if key in switch_values and switch_values[key] != held:
                raise SymparamsError(f"{model_type}: the inferred formula holds only for {key} = {_json(held)}")
        return build_tree(model_type, entry, put_in, switch_values, costs_refused)

    entry = in_branch(known[cls], branch)
    constraints = _constraints(entry, Reading({}, put_in, {})) + _at_least_zero(entry, put_in)
    return Family(model_type, {"en": f"{model_type}, inferred", "zh": f"{model_type}（推断）"}, build,
                  switches=switches, heads=heads, constraints=constraints, inferred=True, follows=follows)


def _follows(entry: dict, numbers: Mapping[str, int], left_out: tuple) -> tuple[Follows, ...]:
    """Each field of ``left_out`` as transformers computes it, in the symbols (the type's own fields at
    ``numbers``)."""
    scope = {f: (sp.Integer(numbers[name]) if name in numbers else symbol_of(f, name))
             for f, name in entry["symbols"].items()}
    out = []
    for f in left_out:
        try:
            expr = sp.expand(formula(entry["follows"][f], scope))
        except SymparamsError:  # it follows a field the formula does not hold
            continue
        if expr.free_symbols:
            out.append(Follows(symbol_of(f, entry["symbols"][f]), expr, f))
    return tuple(out)


def left_out(entry: dict, reader, overrides: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The size fields a config.json leaves out that transformers computes from others (``follows``), where
    neither they nor the fields they follow are given another value (``--set``)."""
    reader = _unaliased(reader, entry.get("aliases", {}), reader.source)
    given = set(overrides or {})
    out = []
    for f, rule in sorted(entry.get("follows", {}).items()):
        if rule is None or f not in entry["symbols"] or reader.has(f):
            continue
        if not {entry["symbols"].get(name) for name in {f, *_fields_of(rule)}} & given:
            out.append(f)
    return tuple(out)


def _fields_of(encoded) -> set[str]:
    """The field names a formula of the data is written in."""
    if isinstance(encoded, str):
        return {encoded}
    names: set[str] = set()
    for _, powers, floors in encoded if isinstance(encoded, list) else ():
        names.update(name for name, _ in powers)
        for top, bottom, *_ in floors:
            names.update(numerator_names(top) + ([bottom] if isinstance(bottom, str) else []))
    return names


def settings(config: Mapping[str, Any], head: str | None, overrides: Mapping[str, Any] | None, source: str):
    """The :class:`~symparams.families.config.Settings` of a config.json whose type only the data covers."""
    from .config import ConfigReader, Settings, model_name

    model_type = config["model_type"]
    cls = class_of(model_type, head, source)
    branch = _branch_read(entries(model_type)[cls], ConfigReader(config, source, head), source)
    entry = in_branch(entries(model_type)[cls], branch)
    reading = read_config(entry, ConfigReader(config, source, head), source)
    flag_defaults = _flag_defaults(model_type, reading.flags, config)
    heads = _heads_met(model_type, ConfigReader(config, source, head), source, branch)
    fam = family(model_type, cls, tuple(sorted(reading.numbers.items())), flag_defaults, heads, branch,
                 left_out(entry, ConfigReader(config, source, head), overrides), reading.costs_refused)
    given_values, given_switches = fam.split(overrides or {}, model_type)
    verified = entry["verification"]["exact"]
    note = f"inferred from transformers {version()} meta-device builds, verified on {verified} configurations"
    return Settings(fam, {**reading.values, **given_values}, {**dict(flag_defaults), **given_switches},
                    fam.check_head(head), model_name(source), frozenset(reading.values) - set(overrides or {}),
                    (note,))


def _branch_read(entry: dict, reader, source: str) -> tuple:
    """:func:`branch_of` for a config read with the entry's aliases."""
    return branch_of(entry, _unaliased(reader, entry.get("aliases", {}), source))


def counted(entry: dict, config: Mapping[str, Any], source: str = "config") -> tuple[int, tuple]:
    """The count of ``config`` by one class's entry (its branches included), read as ``count --config`` reads it,
    and the key of the formula that counted it (:func:`branch_key`): a config outside the conditions is refused
    (:class:`SymparamsError`).  The generator checks every entry it writes with this against real builds."""
    figures, key = counted_figures(entry, config, source)
    return figures["total"], key


def counted_figures(entry: dict, config: Mapping[str, Any], source: str = "config") -> tuple[dict, tuple]:
    """:func:`counted`'s ``{"total", "trainable"}`` (a frozen parameter counts in the total only), without
    building the model's tree: what the double entry compares a hand family's count of ``config`` with."""
    from .config import ConfigReader

    reader = ConfigReader(config, source)
    key = _branch_read(entry, reader, source)
    chosen = in_branch(entry, key)
    reading = read_config(chosen, reader, source)
    scope = _scope(chosen, {**reading.values, **reading.numbers}, reading.flags)
    total = trainable = sp.Integer(0)
    for path, count, shape, *marks in chosen["parameters"]:
        n, dims = formula(count, scope), tuple(formula(d, scope) for d in shape)
        _refuse_negative(f"{source}: outside the inferred formula's conditions", path, n, dims)
        total += n * sp.Mul(*dims)
        trainable += 0 if "frozen" in marks else n * sp.Mul(*dims)
    if not total.is_Integer:
        raise OutsideConditions(f"{source}: the inferred formula is not a whole number at these values ({total})")
    return {"total": int(total), "trainable": int(trainable)}, key


def _heads_met(model_type: str, reader, source: str, branch: tuple = ()) -> tuple[str, ...]:
    """The LM classes inferred exactly whose conditions the config meets, in the formula's ``branch`` (the others
    are no head of its model: ``--head`` names the condition)."""
    met = []
    for cls in HEADS:
        entry = entries(model_type).get(cls)
        if entry is None or not entry["exact"]:
            continue
        try:
            read_config(in_branch(entry, branch), reader, source)
        except SymparamsError:
            continue
        met.append(cls)
    return tuple(met)


def _flag_defaults(model_type: str, flags: dict, config: Mapping[str, Any]) -> tuple:
    """Every class's flags at the config's values (else their defaults), so another head reads them too."""
    from .config import flattened

    out, config = dict(flags), flattened(config)
    for entry in entries(model_type).values():
        for name in entry.get("flags", {}):
            if name not in out and name in entry.get("defaults", {}):
                value = config.get(name)
                out[name] = value if isinstance(value, bool) else entry["defaults"][name]
    return tuple(sorted(out.items()))


def model(config: Mapping[str, Any], head: str | None = None, source: str = "config"):
    """The model of a config dict from the inferred formulas, whether or not a family reads its type (the
    cross-checks compare the two)."""
    from ..core.model import Model

    if not covers(config.get("model_type")):
        raise SymparamsError(f"{source}: model_type {config.get('model_type')!r} is not in the inferred data")
    s = settings(config, head, None, source)
    return Model(s.family, s.values, s.switches, s.head, s.name, optional=s.optional, notes=s.notes)
