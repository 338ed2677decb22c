"""What a sub-config's field is when a config.json gives the sub-config but leaves the field out.

transformers fills a sub-config left out altogether from its parent's
defaults (``EncoderDecoderConfig`` builds its default decoder with
``is_decoder=True, add_cross_attention=True``), but builds a sub-config given
as a dict with the sub-config class's own defaults (a BERT config's
``is_decoder`` is false; a Llama text config computes ``head_dim`` from
``hidden_size`` and ``num_attention_heads``), and a parent may then write
fields of its own into it.  The data file's ``defaults`` (and ``follows``) are
the first; this module finds the second by asking the config class itself,
one field at a time: the default config's sub-config dict without that field,
built as ``AutoConfig.for_model`` builds a config.json, and the field read
back, again with each other whole number of that dict changed.  Used by
``infer_formulas.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import random

import sympy as sp

from symparams.analysis.inference.probing import (_nested_defaults, attribute, configure, parent_written, per_layer,
                                                  quiet)
from symparams.analysis.inference.seeds import SEEDS
from symparams.families.config import flattened

#: a value the config class could not be asked for, or that no rule in the formula's fields gives: read, refused
UNKNOWN = None


def with_sub_defaults(entry: dict) -> dict:
    """An exact entry (and each of its branches) with ``sub_defaults`` (a field's value when its sub-config is
    given without it, where it is not the default config's), ``sub_follows`` (a size the sub-config's class
    then computes from others: its rule in the formula's fields) and ``sub_held`` (other keys it then takes
    otherwise, which change the count) found again; each left out where empty."""
    out = {k: v for k, v in entry.items() if k not in ("sub_defaults", "sub_follows", "sub_held")}
    out.update(sub_fields(entry))
    if entry.get("branches"):
        out["branches"] = [with_sub_defaults(branch) for branch in entry["branches"]]
    return out


def sub_fields(entry: dict) -> dict:
    """``{"sub_defaults": ..., "sub_follows": ..., "sub_held": ...}`` of one formula (see :func:`with_sub_defaults`), the empty
    ones left out.  A field the parent writes into the sub-config, or one the engine had to seed, keeps the
    default config's value (the parent computes it either way; a seeded value has no default)."""
    model_type = entry["model_type"]
    skipped = parent_written(model_type) | set(flattened(SEEDS.get(model_type, {})))
    values, rules = {}, {}
    for name, absent in sorted(entry.get("defaults", {}).items()):
        if "." not in name or "#" in name or name in skipped or name in entry.get("computed", {}):
            continue
        given = given_default(model_type, name)
        if given is _NOT_A_FIELD:
            continue
        if given is None and absent is not None:  # the class cannot say: its declared default must agree
            given = absent if _declared(model_type, name) == absent else UNKNOWN
        leaders = _leaders(model_type, name, given)
        if leaders:
            known = all(leader in entry["symbols"] for leader in leaders) and name in entry["symbols"]
            rules[name] = _fit(model_type, name, leaders) if known else UNKNOWN
        elif given != absent:
            values[name] = given
    held = held_keys(entry)
    return {k: v for k, v in (("sub_defaults", values), ("sub_follows", rules), ("sub_held", held)) if v}


#: keys of every config that shape no model
_NO_SHAPE = frozenset({"model_type", "transformers_version", "architectures", "_name_or_path", "dtype", "id2label",
                       "label2id", "problem_type", "output_attentions", "output_hidden_states", "return_dict"})


def held_keys(entry: dict) -> list[str]:
    """The keys of a sub-config the formula reads that are none of its fields (a NemotronH text config's layer
    pattern) but that, left out of a sub-config a config.json gives, take another value than the default config's
    and change the count: the formula was fitted with the default's, so such a file is refused by name."""
    from symparams.analysis.inference.probing import Builder

    model_type, conditions = entry["model_type"], entry.get("conditions", {})
    fields = {*entry.get("defaults", {}), *entry["symbols"], *entry.get("flags", {}), *entry.get("computed", {}),
              *(k for part in ("irrelevant", "derived", "unset") for k in conditions.get(part, ()))}
    builder, out = None, []
    for head in sorted({f.rpartition(".")[0] for f in [*entry["symbols"], *entry.get("defaults", {})] if "." in f}):
        holder = _dict_at(_nested_defaults(model_type), head) or {}
        for key, value in holder.items():
            name = f"{head}.{key}"
            if name in fields or key in _NO_SHAPE or isinstance(value, dict):
                continue
            given = given_default(model_type, name)
            if given is _NOT_A_FIELD or given == value:
                continue
            builder = builder or Builder(model_type, entry["class"])
            whole = copy.deepcopy(_nested_defaults(model_type))
            top = name.split(".")[0]
            full = builder.observe({top: whole[top]})
            _dict_at(whole, head).pop(key)
            without = builder.observe({top: whole[top]})
            if full is None or without is None or full.total != without.total:
                out.append(name)
    return out


_NOT_A_FIELD = object()


def given_default(model_type: str, name: str, changes: dict | None = None):
    """``name``'s value (dotted) in the config built from the default config's sub-config dict without it, with
    ``changes`` (other fields of that dict, by their own names); a per-layer list the dict holds of a changed
    or dropped field's length goes too (the class computes it again for its own count).  None where the class
    refuses that dict or cannot say (a per-layer field whose layers differ)."""
    head, _, leaf = name.rpartition(".")
    top = name.split(".")[0]
    whole = copy.deepcopy(_nested_defaults(model_type))
    holder = _dict_at(whole, head)
    if holder is None or leaf not in holder:
        return _NOT_A_FIELD
    for key, value in [(leaf, holder.pop(leaf)), *((k, holder[k]) for k in changes or {})]:
        if _whole(value):
            for listed in [k for k, v in holder.items() if per_layer(v, value)]:
                del holder[listed]
    holder.update(changes or {})
    try:
        with quiet():
            return attribute(configure(model_type, {top: whole[top]}), name)
    except Exception:  # whatever the config class raises for the dict
        return None


def _leaders(model_type: str, name: str, given) -> list[str]:
    """The other whole numbers of the sub-config (dotted) that move the value a left-out whole-number field
    takes (a width its class computes from others)."""
    if not _whole(given):
        return []
    head, _, leaf = name.rpartition(".")
    holder = _dict_at(_nested_defaults(model_type), head)
    out = []
    for key, value in holder.items():
        if key == leaf or key == "model_type" or not _whole(value):
            continue
        # multiples: a class may want a width divisible by another; one more only where both are refused
        held = [given_default(model_type, name, {key: other}) for other in (2 * value, 3 * value)]
        if held == [None, None]:
            held = [given_default(model_type, name, {key: value + 1})]
        if any(h not in (given, None) for h in held):
            out.append(f"{head}.{key}")
    return out


def _fit(model_type: str, name: str, leaders: list[str]):
    """The rule the left-out field follows, fitted exactly on the values the class computes at random values
    of ``leaders`` (the default's multiples, half of them jittered); None where none fits."""
    from symparams.analysis.inference.fitting import expression, fit
    from symparams.analysis.inference.result import encode_value

    head, _, leaf = name.rpartition(".")
    holder = _dict_at(_nested_defaults(model_type), head)
    base = {f: holder[f.rpartition(".")[2]] for f in leaders}
    # the other whole numbers scaled by lcm(1..8), so that a width the class wants divisible by a leader is
    others = {k: v * 840 for k, v in holder.items()
              if _whole(v) and v > 0 and k != leaf and f"{head}.{k}" not in leaders and "layer" not in k}
    rng = random.Random(f"{model_type}/{name}/given")
    points, values = [], []
    for _ in range(400):
        if len(points) == 40:
            break
        jitter = rng.random() < 0.5
        point = {f: max(1, v * rng.randint(1, 4) + rng.randint(-3, 3) if jitter else v * rng.randint(1, 8))
                 for f, v in base.items()}
        held = given_default(model_type, name, {**others, **{f.rpartition(".")[2]: v for f, v in point.items()}})
        if _whole(held):
            points.append(point)
            values.append(held)
    layers = frozenset(f for f in leaders if "layer" in f.rpartition(".")[2])
    found = fit(points, values, leaders, frozenset(), layers=layers) if len(points) >= 20 else None
    if found is None:
        return UNKNOWN
    return encode_value(sp.expand(expression(found, {f: sp.Symbol(f) for f in leaders})))


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _dict_at(whole: dict, head: str) -> dict | None:
    for part in head.split("."):
        whole = whole.get(part) if isinstance(whole, dict) else None
    return whole if isinstance(whole, dict) else None


def _declared(model_type: str, name: str):
    """The default the sub-config's class declares for a dotted field (None where it declares none)."""
    head, _, leaf = name.rpartition(".")
    with quiet():
        holder = attribute(configure(model_type, {}), head)
    if not dataclasses.is_dataclass(holder):
        return UNKNOWN
    declared = {f.name: f.default for f in dataclasses.fields(holder)}.get(leaf, dataclasses.MISSING)
    return UNKNOWN if declared is dataclasses.MISSING else declared
