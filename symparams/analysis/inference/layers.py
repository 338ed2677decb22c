"""Per-layer lists of kinds (``layer_types``): which ones shape the parameters, and how many layers of each kind.

A config class that mixes layer kinds (Qwen3-Next's linear and full attention,
one full layer in every ``full_attention_interval``) computes a list of one
kind per layer when a config.json leaves it out.  The formulas are fitted on
those computed lists, so a config.json that writes a list of its own is
counted only when it has as many layers of each kind as the formula's count
of that kind gives (:func:`kind_counts` says which lists matter, the
generator fits each count from the config class's own lists, like the fields
it computes); a list whose kinds change no parameter (Gemma 3's sliding and
full attention) is free.

A kind count is written ``layer_types#full_attention``: the list's field, ``#``
and the kind.

A list of layer indices (GOT-OCR2's vision ``global_attn_indexes``) names
layers by their place instead: below its last index + 1 layers, fewer layers
are named than it lists (:func:`index_floors`).
"""

from __future__ import annotations

from typing import Any

from ...families.inferred import expanded, kinds_listed
from .probing import Builder, relisted

#: between a list's field and a kind in a kind count's name
KIND = "#"


def per_layer_lists(values: dict[str, Any]) -> dict[str, str]:
    """Each field of ``values`` (a config's, dotted) holding one kind per layer → the layer count it has as many
    entries as (a field of the same config or sub-config whose name says layers).

    >>> per_layer_lists({"num_hidden_layers": 3, "layer_types": ["a", "b", "a"], "heads": 3, "ids": [1, 2]})
    {'layer_types': 'num_hidden_layers'}
    """
    out = {}
    for listed, value in values.items():
        entries = kinds_listed(value)
        if entries is None:
            continue
        prefix = listed.rpartition(".")[0]
        count = next((k for k, v in values.items() if k.rpartition(".")[0] == prefix and v == len(entries)
                      and isinstance(v, int) and not isinstance(v, bool) and "layer" in k.rpartition(".")[2]), None)
        if count is not None:
            out[listed] = count
    return out


#: kinds of layers a list of one kind is tried with, by the kind it holds: the other kind of a pair
NEIGHBOURS = {"full_attention": "sliding_attention", "sliding_attention": "full_attention", "dense": "sparse",
              "sparse": "dense"}


def kind_counts(model_type: str, cls: str) -> dict[str, list[str]]:
    """The per-layer lists of the default config whose kinds shape the parameters → their kinds (see
    :func:`kinds_matter`)."""
    builder = Builder(model_type, cls)
    defaults = builder.defaults()
    base = builder.observe({})
    out = {}
    for listed in per_layer_lists(defaults):
        entries = expanded(defaults[listed])
        if base is None or kinds_matter(builder, {}, listed, entries, defaults[listed], base.total):
            out[listed] = sorted(set(entries))
    return out


def kinds_matter(builder: Builder, base: dict, listed: str, entries: list, default, total: int) -> bool:
    """Whether a per-layer list's kinds shape the parameters: its first layer of another kind it holds (a list of
    one kind: of that kind's neighbour, sliding for full attention, dense for sparse) builds another count, or
    builds no other way (then it is taken to matter)."""
    others = list(dict.fromkeys(entries)) or []
    if len(others) == 1 and others[0] in NEIGHBOURS:
        others.append(NEIGHBOURS[others[0]])
    built = [obs for kind in others if kind != entries[0]
             if (obs := builder.observe({**base, listed: relisted(default, [kind, *entries[1:]])})) is not None]
    return not built or any(obs.total != total for obs in built)



def reordered(kinds: dict, values: dict) -> dict | None:
    """``values`` with each per-layer list of ``kinds`` (list → its layer count, its kinds, its default) that they
    give by kind counts written out in another order: the last layer kept (a config class may force its kind, as
    Gemma 4 makes it full attention), the layers before it reversed.  None where no list is so given or the order
    comes out the same.

    A formula in kind counts counts a config.json by how many layers of each kind its list holds, in whatever
    order; the fit's lists are written kind by kind, so a count that also follows the order (Gemma 4's last
    ``num_kv_shared_layers`` layers reuse others' keys and values: the kinds among them) would go unseen.

    >>> reordered({"layer_types": ("layers", ("sliding", "full"), [])}, {"layer_types#sliding": 2,
    ...                                                                   "layer_types#full": 2, "width": 8})
    {'width': 8, 'layer_types': ['full', 'sliding', 'sliding', 'full'], 'layers': 4}
    """
    out, changed = dict(values), False
    for listed, (count, names, default) in kinds.items():
        keys = [f"{listed}{KIND}{kind}" for kind in names]
        if not any(key in out for key in keys):
            continue
        entries = [kind for kind, key in zip(names, keys) for _ in range(out.pop(key, 0))]
        other = [*entries[-2::-1], *entries[-1:]]
        changed = changed or other != entries
        out[listed], out[count] = relisted(default, other), len(other)
    return out if changed else None


def index_lists(values: dict) -> dict[str, str]:
    """Each list of ``values`` (a config's, dotted) that holds layer indices → the layer count it indexes: its name
    says layers or indices (a list of resolutions or widths may hold small distinct numbers too), its entries are
    distinct whole numbers, the largest below one layer count of its (sub-)config and only one.

    >>> index_lists({"num_hidden_layers": 8, "moe_layers": [1, 3, 5, 7], "widths": [8, 8], "resolutions": [4]})
    {'moe_layers': 'num_hidden_layers'}
    >>> index_lists({"num_hidden_layers": 8, "layer_dilations": [[1, 3], [1, 5]]})  # lists of lists index nothing
    {}
    """
    out = {}
    for listed, value in values.items():
        leaf = listed.rpartition(".")[2]
        if not isinstance(value, (list, tuple)) or not value or not all(_index(x) for x in value) \
                or len(set(value)) != len(value) or not any(word in leaf for word in ("layer", "index", "indices")):
            continue
        prefix = listed.rpartition(".")[0]
        counts = [k for k, v in values.items() if k.rpartition(".")[0] == prefix and "layer" in k.rpartition(".")[2]
                  and _size(v) and v > max(value)]
        if len(counts) == 1:
            out[listed] = counts[0]
    return out


def index_floors(builder: Builder, found) -> dict[str, int]:
    """Each free layer count with a list of layer indices the config class keeps as it is while the count moves
    (GOT-OCR2's vision ``global_attn_indexes``, 2, 5, 8 and 11 of 12 layers) → one more than the list's last index.
    Below that the layers the list names past the last one are not built, and the count of the layers it names
    follows the layer count (a pattern that stops at the list's end); from there on every index names a layer, so
    a formula of as many listed layers as the list has holds from there up (a condition)."""
    out = {}
    for listed, count in index_lists(found.defaults).items():
        field = found.fields.get(count)
        if field is None or not (field.free and field.counts):
            continue
        held = builder.read_back(found.base, others=[listed])
        if held is not None and list(held[listed] or ()) == list(found.defaults[listed]):
            out[count] = max(found.defaults[listed]) + 1
    return out


def _size(value) -> bool:
    return _index(value) and value > 0


def _index(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
