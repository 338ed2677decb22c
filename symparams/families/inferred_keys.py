"""Keys of a config.json an inferred formula does not read, refused in one line where they may change shapes: a
whole-number key naming a size the formula was not fitted over, a key the config class reads beside its fields,
a list of whole numbers other than the default's (a list of layer indices naming another number of layers),
a flag left out while a text it may follow is changed; and a file its config class writes otherwise than it
holds it, read back as the class does (:func:`as_held`)."""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping

from ..core.errors import SymparamsError
from .inferred_conditions import expanded
from .inferred_data import OutsideConditions, data, formula
from .inferred_widths import names_of

#: words of a whole-number key that names a size (a key the formula was not fitted over that names one is refused)
SIZE_WORDS = ("dim", "size", "head", "layer", "expert", "rank", "bucket", "group", "width", "embed", "kv", "vocab")
#: words of keys that name no size though they hold one of those words (dropout rates, rope bases, generation
#: settings, expert-parallel degrees)
NOT_SIZES = ("drop", "rope", "ngram", "ep_size")


def refuse_unknown_sizes(entry: dict, config: Mapping[str, Any], source: str) -> None:
    """One line for a whole-number key that names a size and that the formula was not fitted over: the modeling
    code may read it (a head width read with ``getattr``, absent from the default config) and change shapes.
    Other keys (rope bases, context lengths, generation settings) are taken to change none."""
    conditions = entry.get("conditions", {})
    known = {*entry["symbols"], *entry.get("flags", {}), *conditions.get("fixed", {}), *entry.get("follows", {}),
             *(n for rule in entry.get("computed", {}).values() for n in names_of(rule)),
             *(k for part in ("irrelevant", "derived", "unset") for k in conditions.get(part, ()))}
    for key, default in entry.get("legacy", {}).items():
        value = config.get(key)
        # a number or a text (a text may set the layers); a mapping is read as given
        if isinstance(value, (int, str)) and value != default and key not in known \
                and not any(w in key for w in NOT_SIZES):
            raise OutsideConditions(f"{source}: key {key} is {_json(value)}; transformers' config class reads it "
                                    f"beside its fields, and the inferred formula holds only for its default "
                                    f"{_json(default)}")
    for key, default in entry.get("lists", {}).items():
        value = config.get(key)
        # a list whose entries must add up to a size was fitted with its last entry taking up the size's moves:
        # the others are held, and the sum is checked with the size (see inferred_conditions._check_sums)
        kept = slice(-1) if key in conditions.get("sums", {}) else slice(None)
        if value is not None and key not in entry.get("indexes", {}) and (
                not isinstance(value, (list, tuple)) or len(value) != len(default)
                or list(value)[kept] != default[kept]):
            but = " but for its last entry" if kept.stop else ""
            raise OutsideConditions(f"{source}: key {key} is {_json(value)}; the inferred formula holds only for "
                                    f"its default {_json(default)}{but}")
    for key, default in entry.get("mappings", {}).items():
        if config.get(key) is not None and config[key] != default:
            raise OutsideConditions(f"{source}: key {key} is {_json(config[key])}; the inferred formula holds only "
                                    f"for its default {_json(default)}")
    for key, rule in entry.get("per_layer", {}).items():
        _refuse_other_overrides(key, rule, config, source)
    read = _read_by_name(entry["model_type"])
    for key, value in config.items():
        name = key.rpartition(".")[2]  # a sub-config's field is judged by its own name
        if isinstance(value, int) and not isinstance(value, bool) and key not in known and "token_id" not in key \
                and name not in data()["ignored"] and not name.startswith("_") and any(w in key for w in SIZE_WORDS) \
                and not any(w in key for w in NOT_SIZES) and ("." in key or read is None or key in read):
            raise OutsideConditions(f"{source}: key {key} is outside the inferred formula's fields (it may change "
                                    f"shapes the formula does not follow)")


def _read_by_name(model_type: str) -> frozenset | None:
    """The names transformers' code may read from a config of ``model_type`` (its shared modules' and its own
    packages'); None where the data does not hold them.  A top-level key outside them is stored on the config and
    read by nothing (LFM2's hub files carry ``block_dim``, which transformers 5 reads nowhere)."""
    names = data()["read"]
    if names is None or model_type not in names["types"]:
        return None
    return frozenset(names["shared"]) | frozenset(names["types"][model_type])


def _refuse_other_overrides(key: str, rule: dict, config: Mapping[str, Any], source: str) -> None:
    """One line for a config.json's per-layer overrides (transformers' ``per_layer_config``, read as
    ``per_layer_config.5`` keys) other than the formula holds: each layer of a kind in the file's own list of kinds
    overridden as the default overrides that kind (Gemma 4's full-attention layers 512 wide), or, where the
    default's follow no kinds, the default's layers.  Left out, transformers computes the default's."""
    given = {int(k.rpartition(".")[2]): v for k, v in config.items()
             if k.startswith(key + ".") and k.rpartition(".")[2].isdigit()}
    if not given:
        return
    kinds = expanded(config.get(rule["list"])) if "by_kind" in rule else None
    if "by_kind" in rule and kinds is None:
        raise OutsideConditions(f"{source}: key {key} is given without {rule['list']}; the inferred formula holds "
                                f"only where the layers it overrides are read from that list (give {rule['list']})")
    wanted = {i: rule["by_kind"][k] for i, k in enumerate(kinds) if k in rule["by_kind"]} if kinds is not None \
        else {int(i): v for i, v in rule["layers"].items()}
    if given != wanted:
        held = f"each layer of a kind {rule['list']} names as the default does, {_json(rule['by_kind'])}" \
            if kinds is not None else f"the default's overrides, {_json(rule['layers'])}"
        raise OutsideConditions(f"{source}: key {key} overrides other layers or fields; the inferred formula holds "
                                f"only for {held[:160]}")


def refuse_unrepeated_lists(entry: dict, reader, known: Mapping[str, int], source: str) -> None:
    """One line for a per-layer list the config class computes as one of the formula's fields on each layer
    (Laguna's ``num_attention_heads_per_layer``) that a config.json gives otherwise: a layer with another value
    builds other shapes than the formula counts (one field for every layer).  The layer count is checked where the
    config.json gives it."""
    for key, rule in entry.get("repeats", {}).items():
        if not reader.has(key) or reader.data[key] is None:
            continue  # left out: the config class computes it as the field on each layer, as the formula counts
        value, field, layers = reader.data[key], rule["field"], rule["layers"]
        if not isinstance(value, (list, tuple)) or any(v != known[field] for v in value) \
                or (reader.has(layers) and len(value) != reader.data[layers]):
            raise OutsideConditions(f"{source}: key {key} is {_json(value)}; the inferred formula holds only where it "
                                    f"is {field} ({known[field]}) on each of the {layers} layers")


def check_indexes(indexes: dict, reader, known: Mapping[str, int], source: str) -> None:
    """One line for a list of layer indices the config.json writes (Llama 4's ``moe_layers``) that does not name, of
    the layers there are, as many as the formula counts (as many as transformers lists when the file leaves it
    out): the formula counts the layers listed, whichever they are.  A list naming a layer twice or one beyond the
    last is refused too: a model may count its entries rather than ask of each layer."""
    import sympy as sp

    where = f"{source}: outside the inferred formula's conditions:"
    for listed, held in sorted(indexes.items()):
        if not reader.has(listed):
            continue
        value, layers = reader.data[listed], known.get(held["layers"])
        if layers is None and reader.has(held["layers"]):  # a layer count the formula does not read (Zamba2's
            layers = reader.int(held["layers"], minimum=1)  # counts its kinds): the file's, as transformers takes it
        if layers is None:
            raise OutsideConditions(f"{where} key {listed} is given without {held['layers']}: give both")
        if not isinstance(value, (list, tuple)) \
                or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in value):
            raise OutsideConditions(f"{where} key {listed} is {_json(value)}, not indices of the {layers} layers "
                                    f"{held['layers']} gives")
        if len(set(value)) != len(value):
            raise OutsideConditions(f"{where} key {listed} names a layer twice")
        count = held["count"]
        wanted = count if isinstance(count, int) else formula(count, {k: sp.Integer(int(v)) for k, v in known.items()})
        if len(value) != wanted:
            raise OutsideConditions(f"{where} {listed} names {len(value)} layers, the formula holds only with {wanted}"
                                    f" (as many as transformers lists when it is left out)")


def refuse_flags_text_may_set(entry: dict, reader, source: str) -> None:
    """One line for a flag the config.json leaves out while a text key differs from the default config's: the
    config class may compute the flag from it (T5's ``is_gated_act`` from ``feed_forward_proj``)."""
    texts = entry.get("texts", {})
    held = [k for k, v in entry.get("conditions", {}).get("fixed", {}).items() if isinstance(v, bool)]
    missing = [f for f in [*entry.get("flags", {}), *held] if not reader.has(f)]
    changed = [k for k, v in texts.items() if reader.has(k) and reader.data[k] != v]
    if missing and changed:
        raise SymparamsError(f"{source}: key {missing[0]} is missing and key {changed[0]} is not the default "
                             f"{_json(texts[changed[0]])}; transformers may compute the one from the other: give "
                             f"{missing[0]}")


def _json(value) -> str:
    return json.dumps(value)


def as_held(entry: dict, config: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    """The config.json as its class holds it, where the class writes some fields otherwise (``written``): Dory's
    writes its layer counts doubled and an ``"mlp"`` entry after each layer of ``layer_types``, and halves them
    again on reading a file whose list holds one.  Such a file's fields are divided back and those entries
    dropped; one refused where a field is missing or does not divide (the class would halve a default or round
    down); a file without them is read as it is."""
    written = entry.get("written")
    entries = config.get(written["list"]) if written else None
    if not isinstance(entries, list) or not any(isinstance(e, str) and e in written["marks"] for e in entries):
        return config
    mark = next(e for e in entries if isinstance(e, str) and e in written["marks"])
    held = {**config, written["list"]: [e for e in entries if e not in written["marks"]]}
    for name, factor in written["fields"].items():
        value = config.get(name)
        if name in written["computed"] and value is None:
            continue  # the class computes it from the others
        if not isinstance(value, int) or isinstance(value, bool) or value % factor:
            raise OutsideConditions(f"{source}: key {written['list']} holds {mark!r}, so transformers reads {name} "
                                    f"as written {factor} times over, and {name} is {_json(value)}: not counted")
        held[name] = value // factor
    return held


def as_given(entry: dict, config: Mapping[str, Any], source: str) -> dict:
    """``entry`` with the defaults transformers takes for ``config``: a sub-config the config.json gives (a dict)
    is built with its own class's defaults for the fields it leaves out (``sub_defaults``: an encoder–decoder's
    decoder given without ``is_decoder`` is no decoder) and its own rules (``sub_follows``: a Llama text config's
    ``head_dim`` is ``hidden_size // num_attention_heads``), where one left out altogether takes the parent's
    (``defaults``, ``follows``).  A field whose value the data cannot say (null there), or another key the class
    then takes otherwise than the formula was fitted with (``sub_held``: a NemotronH text config's layer pattern),
    is refused by name.  A list given as text (a NemotronH text config's ``hybrid_override_pattern``) is given."""
    patterns = data()["renamed"].get("patterns", {}).get(entry["model_type"], {})
    aliases = {**entry.get("aliases", {}), **{key: listed for key, (listed, _) in patterns.items()}}
    values, rules = ({name: value for name, value in entry.get(part, {}).items()
                      if _given_without(config, name, aliases)} for part in ("sub_defaults", "sub_follows"))
    held = [name for name in entry.get("sub_held", ()) if _given_without(config, name, aliases)]
    unknown = [*(name for name, value in {**values, **rules}.items() if value is None), *held]
    if unknown:
        raise OutsideConditions(f"{source}: key {unknown[0]} is left out of its sub-config, whose class then takes "
                                f"another value than the inferred formula knows: give it")
    out = dict(entry)
    if values:
        out["defaults"] = {**entry.get("defaults", {}), **values}
    if rules:
        out["follows"] = {**entry.get("follows", {}), **rules}
    if entry.get("branches"):
        out["branches"] = [as_given(branch, config, source) for branch in entry["branches"]]
    return out


def _given_without(config: Mapping[str, Any], name: str, aliases: Mapping[str, str]) -> bool:
    """Whether ``config`` gives the sub-config of the dotted field ``name`` as a dict that leaves it out (under
    every name the class accepts for it)."""
    head, _, leaf = name.rpartition(".")
    holder: Any = config
    for part in head.split("."):
        holder = holder.get(part) if isinstance(holder, Mapping) else None
    if not isinstance(holder, Mapping):
        return False
    return not any(value is not None and aliases.get(f"{head}.{key}", f"{head}.{key}") == name
                   for key, value in holder.items())


def with_values_set(entry: dict, config: Mapping[str, Any],
                    overrides: Mapping[str, Any] | None) -> tuple[Mapping[str, Any], dict]:
    """``config`` with each value of ``overrides`` that names a field of the type (``H`` is ``hidden_size``, or
    ``text_config.hidden_size``) written into it, and the overrides left: switches, symbols left free (None, for
    ``solve`` and ``sweep``), and values that name no field (a width computed with a float, a layer count of one
    kind of a list), given to the model as they are.

    ``--set H=512`` then means what editing the config.json means: a field the file leaves out and transformers
    computes from ``hidden_size`` (``head_dim``) moves with it, one the file gives stays, and a sub-config the file
    leaves out is written with that one field, so its class's own defaults fill the others, as transformers does.
    A field the file spells under another name the class accepts is written under its own name instead.

    >>> entry = {"symbols": {"text_config.hidden_size": "H"}, "aliases": {}}
    >>> with_values_set(entry, {"model_type": "x"}, {"H": "512", "bias": "true"})
    ({'model_type': 'x', 'text_config': {'hidden_size': 512}}, {'bias': 'true'})
    >>> entry = {"symbols": {"d_model": "H"}, "aliases": {"hidden_size": "d_model"}}
    >>> with_values_set(entry, {"hidden_size": 256, "n_head": 4}, {"H": 512})
    ({'n_head': 4, 'd_model': 512}, {})
    """
    from ..core.values import parse_value

    if not overrides:
        return config, {}
    edited, left = copy.deepcopy(dict(config)), {}
    for key, raw in (overrides or {}).items():
        found = _field_named(entry, key) if raw is not None else None  # None: a symbol left free
        value = parse_value(key, raw) if found is not None else None
        if found is None or not value.is_Integer:
            left[key] = raw
            continue
        field_name, aliases = found
        head, _, leaf = field_name.rpartition(".")
        holder = edited
        for part in head.split(".") if head else ():
            if not isinstance(holder.get(part), dict):
                holder[part] = {}
            holder = holder[part]
        for spelled in [k for k in holder if aliases.get(_joined(head, k), _joined(head, k)) == field_name]:
            del holder[spelled]  # the field under any name the class accepts: the value set is the one read
        holder[leaf] = int(value)
    return edited, left


def _joined(head: str, key: str) -> str:
    return f"{head}.{key}" if head else key


def _field_named(entry: dict, name: str) -> tuple[str, dict] | None:
    """The config field a symbol stands for in the class's formula or in one of its branches (GPT-2's
    ``n_inner``, which only the branch for it set counts by), with the class's aliases; None where it stands for
    none a config.json can hold."""
    for side in [entry, *entry.get("branches", ())]:
        for field_name, symbol in side["symbols"].items():
            if symbol == name and "#" not in field_name and field_name not in side.get("computed", {}):
                return field_name, entry.get("aliases", {})
    return None
