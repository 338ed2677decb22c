"""A :class:`~symparams.core.model.Model` from what a user names: a preset, a family or a config.json.

>>> model("bert-base", L=24).count
194536704
>>> model("transformer-base", tie=False).components["output"]
18944000
>>> model({"model_type": "bert", "num_hidden_layers": 24}, H=1024, A=16).count
335141888

A value of ``None`` leaves a symbol free (drops a preset's value):

>>> model("bert-base", H=None, A=20).free
[H]
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from ..core.errors import SymparamsError
from ..core.model import Model
from . import config
from .presets import all_presets
from .presets import find as find_preset
from .registry import all_families
from .registry import family as get_family
from .registry import find as find_family


def model(name: "str | os.PathLike | Mapping", *, head: str | None = None, **values_and_switches) -> Model:
    """A model from a preset or family name, with values and switches as keywords.

    ``name`` may also be the path of a HuggingFace ``config.json`` (or of the
    folder holding one), or such a config as a dict; keywords then override
    its values (see :mod:`symparams.families.config`).
    """
    preset = find_preset(name) if isinstance(name, str) else None
    fam = None if preset is not None or not isinstance(name, str) else find_family(name)
    if preset is None and fam is None and (not isinstance(name, str) or _is_config_path(name)):
        return _from_config_source(name, head, values_and_switches)
    if preset is not None:
        fam = get_family(preset.family)
        values, switches = dict(preset.values), dict(preset.switches)
    elif fam is not None:
        values, switches = {}, {}
    else:
        known = ", ".join([*all_presets(), *all_families()])
        raise SymparamsError(f"unknown model {name!r} (presets and families: {known})")
    optional = frozenset(values) - frozenset(values_and_switches)
    given_values, given_switches = fam.split(values_and_switches, name)
    return Model(fam, {**values, **given_values}, {**switches, **given_switches}, head, name, optional)


def from_config(path: str, head: str | None = None, overrides: Mapping[str, str] | None = None) -> Model:
    """The model of the ``config.json`` at ``path``."""
    return _from_settings(config.settings(config.read(path), head, overrides, source=path), path)


def _from_settings(s: config.Settings, source: str) -> Model:
    try:
        return Model(s.family, s.values, s.switches, s.head, s.name, optional=s.optional)
    except SymparamsError as exc:  # H not divisible by A, ...: name the file
        raise SymparamsError(f"{source}: {exc}") from None


def _is_config_path(name: str) -> bool:
    return name.endswith(".json") or os.sep in name or "/" in name or os.path.exists(name)


def _from_config_source(source: Any, head, overrides) -> Model:
    """A model from a config.json path (or its folder) or a config dict."""
    if isinstance(source, Mapping):
        return _from_settings(config.settings(source, head, overrides, source="config"), "config")
    if not isinstance(source, (str, os.PathLike)):
        raise SymparamsError(f"model() takes a name, a config.json path or a dict, not {type(source).__name__}")
    path = os.fspath(source)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    return from_config(path, head, overrides)
