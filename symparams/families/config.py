"""HuggingFace ``config.json`` import.

``model_type`` picks the family (each :class:`~symparams.core.family.Family`
lists the ``model_type`` values it reads in ``config_types``); the family's
``from_config(reader)`` maps its own keys to values and switches, with the
defaults of that family's transformers config class for missing keys, and
ignoring the keys it does not need.  Without a head the model is the base
model (what ``AutoModel`` builds); the reader knows the head asked for, so a
family can refuse a key that would change that head in a way it does not
model (:meth:`ConfigReader.refuse`).  A malformed file, an unknown
``model_type``, a missing required key, a value of the wrong type or a size
below 1 is one line naming the file and the key.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "config.json")
>>> _ = open(path, "w").write(json.dumps({"model_type": "bert"}))
>>> settings(read(path)).values["H"]  # every key missing: BertConfig's defaults (bert-base-uncased)
768
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..core.errors import SymparamsError
from ..core.family import Family
from ..core.files import read_text
from . import fields
from .registry import all_families, for_config_type

REQUIRED = object()


def _json(value) -> str:
    """A value as JSON text, to compare two values as the file holds them (``1`` is not ``true``)."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


class FieldValue(int):
    """A whole number read from a config field, which remembers that field: a symbol whose value it becomes then
    names the field, so that a value set for the symbol can be written into the file (:func:`settings`).
    ``spelled`` is the name the file gives the field, None where the number is the class's default."""

    def __new__(cls, value: int, field: str, spelled: str | None):
        number = super().__new__(cls, value)
        number.field, number.spelled = field, spelled
        return number


def _shown(value) -> str:
    """A config value for an error message: its JSON, else its repr, at most 40 characters."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(value).__name__)
    return text if len(text) <= 40 else text[:37] + "..."


class ConfigReader:
    """Typed access to a config dict; every error names the key and the file.

    ``head`` is the task head asked for (``None``: the base model), for the
    families whose keys matter only with some heads.  ``fields`` are the
    spellings of the config's class (:mod:`.fields`): a key asked for is
    found under any name transformers accepts for it, and two names of one
    field set to different values are one line naming both.  ``asked``
    collects the stored name of every key asked for, so that a field the
    family never read can be named.

    >>> from symparams.families import fields
    >>> reader = ConfigReader({"num_local_experts": 8}, "c.json", fields=fields.of("qwen3_moe"))
    >>> reader.int("num_experts"), sorted(reader.asked)
    (8, ['num_local_experts'])
    >>> ConfigReader({"num_experts": 8, "num_local_experts": 128}, "c.json", fields=fields.of("qwen3_moe")).int(
    ...     "num_experts")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: c.json: keys num_local_experts (128) and num_experts (8) name one field of Qwen3MoeConfig with different values; keep one
    """

    def __init__(self, data: Mapping[str, Any], source: str = "config.json", head: str | None = None,
                 fields=None):
        _refuse_keys_not_text(data, source)
        self.data = data
        self.source = source
        self.head = head
        self.fields = fields
        self.notes: list[str] = []
        self.departures: dict[str, str] = {}  # head → why its count is not what transformers builds
        self.asked: set[str] = set()

    def note(self, text: str, *, departs: tuple[str, ...] = ()) -> None:
        """Say, in one line the count prints, how this config is counted where transformers would differ;
        ``departs``: the heads whose count this makes differ from what transformers builds from the file (the
        double entry does not compare them)."""
        self.notes.append(text)
        self.departures.update(dict.fromkeys(departs, text))

    def spellings(self, key: str) -> tuple[str, ...]:
        """Every name of ``key``'s field in the config's class, the stored one first."""
        return self.fields.spellings(key) if self.fields is not None else (key,)

    def lookup(self, key: str) -> tuple[str, Any] | None:
        """(the name the file uses, its value) for ``key``'s field under any of its names, nulls left out;
        None if the file sets none of them.  Does not count as asking for it."""
        found = [(name, self.data[name]) for name in self.spellings(key)
                 if name in self.data and self.data[name] is not None]
        for name, value in found[1:]:
            if _json(value) != _json(found[0][1]):
                (first, kept) = found[0]
                raise SymparamsError(f"{self.source}: keys {first} ({_shown(kept)}) and {name} ({_shown(value)}) "
                                     f"name one field of {self.fields.config_class} with different values; keep one")
        return found[0] if found else None

    def _ask(self, key: str, exact: bool = False) -> tuple[str, Any] | None:
        self.asked.add(self.spellings(key)[0])
        if exact:
            return (key, self.data[key]) if self.data.get(key) is not None else None
        return self.lookup(key)

    def name_of(self, key: str) -> str:
        """The name the file gives ``key``'s field (``key`` itself if it gives none), for a message."""
        found = self.lookup(key)
        return key if found is None else found[0]

    def has(self, key: str) -> bool:
        """Whether the file sets ``key``'s field (under any of its names) to something other than null."""
        return self._ask(key) is not None

    def null(self, key: str) -> bool:
        """Whether the file sets ``key``'s field to null (and under no other name to a value)."""
        return self._ask(key) is None and any(self.data.get(name, 0) is None for name in self.spellings(key))

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``'s field as the file holds it (a list, an object ...), else ``default``."""
        found = self._ask(key)
        return default if found is None else found[1]

    def _find(self, keys, default, exact: bool = False):
        found = [self._ask(key, exact) for key in keys]  # every key asked for counts as read
        for hit in found:
            if hit is not None:
                return hit
        if default is REQUIRED:
            raise SymparamsError(f"{self.source}: missing required key {' / '.join(keys)}")
        return None, default

    def int(self, *keys: str, default: Any = REQUIRED, minimum: int = 1, exact: bool = False) -> Any:
        """The first of ``keys`` present (under any of its names; with ``exact``, under that name only: what a
        config class's ``__post_init__`` sees before it applies the aliases), as a whole number ≥ ``minimum``: a
        :class:`FieldValue` naming the field it was read from (the first key's, for a whole default)."""
        key, value = self._find(keys, default, exact)
        if key is None:
            whole = isinstance(value, int) and not isinstance(value, bool)
            return FieldValue(value, self.stored_name(keys[0]), None) if whole else value
        if isinstance(value, bool) or not isinstance(value, int):
            raise SymparamsError(f"{self.source}: key {key} must be a whole number, not {_shown(value)}")
        if value < minimum:
            raise SymparamsError(f"{self.source}: key {key} must be at least {minimum}, not {value}")
        return FieldValue(value, self.stored_name(key), key)

    def stored_name(self, key: str) -> str:
        """The name the config's class stores ``key``'s field under."""
        return self.fields.stored(key) if self.fields is not None else key

    def bool(self, *keys: str, default: Any = REQUIRED) -> Any:
        key, value = self._find(keys, default)
        if key is not None and not isinstance(value, bool):
            raise SymparamsError(f"{self.source}: key {key} must be true or false, not {_shown(value)}")
        return value

    def str(self, *keys: str, default: Any = REQUIRED, choices: tuple[str, ...] | None = None) -> Any:
        key, value = self._find(keys, default)
        if key is None:
            return value
        if not isinstance(value, str):
            raise SymparamsError(f"{self.source}: key {key} must be a string, not {_shown(value)}")
        if choices is not None and value not in choices:
            raise SymparamsError(f"{self.source}: key {key} is {value!r}; symparams knows {', '.join(choices)}")
        return value

    def refuse(self, key: str, value: Any, *, default: Any, family: str, what: str) -> None:
        """Raise when ``key`` holds ``value`` (missing: ``default``): a structure ``family`` does not model.

        For keys transformers reads that would change the count in a way
        symparams cannot say: an error naming the key, never a wrong number.

        >>> ConfigReader({"add_cross_attention": True}, "c.json").refuse(
        ...     "add_cross_attention", True, default=False, family="bert", what="cross-attention in every layer")
        Traceback (most recent call last):
        ...
        symparams.SymparamsError: c.json: key add_cross_attention=true (cross-attention in every layer) is not modelled by symparams' bert family
        """
        read = self.bool(key, default=default) if isinstance(value, bool) else self._find((key,), default)[1]
        if read == value:
            raise SymparamsError(
                f"{self.source}: key {key}={_shown(value)} ({what}) is not modelled by symparams' {family} family")

    def labels(self, default: int = 2) -> int:
        """The number of labels: ``num_labels``, else the size of ``id2label``, else ``default``."""
        if self.has("num_labels"):
            return self.int("num_labels")
        id2label = self.get("id2label")
        if id2label is not None:
            if not isinstance(id2label, dict) or not id2label:
                raise SymparamsError(f"{self.source}: key id2label must be a non-empty object")
            return len(id2label)
        return default


def _refuse_keys_not_text(data: Mapping, source: str) -> None:
    """A config's field names are text; a dict built in Python may hold others (``{5: 1}``), which no field of any
    config class can be: refused in one line rather than failing deep in the reading.  A sub-config's fields are
    field names too; a value that is a mapping of its own (``id2label``, keyed 0, 1 by ``to_dict()``) is no
    config."""
    for key, value in data.items():
        if not isinstance(key, str):
            raise SymparamsError(f"{source}: a config's keys are field names (text), not {key!r}"[:300])
        if is_sub_config(key, value):
            _refuse_keys_not_text(value, source)


def is_sub_config(key: str, value: Any) -> bool:
    """Whether a config's ``key`` holds a sub-config (a multimodal model's ``text_config``, DBRX's
    ``attn_config``)."""
    return isinstance(value, dict) and ("model_type" in value or key.endswith("_config"))


def flattened(values: Mapping[str, Any], prefix: str = "", sub_configs: frozenset = frozenset()) -> dict[str, Any]:
    """A config's fields with each sub-config's beside them as dotted keys (``text_config.hidden_size``); a
    mapping at a key of ``sub_configs`` is one too, with no ``model_type`` of its own (an encoder–decoder's
    ``encoder``, which transformers reads as a BERT config then).

    >>> flattened({"vocab_size": 5, "text_config": {"model_type": "llama", "hidden_size": 8}})
    {'vocab_size': 5, 'text_config.model_type': 'llama', 'text_config.hidden_size': 8}
    """
    out: dict[str, Any] = {}
    for key, value in values.items():
        if is_sub_config(key, value) or (isinstance(value, dict) and prefix + key in sub_configs):
            out.update(flattened(value, f"{prefix}{key}.", sub_configs))
        else:
            out[prefix + key] = value
    return out


def read(path: str) -> dict[str, Any]:
    """The JSON object in ``path`` (one-line errors for a missing, oversized or malformed file)."""
    text = read_text(path, "config.json")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SymparamsError(f"{path}: malformed JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise SymparamsError(f"{path}: nested too deeply to be a config.json") from None
    except ValueError as exc:  # an integer too long to convert
        raise SymparamsError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise SymparamsError(f"{path}: a config.json must hold a JSON object, not {type(data).__name__}")
    return data


def family_for(model_type: str, source: str, remote_code: bool = False) -> Family:
    """The family that reads ``model_type``; else one line naming the type (and whether it needs the
    model's own code, which only ``trust_remote_code`` runs) and the types symparams reads."""
    fam = for_config_type(model_type)
    if fam is not None:
        return fam
    known = [t for f in all_families().values() if f.from_config is not None for t in f.config_types]
    why = ", a model with its own code (auto_map), which symparams does not run" if remote_code else ""
    raise SymparamsError(f"{source}: unknown model_type {model_type!r}{why} (symparams reads: "
                         f"{', '.join(sorted(known))}; and, inferred from transformers' builds, the types "
                         f"`symparams list --inferred` lists)")


@dataclass(frozen=True)
class Settings:
    """What a config.json says: the family, its values and switches, the head, a name for the model.

    ``optional`` are the values the model may leave unused (e.g. ``num_labels``
    without a classification head).  ``read_from`` maps each symbol whose value
    was read from one config field to that field: (the name its class stores
    it under, the name the file gives it or None).
    """

    family: Family
    values: dict
    switches: dict
    head: str | None
    name: str
    optional: frozenset
    notes: tuple = ()
    double_entry: dict | None = None  # how the count was cross-checked (:mod:`.double_entry`)
    saved_as: Any = None  # the class the config's architectures names (:mod:`.architectures`)
    read_from: dict = field(default_factory=dict)


def settings(data: Mapping[str, Any], head: str | None = None, overrides: Mapping[str, str] | None = None,
             source: str = "config.json", check=None) -> Settings:
    """The :class:`Settings` of a config dict.

    ``head`` adds a task head (``None``: the base model, what ``AutoModel``
    builds); ``overrides`` are ``--set`` values and switches.  A whole value
    for a symbol the family read from one field is written into the config
    under that field, and the config read again: what transformers builds
    from the edited file, where a field the file gives keeps its value and
    one it leaves out follows as the config class computes it.  Switches,
    and values for symbols read from no single field (a ratio such as ``r``),
    apply after that reading.  ``check`` cross-checks the config as read,
    with the fields written and before the other overrides
    (:func:`symparams.families.double_entry.cross_check`, which
    :func:`symparams.model` passes); what it returns is the settings'
    ``double_entry``.

    >>> data = {"model_type": "gpt_neox", "hidden_size": 256, "intermediate_size": 512}
    >>> settings(data, overrides={"H": "512"}).values["r"]  # the file's intermediate_size stays: 512/512
    Fraction(1, 1)
    """
    if not isinstance(source, str):
        raise SymparamsError(f"a config's source is named by text, not {type(source).__name__}")
    if not isinstance(data, Mapping):
        raise SymparamsError(f"{source}: a config must be a JSON object (a dict), not {type(data).__name__}")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise SymparamsError(f"overrides are a mapping of keys to values, not {type(overrides).__name__}")
    model_type = ConfigReader(data, source).str("model_type")
    fam = family_for(model_type, source, remote_code="auto_map" in data)
    head = fam.check_head(head)
    where, rest = source, dict(overrides or {})
    if rest:
        data, rest, where = written(data, rest, read_with(fam, data, source, head)[0].read_from, source)
    read, reader = read_with(fam, data, where, head)
    checked = None if check is None else check(read, reader, lambda other: read_with(fam, data, where, other), data,
                                               where, overridden=bool(rest))
    given_values, given_switches = fam.split(rest, fam.name)
    return Settings(fam, {**read.values, **given_values}, {**read.switches, **given_switches}, read.head,
                    model_name(source), frozenset(read.values) - set(rest), read.notes, checked,
                    read_from=read.read_from)


def written(data: Mapping[str, Any], overrides: Mapping[str, Any], fields_of: Mapping[str, tuple],
            source: str) -> tuple[dict, dict, str]:
    """(``data`` with each whole value of ``overrides`` for a symbol of ``fields_of`` written into its field, the
    overrides left, ``source`` named with the values written: ``config.json with H=512``, so that a refusal of
    the edited file says what was set).  The field is written under the name the file gives it, else the one its
    class stores it under, and every other name of it is dropped: the value set is the value read."""
    from ..core.values import parse_value

    edited, left, done = dict(data), {}, []
    spellings = fields.of(data["model_type"])
    for key, raw in overrides.items():
        found = fields_of.get(key) if raw is not None else None  # None: a symbol left free
        value = parse_value(key, raw) if found is not None else None
        if value is None or not value.is_Integer:
            left[key] = raw
            continue
        stored, spelled = found
        for name in spellings.spellings(stored) if spellings is not None else (stored,):
            edited.pop(name, None)
        edited[spelled or stored] = int(value)
        done.append(f"{key}={raw}")
    return edited, left, f"{source} with {', '.join(done)}" if done else source


def read_with(fam: Family, data: Mapping[str, Any], source: str, head: str | None):
    """(the :class:`Settings` of ``fam``'s reading of a config for ``head``, with no ``--set`` values and
    no cross-check; the :class:`ConfigReader` that read it, which knows what was asked)."""
    reader = ConfigReader(data, source, head, fields.of(data["model_type"]))
    values, switches = fam.from_config(reader)
    read_from = {key: (value.field, value.spelled) for key, value in values.items() if isinstance(value, FieldValue)}
    values = {key: int(value) if isinstance(value, FieldValue) else value for key, value in values.items()}
    return Settings(fam, values, switches, head, model_name(source), frozenset(values), tuple(reader.notes),
                    read_from=read_from), reader


def model_name(source: str) -> str:
    """A model's name from its config's path: the folder of a ``config.json``, else the file's stem."""
    stem = os.path.splitext(os.path.basename(source))[0]
    name = os.path.basename(os.path.dirname(os.path.abspath(source))) if stem == "config" else stem
    return name or source
