"""The last check of a formula as shipped: configs read by ``count --config``'s own reader, against real builds.

The engine verifies each formula on configurations its own discovery drew.
This check starts from the stored entry instead, the one ``count --config``
reads: random config.json files around the type's defaults (sizes kept,
multiplied, moved by a little or halved, layer and expert counts small,
flags at random, fields the formula calls irrelevant moved too, fields the
config computes left out), each written in full (as ``save_pretrained``
writes one) or with only the keys it sets (as many hub files are; one in two
of those sets a new layer count without the per-layer lists, which the config
class then computes by its own rule).  Every
one the reader counts (:func:`symparams.families.inferred.counted`, the
conditions applied) and transformers builds must have the same count; a
refusal is no answer, and a config transformers cannot build is no question.
So must the default config.json with one key set to what no draw of sizes
gives (:func:`odd_values`: a per-layer list of kinds, a mapping, a layer's
overrides), which a reader that read it as nothing would count wrong.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

from ...core.errors import SymparamsError
from ...families.config import flattened
from ...families.inferred import counted, expanded, kinds_listed, parse_relation
from ...families.inferred_tree import TOP_K_FIELDS
from .computed import drawn_float, floats_of
from .layers import KIND, per_layer_lists
from .meta import meta_device
from .products import solve_products
from .probing import (Builder, attribute, config_class_of, config_for_class, configure, libraries, nested,
                      observation_of, quiet, relisted, retiled, unwritten)

#: configs compared per class, and draws tried to find them
COMPARED, TRIES = 10, 60
#: the largest layer and expert counts drawn (builds cost time per module)
MOST_LAYERS, MOST_EXPERTS = 6, 8


@dataclass(frozen=True)
class Audit:
    """How many configs the reader counted and transformers built, and the first that differ."""

    compared: int
    mismatches: tuple = ()  # (config values, the reader's count, transformers' count, the formula's branch key)

    @property
    def reason(self) -> str | None:
        if not self.mismatches:
            return None
        values, ours, real, _ = self.mismatches[0]
        shown = ", ".join(f"{k}={v}" for k, v in sorted(values.items()))[:300]
        return (f"a config its conditions admit is counted {ours}, transformers builds {real} "
                f"({len(self.mismatches)} of {self.compared} read as count --config reads them; {shown})")


def audit(entry: dict, n: int = COMPARED, tries: int = TRIES) -> Audit:
    """Check one class's stored entry (its defaults and ``follows`` filled in) as :mod:`this module <.audit>`
    says."""
    model_type, cls = entry["model_type"], entry["class"]
    rng = random.Random(f"{model_type}/{cls}")
    builder = Builder(model_type, cls)
    # a field the parent computes into a sub-config is left to it, as the draws move the fields it follows
    default = {**unwritten(model_type, configure(model_type, {}, cls).to_dict()), "model_type": model_type}
    flat = flattened(default)
    compared, wrong = 0, []
    for attempt in range(tries):
        if compared == n:
            break
        values = draw(entry, rng, flat)
        config = written(default, values, sparse=attempt % 2 == 1, lists=attempt % 4 != 3)
        try:
            ours, key = counted(entry, config)
        except SymparamsError:
            continue  # outside the conditions: refused, no number to check
        real = built(builder, config)
        if real is None:
            continue
        compared += 1
        if ours != real:
            wrong.append((values, ours, real, key))
    return Audit(compared, tuple(wrong + odd_mismatches(entry, default, builder)))


def odd_mismatches(entry: dict, default: dict, builder: Builder) -> list[tuple]:
    """The configs of :func:`odd_values` (the class's ``default`` config.json, one key set to one) that the reader
    counts and transformers builds otherwise: (the values, the reader's count, transformers', the branch key)."""
    wrong = []
    for values in odd_values(flattened(default)):
        config = copy.deepcopy(default)
        config.update({k: v for k, v in values.items() if "." not in k})
        config.update(nested(default, {k: v for k, v in values.items() if "." in k}))
        try:
            ours, key = counted(entry, config)
        except SymparamsError:
            continue  # refused: no number to check
        real = built(builder, config)
        if real is not None and ours != real:
            wrong.append((values, ours, real, key))
    return wrong


def odd_values(flat: dict) -> list[dict]:
    """Values no draw of sizes gives, one key each, which a reader may take for another model if it reads them as
    nothing: each per-layer list of kinds with its first layer of the next kind (Recurrent Gemma's
    ``block_types``, which transformers 5 saves), each mapping with every whole number in it doubled
    (DeepSeek-V4's ``compress_rates``), the overrides of every layer at once (Gemma 4's ``per_layer_config.5``).

    >>> odd_values({"layer_types": ["conv", "attention", "conv"], "rates": {"a": 4}, "id2label": {"0": "x"},
    ...             "per_layer_config.1": {"head_dim": 8}, "per_layer_config.3": {"head_dim": 8}})
    [{'layer_types': ['attention', 'attention', 'conv']}, {'rates': {'a': 8}}, {'per_layer_config.1': {'head_dim': 16}, 'per_layer_config.3': {'head_dim': 16}}]
    """
    out, layers = [], {}
    for key, value in flat.items():
        kinds = kinds_listed(value) if isinstance(value, list) else None
        parent, _, name = key.rpartition(".")
        if kinds and len(set(kinds)) > 1:
            out.append({key: next_kind_first(kinds)})
        elif isinstance(value, dict) and name not in LABEL_MAPS and (more := bumped(value)) != value:
            if name.isdigit():  # a layer's overrides: all layers' at once (transformers wants one kind alike)
                layers.setdefault(parent, {})[key] = more
            else:
                out.append({key: more})
    return out + list(layers.values())


#: the mappings every config holds that shape nothing (its classifier's labels)
LABEL_MAPS = ("id2label", "label2id")


def next_kind_first(kinds: list) -> list:
    """A per-layer list of kinds with its first layer of the next kind (in sorted order): how many layers each
    kind has changes.

    >>> next_kind_first(["conv", "conv", "attention", "conv"])
    ['attention', 'conv', 'attention', 'conv']
    """
    ordered = sorted(set(kinds))
    return [ordered[(ordered.index(kinds[0]) + 1) % len(ordered)], *kinds[1:]]


def bumped(value):
    """``value`` with every whole number in it doubled (in a mapping or list, nested): a width that must be even
    or divide another stays so."""
    if isinstance(value, dict):
        return {k: bumped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [bumped(v) for v in value]
    return value * 2 if isinstance(value, int) and not isinstance(value, bool) else value


def draw(entry: dict, rng: random.Random, flat: dict) -> dict[str, Any]:
    """Random values for one of the entry's formulas (itself or a branch), its relations made to hold."""
    formula = rng.choice([entry, *entry.get("branches", ())])
    conditions = formula.get("conditions", {})
    values: dict[str, Any] = {}
    computed = entry.get("computed", {})
    for name, symbol in formula["symbols"].items():
        if name in computed:
            continue  # a width the modeling code computes: moved by the fields and floats it is computed from
        default = entry.get("defaults", {}).get(name, flat.get(name))
        lowest = conditions.get("minimum", {}).get(name, 0)
        if not isinstance(default, int) or isinstance(default, bool):
            default = max(lowest, 16)  # a field set only in this branch
        values[name] = max(lowest, _moved(name, symbol, default, rng))
    values.update({name: rng.random() < 0.5 for name in formula.get("flags", {})})
    for name, default in floats_of(computed, entry.get("defaults", {})).items():
        if rng.random() < 0.5:
            values[name] = drawn_float(default, rng)
    for name in conditions.get("irrelevant", ()):
        if isinstance(flat.get(name), int) and not isinstance(flat[name], bool) and flat[name] > 0 \
                and rng.random() < 0.3:
            values[name] = flat[name] + 1
    for _ in range(3):  # a relation made to hold may break one made before it: a few rounds
        for text in conditions.get("relations", ()):
            _hold(parse_relation(text), values, rng)
    for listed, size in conditions.get("sums", {}).items():
        _add_up(listed, size, values, flat)
    _top_k_within(values, flat)
    write_kinds(values, flat, rng)
    for listed, count in per_layer_lists(flat).items():
        if listed in entry.get("kinds", {}) and rng.random() < 0.3:  # the kinds in other places, as many of each
            entries = expanded(retiled(flat[listed], values.get(count, flat[count])))
            values[listed] = relisted(flat[listed], rng.sample(entries, len(entries)))
    for listed, rule in entry.get("repeats", {}).items():  # a list the config computes from a field, written out
        layers = values.get(rule["layers"], flat.get(rule["layers"]))
        if rule["field"] in values and isinstance(layers, int) and rng.random() < 0.5:
            values[listed] = [values[rule["field"]]] * layers
    for listed, held in entry.get("indexes", {}).items():
        if rng.random() < 0.3:
            _elsewhere(entry["model_type"], listed, held["layers"], values, rng)
    for name, rule in entry.get("follows", {}).items():
        if rule is not None and name in values and not formula.get("conditions", {}).get("given") \
                and rng.random() < 0.5:
            del values[name]  # left out: the config computes it, the reader by the rule the data holds
    return values


def _add_up(listed: str, size: str, values: dict, flat: dict) -> None:
    """A list whose entries must add up to a size (Reformer's axial position widths), written for the size drawn
    as the fit had it: the default's entries, the last taking up the size's move."""
    default = list(flat.get(listed) or ())
    if isinstance(values.get(size), int) and default:
        values[listed] = [*default[:-1], values[size] - sum(default[:-1])]


def _top_k_within(values: dict, flat: dict) -> None:
    """A default top-k above the routed experts drawn, lowered to them: it shapes nothing, and a config class
    refuses more experts per token than there are (Qwen4-Exp's 10 of 512, drawn at most 8)."""
    for name, top_k in flat.items():
        prefix, _, leaf = name.rpartition(".")
        routed = [v for k, v in values.items() if k.rpartition(".")[0] == prefix
                  and k.rpartition(".")[2].endswith("experts") and "shared" not in k and isinstance(v, int)]
        if leaf in TOP_K_FIELDS and isinstance(top_k, int) and routed and values.get(name, top_k) > min(routed):
            values[name] = min(routed)


def _elsewhere(model_type: str, listed: str, layers: str, values: dict, rng: random.Random) -> None:
    """A list of layer indices (Llama 4's ``moe_layers``) written with as many layers as the config class lists
    for ``values``, drawn at random among them."""
    try:
        config = configure(model_type, values)
    except Exception:  # values the config class refuses: the build will not answer either
        return
    count, entries = attribute(config, layers), attribute(config, listed)
    if isinstance(count, int) and isinstance(entries, (list, tuple)):
        below = {i for i in entries if isinstance(i, int) and 0 <= i < count}  # a default list may go beyond
        values[listed] = sorted(rng.sample(range(count), len(below)))


def write_kinds(values: dict, flat: dict, rng: random.Random) -> None:
    """Kind counts drawn (``list#kind``) written as a per-layer list of those kinds in a random order, and its
    layer count, as a config.json holds them."""
    counts = {name: values.pop(name) for name in [n for n in values if KIND in n]}
    lists = per_layer_lists(flat)
    for listed in dict.fromkeys(name.partition(KIND)[0] for name in counts):
        entries = [name.partition(KIND)[2] for name, n in counts.items() if name.startswith(listed + KIND)
                   for _ in range(n)]
        if entries and listed in lists:
            values[listed] = relisted(flat[listed], rng.sample(entries, len(entries)))
            values[lists[listed]] = len(entries)


def _moved(name: str, symbol: str, default: int, rng: random.Random) -> int:
    leaf = name.rpartition(".")[2]
    if "layer" in leaf or symbol in ("L", "L_d"):
        return rng.randint(0 if default == 0 else 1, MOST_LAYERS)
    if "expert" in leaf and default > MOST_EXPERTS:
        return rng.randint(1, MOST_EXPERTS)
    floor = 0 if default == 0 else 1
    return rng.choice([default, default * rng.randint(2, 3), max(floor, default + rng.randint(-2, 2)),
                       max(floor, default // 2)])


def _hold(relation: tuple[str, str, str], values: dict, rng: random.Random) -> None:
    left, kind, right = relation
    if "*" in left or "*" in right:  # a product equality: solved as the engine's draws solve it
        solve_products([(tuple(left.split("*")), tuple(right.split("*")))], values, rng)
        return
    if left not in values or right not in values:
        return
    a, b = values[left], values[right]
    if kind == "divides" and (a <= 0 or b % a):
        values[right] = a * rng.randint(1, 3)
    elif kind == "equals" and a != b:
        values[right] = a
    elif kind == "differs" and a == b:
        values[right] = a + 1
    elif kind == "below" and not a < b:
        values[right] = a + rng.randint(1, 3)
    elif kind == "atleast" and not a >= b:
        values[right] = max(1, a - rng.randint(0, 2))


def written(default: dict, values: dict, sparse: bool, lists: bool = True) -> dict:
    """A config.json with ``values`` (dotted keys for sub-configs): the full default with them, or (``sparse``)
    only them and the model type; a per-layer list of the default's layer count retiled to a new count, as a
    real file has it (GPT-Neo's ``attention_types``), or, sparse and not ``lists``, left for the config class
    to compute."""
    plain = {k: v for k, v in values.items() if "." not in k}
    dotted = {k: v for k, v in values.items() if "." in k}
    if sparse and not lists:  # the layer count alone, as a hand-written file may give it
        counts = per_layer_lists(flattened(default))
        plain = {k: v for k, v in plain.items() if counts.get(k) not in plain}
    config = {"model_type": default["model_type"]} if sparse else copy.deepcopy(default)
    config.update(plain)
    for key, value in plain.items():
        old = default.get(key)
        if "layer" in key and isinstance(old, int) and old != value and value > 0 and (lists or not sparse):
            config.update({k: retiled(v, value) for k, v in default.items()
                           if k not in values and (entries := expanded(v)) is not None and len(entries) == old})
    config.update(nested(default, dotted))
    return config


def built(builder: Builder, config: dict) -> int | None:
    """The count of the model transformers builds from ``config`` on the meta device (None: it cannot)."""
    libraries()
    try:
        with quiet():
            hf = config_class_of(config["model_type"]).from_dict(dict(config))
            with meta_device():
                model = builder.model_class._from_config(config_for_class(builder.model_class, hf))
    except Exception:  # whatever transformers raises for this config: it is no config to compare
        return None
    return observation_of(model).total
