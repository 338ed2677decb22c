"""Models of the ``model_type`` values no hand-written family reads: a config.json read into the inferred formulas.

The formulas come from meta-device builds (:mod:`.inferred_data`), the tree
from :mod:`.inferred_tree`; this module reads a config.json into them: every
field with its defaults and aliases, refused in one line outside the
conditions the formulas were verified under, and makes the family and the
model.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Mapping, NamedTuple

import sympy as sp

from ..core.errors import SymparamsError
from ..core.family import Constraint, Family, Follows, Switch
from ..core.symbols import SYMBOLS
from .inferred_conditions import (_check_conditions, _check_forced, _check_kinds, _check_minimum,  # noqa: F401
                                  _check_relations, _check_sums, _followed, _holds, _json, _kinds_listed, _read_costs,
                                  _refuse_layers_without_list, expanded, kinds_listed, other_sides,
                                  parse_relation, run_length)
from .inferred_data import (DATA, HEADS, CeilDiv, FloorDiv, OutsideConditions, covers, data, entries,  # noqa: F401
                            formula, numerator_names, symbol_of, version)
from .inferred_keys import (as_given, as_held, check_indexes, refuse_flags_text_may_set, refuse_unknown_sizes,
                            refuse_unrepeated_lists, with_values_set)
from .inferred_tree import TOP_K_FIELDS, TOP_K_SYMBOL, _refuse_negative, _scope, build_tree, tree_of_build  # noqa: F401
from .inferred_widths import names_of, width

# -- a config.json of an inferred type -----------------------------------------------

class Reading(NamedTuple):
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
    reader = _unaliased(reader, entry, source)
    refuse_unknown_sizes(entry, reader.data, source)
    # a size is at least 1, unless the type's default is 0 (no dense layers, no shared experts)
    _check_forced(entry, reader, source)
    listed = _kinds_listed(entry["symbols"], reader, source)
    _refuse_layers_without_list(entry, reader, listed, source)
    computed = entry.get("computed", {})
    _refuse_nulls(entry, reader, listed, source)
    ints = {f: reader.int(f, default=defaults.get(f, REQUIRED), minimum=0 if defaults.get(f) == 0 else 1)
            for f in entry["symbols"] if f not in listed and f not in computed and (reader.has(f) or f not in follows)}
    ints.update(listed)
    for f, value in ints.items():
        if value is None:  # the type's default is null: the fit was seeded with a number
            raise OutsideConditions(f"{source}: key {f} is missing or null, and the inferred formula needs a number")
    refuse_flags_text_may_set(entry, reader, source)
    flags = {f: reader.bool(f, default=defaults.get(f, REQUIRED)) for f in entry.get("flags", {})}
    known = _check_conditions(conditions, {**ints, **flags}, defaults, follows, reader, source)
    for f in entry["symbols"]:
        if f not in ints and f not in computed:
            ints[f] = known[f] = _followed(f, follows[f], known, source)
    _check_minimum(conditions, known, source)  # again: a value left out and computed may be below one too
    _check_relations(conditions, {**other_sides(conditions, known, defaults, reader), **known}, source)
    _check_sums(conditions, known, defaults, reader, source)
    refuse_unrepeated_lists(entry, reader, known, source)
    for f, rule in computed.items():  # a width the modeling code computes with a float, computed as it does
        read = {n: known[n] if n in known else reader.data.get(n, defaults.get(n)) for n in names_of(rule)}
        ints[f] = known[f] = width(rule, read, source)
    _check_kinds(entry.get("kinds", {}), reader, known, source)
    check_indexes(entry.get("indexes", {}), reader, known, source)
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


def _refuse_nulls(entry: dict, reader, listed, source: str) -> None:
    """One line for a size the formula counts by that a config.json sets to null where the type's default is a
    number: transformers then builds without it (DeepSeek-V3's ``q_lora_rank: null``, no query compression),
    which no formula fitted with it counts, and reading the default would count the compressed query instead.  A
    size the formula computes when left out (``follows``) or a branch takes on as unset is read as before."""
    defaults, follows = entry.get("defaults", {}), entry.get("follows", {})
    for f in entry["symbols"]:
        if f not in listed and f not in follows and f not in entry.get("computed", {}) and reader.null(f) \
                and defaults.get(f) is not None:
            raise OutsideConditions(f"{source}: key {f} is null; transformers then builds without it, and the "
                                    f"inferred formula holds only with it set (its default is {defaults[f]})")


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


def _sub_configs(entry: dict) -> frozenset:
    """Every key that holds a sub-config in the fields the formula reads (``encoder`` of ``encoder.hidden_size``),
    with the keys holding those (``encoder`` of ``encoder.text_config.hidden_size``): a sub-config written without
    its ``model_type`` is still read into."""
    fields = [*entry.get("defaults", {}), *entry.get("symbols", {})]
    parts = [f.split(".")[:-1] for f in fields]
    return frozenset(".".join(p[:i]) for p in parts for i in range(1, len(p) + 1))


def _unaliased(reader, entry: dict, source: str):
    """The config read with each field under its own name (``num_experts`` is ``num_local_experts``), a
    sub-config's fields as dotted keys (``text_config.hidden_size``).  A null under one name counts as absent; two
    names of one field with different values are one line naming both (transformers keeps whichever its code
    sets last, and a formula reading the other would count another model)."""
    from .config import _json, _shown, flattened

    aliases = entry.get("aliases", {})
    renamed, named = {}, {}
    flat = _patterns_written_out(flattened(reader.data, sub_configs=_sub_configs(entry)), entry["model_type"], source)
    for key, value in flat.items():
        name = aliases.get(key, key)
        if renamed.get(name) is not None and value is not None and _json(value) != _json(renamed[name]):
            raise SymparamsError(f"{source}: keys {named[name]} ({_shown(renamed[name])}) and {key} ({_shown(value)}) "
                                 f"name one field of the {entry['model_type']} config with different values; keep one")
        if renamed.get(name) is None:
            renamed[name], named[name] = value, key
    return type(reader)(_new_kind_names(renamed, entry["model_type"]), reader.source, reader.head)


def _patterns_written_out(flat: dict, model_type: str, source: str) -> dict:
    """``flat`` with each per-layer list of kinds it gives as text, one character a layer (Nemotron-H's
    ``hybrid_override_pattern``), written out as the list the config class holds; one line for a character that
    names no kind, or a pattern and its list both given and different (transformers would keep one of them)."""
    from .config import _json

    for key, (listed, chars) in data()["renamed"].get("patterns", {}).get(model_type, {}).items():
        text = flat.pop(key, None)
        if text is None:
            continue
        if not isinstance(text, str) or not text or set(text) - set(chars):
            raise SymparamsError(f"{source}: key {key} is {_json(text)}; transformers reads it as one character a "
                                 f"layer, each one of {', '.join(map(repr, chars))}")
        kinds = [chars[c] for c in text]
        given = expanded(flat.get(listed))
        if given is not None and [data()["renamed"]["names"].get(k, k) for k in given] != kinds:
            raise SymparamsError(f"{source}: keys {key} and {listed} give the {model_type} config different layers; "
                                 f"keep one")
        flat[listed] = kinds
    return flat


def _new_kind_names(flat: dict, model_type: str) -> dict:
    """``flat`` with each per-layer list transformers renames the legacy layer kinds of (``mamba`` is
    ``linear_attention`` in Zamba2's ``layers_block_type``, ``attention`` is ``full_attention`` in a
    ``layer_types``) written under the new names, as the config class holds it."""
    renamed = data()["renamed"]
    names = renamed["names"]
    for key in renamed["lists"].get(model_type, ()):
        kinds = expanded(flat.get(key))
        if kinds and any(kind in names for kind in kinds):
            flat[key] = [names.get(kind, kind) for kind in kinds]
    return flat


def _constraints(entry: dict, reading: Reading) -> tuple[Constraint, ...]:
    """The relations between standard symbols, checked again when a value is changed (``--set``)."""
    scope = {name: (sp.sympify(reading.numbers[name]) if name in reading.numbers else symbol_of(f, name))
             for f, name in entry["symbols"].items()}
    out = []
    for text in entry.get("conditions", {}).get("relations", ()):
        left, kind, right = parse_relation(text)
        sides = [side.split("*") for side in (left, right)]  # a side may be a product (see side_value)
        if not all(name in entry["symbols"] for side in sides for name in side):
            continue
        a, b = (sp.Mul(*(scope[entry["symbols"][name]] for name in side)) for side in sides)
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
    switches = tuple(Switch(name, value, en=f"config field {name}", zh=f"配置字段 {name}")
                     for name, value in flag_defaults)
    put_in = dict(numbers)
    follows = _follows(in_branch(known[cls], branch), put_in, dict((f, json.loads(r)) for f, r in left_out))
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


def _follows(entry: dict, numbers: Mapping[str, int], left_out: Mapping[str, Any]) -> tuple[Follows, ...]:
    """Each field of ``left_out`` (field → its rule) as transformers computes it, in the symbols (the type's own
    fields at ``numbers``)."""
    scope = {f: (sp.Integer(numbers[name]) if name in numbers else symbol_of(f, name))
             for f, name in entry["symbols"].items()}
    out = []
    for f, rule in left_out.items():
        try:
            expr = sp.expand(formula(rule, scope))
        except SymparamsError:  # it follows a field the formula does not hold
            continue
        if expr.free_symbols:
            out.append(Follows(symbol_of(f, entry["symbols"][f]), expr, f))
    return tuple(out)


def left_out(entry: dict, reader, overrides: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """The size fields a config.json leaves out that transformers computes from others (``follows``), where
    neither they nor the fields they follow are given another value (``--set``), each with its rule (as JSON
    text: a sub-config's own rule may stand for the entry's, see :func:`~.inferred_keys.as_given`)."""
    reader = _unaliased(reader, entry, reader.source)
    given = set(overrides or {})
    out = []
    for f, rule in sorted(entry.get("follows", {}).items()):
        if rule is None or f not in entry["symbols"] or reader.has(f):
            continue
        if not {entry["symbols"].get(name) for name in {f, *_fields_of(rule)}} & given:
            out.append((f, json.dumps(rule)))
    return tuple(out)


def _fields_of(encoded) -> set[str]:
    """The field names a formula of the data is written in."""
    if isinstance(encoded, str):
        return {encoded}
    names: set[str] = set()
    for _, powers, floors in encoded if isinstance(encoded, list) else ():
        names.update(name for name, _ in powers)
        for top, bottom, *_ in floors:
            names.update(numerator_names(top) + numerator_names(bottom))
    return names


def settings(config: Mapping[str, Any], head: str | None, overrides: Mapping[str, Any] | None, source: str):
    """The :class:`~symparams.families.config.Settings` of a config.json whose type only the data covers."""
    from .config import ConfigReader, Settings, model_name

    model_type = config["model_type"]
    cls = class_of(model_type, head, source)
    config = as_held(entries(model_type)[cls], config, source)  # a file as its class writes it, read back
    given = set(overrides or {})
    config, rest = with_values_set(entries(model_type)[cls], config, overrides)
    where, overrides = _with_values_written(source, overrides, rest), rest
    chosen = as_given(entries(model_type)[cls], config, where)
    branch = _branch_read(chosen, ConfigReader(config, where, head), where)
    entry = in_branch(chosen, branch)
    reading = read_config(entry, ConfigReader(config, where, head), where)
    flag_defaults = _flag_defaults(model_type, reading.flags, config, where)
    heads, heads_numbers = _heads_met(model_type, ConfigReader(config, where, head), where, branch)
    numbers = {**heads_numbers, **reading.numbers}
    fam = family(model_type, cls, tuple(sorted(numbers.items())), flag_defaults, heads, branch,
                 left_out(entry, ConfigReader(config, where, head), overrides), reading.costs_refused)
    given_values, given_switches = fam.split(overrides or {}, model_type)
    verified = entry["verification"]["exact"]
    note = f"inferred from transformers {version()} meta-device builds, verified on {verified} configurations"
    return Settings(fam, {**reading.values, **given_values}, {**dict(flag_defaults), **given_switches},
                    fam.check_head(head), model_name(source), frozenset(reading.values) - given,
                    (note,))


def _with_values_written(source: str, overrides: Mapping[str, Any] | None, rest: Mapping[str, Any]) -> str:
    """``source`` named with the values written into it (``config.json with H=512``): a refusal then says what
    was set, which the file itself may not hold."""
    written = [f"{k}={v}" for k, v in (overrides or {}).items() if k not in rest]
    return f"{source} with {', '.join(written)}" if written else source


def reading_of(config: Mapping[str, Any], entry: dict) -> Reading:
    """What ``config`` says to ``entry``'s formula (on the branch the config is on), refused outside its
    conditions: the reading of a config.json for one class of the data, as :func:`settings` reads it."""
    from .config import ConfigReader

    head = None if entry["class"] == "base" else entry["class"]
    entry = as_given(entry, config, "config")
    branch = _branch_read(entry, ConfigReader(config, "config", head), "config")
    return read_config(in_branch(entry, branch), ConfigReader(config, "config", head), "config")


def _branch_read(entry: dict, reader, source: str) -> tuple:
    """:func:`branch_of` for a config read with the entry's aliases."""
    return branch_of(entry, _unaliased(reader, entry, source))


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

    config = as_held(entry, config, source)
    reader, entry = ConfigReader(config, source), as_given(entry, config, source)
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


def _heads_met(model_type: str, reader, source: str, branch: tuple = ()) -> tuple[tuple[str, ...], dict]:
    """The LM classes inferred exactly whose conditions the config meets, in the formula's ``branch`` (the others
    are no head of its model: ``--head`` names the condition), and the numbers they read: a head's own field
    (RemBERT's ``output_embedding_size``) is one the base model's reading never asks for."""
    met, numbers = [], {}
    for cls in HEADS:
        entry = entries(model_type).get(cls)
        if entry is None or not entry["exact"]:
            continue
        entry = as_given(entry, reader.data, source)
        try:
            numbers.update(read_config(in_branch(entry, branch), reader, source).numbers)
        except SymparamsError:
            continue
        met.append(cls)
    return tuple(met), numbers


def _flag_defaults(model_type: str, flags: dict, config: Mapping[str, Any], source: str) -> tuple:
    """Every class's flags at the config's values (else their defaults), so another head reads them too."""
    from .config import flattened

    out, held = dict(flags), config
    config = flattened(config)
    for entry in (as_given(e, held, source) for e in entries(model_type).values() if e["exact"]):
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
