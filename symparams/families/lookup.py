"""A :class:`~symparams.core.model.Model` from what a user names: a preset, a family or a config.json.

>>> model("bert-base", L=24).count
194536704
>>> model("transformer-base", tie=False).components["output"]
18944000
>>> model({"model_type": "bert", "num_hidden_layers": 24}, H=1024, A=16).count  # intermediate_size stays 3072
284785664

A value of ``None`` leaves a symbol free (drops a preset's value):

>>> model("bert-base", H=None, A=20).free
[H]
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Mapping

from ..core.errors import SymparamsError
from ..core.model import Model
from .presets import aliases
from .presets import find as find_preset
from .registry import CONFIG_MODULES, MODULES, all_families, for_config_type
from .registry import family as get_family
from .registry import find as find_family

if TYPE_CHECKING:
    from .config import Settings


def model(name: "str | os.PathLike | Mapping", *, head: str | None = None, **values_and_switches) -> Model:
    """A model from a preset or family name, with values and switches as keywords.

    A preset may also be named in any case or by its checkpoint's hub id
    (``bert-base-uncased``, ``meta-llama/Meta-Llama-3-8B``); any other hub id
    (``ORG/NAME[@REVISION]``) is read from its config.json, fetched through
    ``huggingface_hub`` and its cache (:mod:`.hub`).  ``name`` may
    also be the path of a HuggingFace ``config.json`` (or of the folder
    holding one), or such a config as a dict; keywords then override its
    values (see :mod:`symparams.families.config`).

    >>> model("google-bert/bert-base-uncased").name, model("BERT-Base").count
    ('bert-base', 109482240)
    """
    if not isinstance(name, str):
        return _from_config_source(name, head, values_and_switches)
    preset = find_preset(name)
    fam = None if preset is not None else find_family(name)
    if preset is None and fam is None:
        if os.path.exists(name):
            return _from_config_source(name, head, values_and_switches)
        preset, fam = _by_another_name(name)
        if preset is None and fam is None:
            if name.endswith(".json"):
                return _from_config_source(name, head, values_and_switches)  # says: no such file
            from . import hub  # a name that is nothing else: a cold count of a preset never imports it

            found = hub.hub_id(name)
            if found is None:
                raise SymparamsError(_unknown(name))
            return from_config(hub.config_path(*found), head, values_and_switches, name=name)
    if preset is not None:
        fam = get_family(preset.family)
        values, switches, name = dict(preset.values), dict(preset.switches), preset.name
    else:
        values, switches, name = {}, {}, fam.name
    optional = frozenset(values) - frozenset(values_and_switches)
    given_values, given_switches = fam.split(values_and_switches, name)
    return Model(fam, {**values, **given_values}, {**switches, **given_switches}, head, name, optional)


def _by_another_name(name: str):
    """(preset, family) that ``name`` stands for in another case or as a hub id; (None, None) if none."""
    alias = aliases().get(name.lower())
    if alias is not None:
        return find_preset(alias), None
    families = {f.lower(): fam for f, fam in all_families().items()}
    return None, families.get(name.lower())


def _unknown(name: str) -> str:
    """The error for a name that is nothing: the three closest names, if any are close."""
    import difflib  # only a misspelt name needs it: a cold count does not import it

    names = aliases()
    close = difflib.get_close_matches(name.lower(), [*names, *all_families()], n=6, cutoff=0.6)
    suggestions = list(dict.fromkeys(names.get(c, c) for c in close))[:3]
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    path = ", nor a config.json or a folder holding one" if "/" in name or os.sep in name else ""
    return f"unknown model {name!r}{path}{hint} (`symparams list` shows every preset and family)"


def from_config(path: str, head: str | None = None, overrides: Mapping[str, str] | None = None,
                name: str | None = None) -> Model:
    """The model of the ``config.json`` at ``path`` (or in the folder ``path``), called ``name`` (a hub id)
    rather than after its folder."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    from .config import read  # a preset's count reads no file: its cold start does not import the reader

    return _read_model(read(path), head, overrides, path, name)


def _read_model(data: Any, head, overrides, source: str, name: str | None = None) -> Model:
    """The model of a config dict read from ``source``, which remembers the dict (:class:`Reading`): a variant
    with other values (:meth:`Model.subs`) is the file edited to them, read again."""
    settings = _settings(data, head, overrides, source)
    reading = Reading(data, dict(overrides or {}), source, name)
    return _from_settings(settings if name is None else dataclasses.replace(settings, name=name), source, reading)


class Reading:
    """A config dict and the values set on it (``--set``), as a model read from them remembers them.

    Calling it with more values (or switches) and a head reads the file again with them written in: what
    :meth:`Model.subs` of such a model does.
    """

    def __init__(self, data: Any, overrides: dict, source: str, name: str | None):
        self.data, self.overrides, self.source, self.name = data, overrides, source, name

    def __call__(self, changes: Mapping[str, Any], head: str | None) -> Model:
        return _read_model(self.data, head, {**self.overrides, **changes}, self.source, self.name)

    def unset(self, keys, head: str | None) -> Model:
        """The model with the values set for ``keys`` taken back: the file's own (a symbol left free for
        ``solve`` or ``sweep`` gets its value from the file again)."""
        kept = {key: value for key, value in self.overrides.items() if key not in keys}
        return _read_model(self.data, head, kept, self.source, self.name)


def _settings(data: Any, head, overrides, source: str) -> Settings:
    """A config's settings, with the class its ``architectures`` names: from its family, else (a model_type
    no family reads) from the inferred formulas."""
    from .architectures import saved_as

    settings = _read_settings(data, head, overrides, source)
    saved = saved_as(data, settings.family.heads)
    if saved is not None and saved.head is not None:
        def with_saved_head(head: str = saved.head) -> Model:  # read anew: a head may read keys the base leaves
            return _from_settings(_read_settings(data, head, overrides, source, check=False), source)

        saved = dataclasses.replace(saved, model=with_saved_head)
    return dataclasses.replace(settings, saved_as=saved)


def _read_settings(data: Any, head, overrides, source: str, check: bool = True) -> Settings:
    model_type = data.get("model_type") if isinstance(data, Mapping) and isinstance(source, str) else None
    if isinstance(model_type, str) and not _has_family(model_type):
        from . import inferred  # the data file is read only here: a type without a family

        if inferred.covers(model_type) and (overrides is None or isinstance(overrides, Mapping)):
            return inferred.settings(data, head, overrides, source)
    from .config import settings
    from .double_entry import cross_check

    return settings(data, head, overrides, source=source, check=cross_check if check else None)


def _has_family(model_type: str) -> bool:
    """Whether a hand-written family reads ``model_type``, importing no family module when none is named after
    it: the registry lists every type a module of another name reads."""
    if CONFIG_MODULES.get(model_type, model_type) not in MODULES:
        return False
    return for_config_type(model_type) is not None


def _from_settings(s: Settings, source: str, reread=None) -> Model:
    try:
        return Model(s.family, s.values, s.switches, s.head, s.name, optional=s.optional, notes=s.notes,
                     double_entry=s.double_entry, saved_as=s.saved_as, reread=reread)
    except SymparamsError as exc:  # H not divisible by A, ...: name the file
        raise SymparamsError(f"{source}: {exc}") from None


def _dict_name(data: Mapping) -> str | None:
    """A config dict's model name: the checkpoint ``to_dict()`` names (``_name_or_path``), else its type (a
    dict has no folder to be named after)."""
    for key in ("_name_or_path", "model_type"):
        if isinstance(data.get(key), str) and data[key]:
            return data[key]
    return None


def _from_config_source(source: Any, head, overrides) -> Model:
    """A model from a config.json path (or its folder) or a config dict."""
    if isinstance(source, Mapping):
        return _read_model(dict(source), head, overrides, "config", _dict_name(source))  # a copy: it may change
    if not isinstance(source, (str, os.PathLike)):
        raise SymparamsError(f"model() takes a name, a config.json path or a dict, not {type(source).__name__}")
    return from_config(os.fspath(source), head, overrides)
