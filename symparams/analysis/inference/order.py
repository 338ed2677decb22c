"""The order transformers registers a class's parameters in, and which of them are linear layers' weights.

An inferred entry lists its normalised parameter names sorted by name (the
fit needs no order).  A document walks the modules in the order the model
computes them, which is the order ``named_parameters()`` yields them in:
the order the modules were registered.  :func:`layout` reads it off one
default meta-device build of the class (and one with every flag on, for the
parameters a flag adds), together with the module each parameter belongs
to: the weight of an ``nn.Linear`` is stored ``[out, in]``, the documents
write ``[in, out]``, and no other tensor may be turned round.

The layout is kept in the entry as indices into its ``parameters``:
``order`` (the registration order) and ``modules`` (``linear``: the weights
of ``nn.Linear`` layers, ``embedding``: the tables of ``nn.Embedding``
layers), so the formulas themselves stay as they were.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ...families.inferred_tree import TIE_FIELD
from .meta import meta_device
from .probing import Builder, config_for_class, libraries, observation_of, quiet

#: a normalised name's list index (``*``, ``*2``) stands for an index (``3``, ``expert_3``) of the built model
_STAR = re.compile(r"(?<=\.)\*\d*(?=\.|$)|^\*\d*(?=\.)")


def _built(model_type: str, cls: str, values: Mapping[str, Any]):
    """The model of ``model_type``'s class ``cls`` built from ``values`` on the meta device."""
    libraries()
    builder = Builder(model_type, cls)
    with quiet():
        config = builder.config(values)
        with meta_device():
            return builder.model_class._from_config(config_for_class(builder.model_class, config))


def _module_kinds(model) -> dict[str, str]:
    """Each parameter's full name → ``linear`` or ``embedding`` where it is such a layer's weight."""
    from torch import nn

    out = {}
    for prefix, module in model.named_modules():
        kind = "linear" if isinstance(module, nn.Linear) else "embedding" if isinstance(module, nn.Embedding) \
            else None
        if kind is not None and isinstance(getattr(module, "weight", None), nn.Parameter):
            out[f"{prefix}.weight" if prefix else "weight"] = kind
    return out


def _pattern(name: str) -> re.Pattern:
    """The full names a normalised name stands for: ``layers.*.mlp`` matches ``layers.0.mlp``."""
    parts = _STAR.split(name)
    return re.compile(r"(?:[A-Za-z]+_)?\d+".join(re.escape(p) for p in parts) + r"\Z")


def observed(model_type: str, cls: str, values: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The normalised names of one build in registration order, and the kind of those that are a linear
    layer's or an embedding's weight."""
    model = _built(model_type, cls, values)
    names = list(observation_of(model).shapes)
    return names, kinds_of(model, names)


def kinds_of(model, names) -> dict[str, str]:
    """Of the normalised ``names`` of ``model``'s parameters, those that are a linear layer's weight
    (``linear``) or an embedding table (``embedding``)."""
    kinds = _module_kinds(model)
    full = [n for n, _ in model.named_parameters()]
    found = {}
    for name in names:
        pattern = _pattern(name)
        match = next((f for f in full if pattern.match(f)), None)
        if match is not None and match in kinds:
            found[name] = kinds[match]
    return found


def _placed(order: list[str], name: str) -> int:
    """Where a name no build showed goes: after the last ordered name of the module it shares most with."""
    parts = name.split(".")
    best, at = -1, len(order)
    for i, other in enumerate(order):
        common = next((k for k, (a, b) in enumerate(zip(parts, other.split("."))) if a != b),
                      min(len(parts), len(other.split("."))))
        if common >= best and common > 0:
            best, at = common, i + 1
    return at


def layout(entry: dict, builds: list[tuple[list[str], dict[str, str]]]) -> dict:
    """``entry`` with ``order`` and ``modules`` from ``builds`` (each :func:`observed`): the registration order of
    its parameters as the first build shows it, names only a later build shows (or none) placed beside their
    module's; as indices into ``parameters``."""
    names = [p[0] for p in entry["parameters"]]
    order = [name for name in builds[0][0] if name in names]
    kinds: dict[str, str] = {}
    for seen, found in builds:
        for name in seen:
            if name in names and name not in order:
                order.insert(_placed(order, name), name)
        kinds.update({k: v for k, v in found.items() if k not in kinds})
    for name in sorted(set(names) - set(order)):
        order.insert(_placed(order, name), name)
    index = {name: i for i, name in enumerate(names)}
    modules = {kind: sorted(index[n] for n, k in kinds.items() if k == kind and n in index)
               for kind in ("embedding", "linear")}
    return {**entry, "order": [index[n] for n in order], "modules": modules}


def _builds(model_type: str, cls: str, base: dict, flags: Mapping[str, str], defaults: Mapping[str, Any]) -> list:
    """:func:`observed` at ``base`` (the defaults, or a branch's lowest values), with every flag on that is
    off by default (the names a flag adds), and with tied word embeddings untied (the LM head a tied build
    lists under the embeddings' name only)."""
    out = [observed(model_type, cls, base)]
    off = {name: True for name in flags if defaults.get(name) is False}
    untied = {name: False for name in flags if name.rpartition(".")[2] == TIE_FIELD and defaults.get(name) is True}
    for changed in (off, untied):
        if changed:
            try:
                out.append(observed(model_type, cls, {**base, **changed}))
            except Exception:  # the flags together do not build: the names they add are placed by their module
                pass
    return out


def with_layout(entry: dict) -> dict:
    """An exact entry (and its branches) with its layout; an entry not inferred as it is."""
    if not entry.get("exact"):
        return entry
    defaults = entry.get("defaults", {})
    out = layout(entry, _builds(entry["model_type"], entry["class"], {}, entry.get("flags", {}), defaults))
    if entry.get("branches"):
        out["branches"] = [layout(b, _builds(entry["model_type"], entry["class"],
                                             _branch_base(b["conditions"], defaults), b.get("flags", {}), defaults))
                           for b in entry["branches"]]
    return out


#: the value a branch's layout build gives a size the default config leaves unset (any size that builds will do:
#: only the names and the kinds of the modules are read)
GIVEN_SIZE = 64


def _branch_base(conditions: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict:
    """A config on a branch's side: its lowest values, its unset sizes set, its two widths meeting."""
    base = dict(conditions.get("minimum", {}))
    base.update({name: GIVEN_SIZE for name in conditions.get("given", ())})
    for split in conditions.get("split", ()):
        left, _, right = split.partition(" = ")
        if right in defaults:
            base[left] = defaults[right]
    return base
