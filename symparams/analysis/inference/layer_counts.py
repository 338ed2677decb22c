"""Layer counts a config class computes from a per-layer list and does not write into its config.json."""

from __future__ import annotations

from ...families.inferred import kinds_listed

#: the names a config class may give its layer count
LAYER_COUNTS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers")


def listed_layer_counts(config, written: dict, prefix: str = "") -> dict[str, int]:
    """A layer count a config class (or a sub-config's, dotted) computes as the length of a per-layer list of kinds
    and does not write (Nemotron-H's ``num_hidden_layers``, a property: ``len(layers_block_type)``), by its name →
    its value: the list is then counted by its kinds like any other per-layer list with its layer count.

    >>> class Hybrid:
    ...     model_type = "hybrid"
    ...     def __init__(self, kinds):
    ...         self.kinds = kinds
    ...     @property
    ...     def num_hidden_layers(self):
    ...         return len(self.kinds)
    >>> listed_layer_counts(Hybrid(["mamba", "mlp", "attention"]), {"kinds": ["mamba", "mlp", "attention"]})
    {'num_hidden_layers': 3}
    >>> listed_layer_counts(Hybrid([]), {"num_hidden_layers": 2, "kinds": []})  # written, or no list: none
    {}
    """
    lengths = {len(kinds) for k, v in written.items() if k.rpartition(".")[0] == prefix.rstrip(".")
               and (kinds := kinds_listed(v)) is not None}
    out = {}
    for name in LAYER_COUNTS:
        value = None if prefix + name in written else getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value in lengths \
                and isinstance(getattr(type(config), name, None), property):
            out[prefix + name] = value
    for name, sub in vars(config).items():
        if hasattr(sub, "to_dict") and hasattr(type(sub), "model_type"):  # a sub-config
            out.update(listed_layer_counts(sub, written, f"{prefix}{name}."))
    return out
