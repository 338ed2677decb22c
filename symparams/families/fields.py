"""A config class's fields as transformers reads them: every spelling it accepts, and its defaults.

``data/config_fields.json`` (written by ``scripts/config_fields.py`` from the
pinned transformers) holds, for each ``model_type`` a hand-written family
reads, the names its config class accepts for each stored field (its
``attribute_map`` and the legacy names its ``__post_init__`` renames), the
default of each field, and which fields it computes from others when a
file leaves them out.  It is read the first time a config.json is.

>>> fields = of("qwen3_moe")
>>> fields.spellings("num_experts")  # the stored name first
('num_local_experts', 'num_experts')
>>> fields.stored("num_experts"), fields.default("num_local_experts")
('num_local_experts', 128)
>>> of("falcon").spellings("hidden_size"), sorted(of("falcon").derived)
(('hidden_size', 'n_embed'), ['ffn_hidden_size', 'num_kv_heads', 'rope_parameters'])
>>> of("no-such-type") is None
True
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any, NamedTuple

DATA = os.path.join(os.path.dirname(__file__), "data", "config_fields.json")
_NO_DEFAULT = object()


@lru_cache(maxsize=1)
def _data() -> dict:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)


def version() -> str:
    """The transformers version the data was read from."""
    return _data()["transformers_version"]


class Fields(NamedTuple):
    """The fields of one config class: ``names`` maps every accepted name to the stored one."""

    model_type: str
    config_class: str
    names: dict  # any accepted name → the name to_dict() stores it under
    groups: dict  # stored name → every accepted name, the stored one first
    defaults: dict  # stored name → its default (fields computed from others have none)
    derived: frozenset  # stored names computed from other fields when a file leaves them out

    def stored(self, key: str) -> str:
        """The name transformers stores ``key`` under (``key`` itself if the class has no other name for it)."""
        return self.names.get(key, key)

    def spellings(self, key: str) -> tuple[str, ...]:
        """Every name of ``key``'s field, the stored one first."""
        stored = self.stored(key)
        return self.groups.get(stored, (stored,))

    def default(self, key: str, missing: Any = _NO_DEFAULT) -> Any:
        """The default of ``key``'s field; ``missing`` (else a KeyError) for a field computed from others or
        unknown."""
        stored = self.stored(key)
        if stored in self.defaults:
            return self.defaults[stored]
        if missing is _NO_DEFAULT:
            raise KeyError(key)
        return missing


@lru_cache(maxsize=None)
def of(model_type: str) -> Fields | None:
    """The fields of ``model_type``'s config class, or None if the data does not list the type."""
    entry = _data()["types"].get(model_type) if isinstance(model_type, str) else None
    if entry is None:
        return None
    groups = {stored: (stored, *others) for stored, others in entry["spellings"].items()}
    names = {name: stored for stored, group in groups.items() for name in group}
    return Fields(model_type, entry["class"], names, groups, dict(entry["defaults"]), frozenset(entry["derived"]))


def types() -> tuple[str, ...]:
    """Every ``model_type`` the data lists."""
    return tuple(_data()["types"])
