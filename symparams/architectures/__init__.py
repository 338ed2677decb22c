"""Architecture families, one module each; :data:`FAMILIES` maps name → family.

Every module in this package that defines ``FAMILY`` (a
:class:`~symparams.family.Family`) or ``FAMILIES`` (a sequence of them) is
registered, in module-name order after the two original families.

Modules are imported lazily: :func:`family` tries the module of the same
name first, so ``symparams count bert-base`` imports only ``bert``; the full
registry (``FAMILIES``) is built on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

from ..errors import SymparamsError
from ..family import Family

_FIRST = ("bert", "transformer")
_ALL: dict[str, Family] | None = None


def _families_in(module) -> list[Family]:
    return [f for f in (getattr(module, "FAMILY", None), *getattr(module, "FAMILIES", ())) if f is not None]


def module_names() -> list[str]:
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return sorted(names, key=lambda n: (_FIRST.index(n) if n in _FIRST else len(_FIRST), n))


def _module(name: str):
    """The family module called ``name``, or None (no full discovery)."""
    if name.startswith("_") or not name.isidentifier() or importlib.util.find_spec(f"{__name__}.{name}") is None:
        return None
    return importlib.import_module(f"{__name__}.{name}")


def all_families() -> dict[str, Family]:
    """Every family, importing every module once."""
    global _ALL
    if _ALL is None:
        found: dict[str, Family] = {}
        for name in module_names():
            for fam in _families_in(importlib.import_module(f"{__name__}.{name}")):
                found[fam.name] = fam
        _ALL = found
    return _ALL


def find(name: str) -> Family | None:
    """The family called ``name``, or None."""
    module = _module(name) if _ALL is None else None
    for fam in _families_in(module) if module is not None else ():
        if fam.name == name:
            return fam
    return all_families().get(name)


def family(name: str) -> Family:
    """The family called ``name``."""
    fam = find(name)
    if fam is None:
        raise SymparamsError(f"unknown family {name!r} (families: {', '.join(all_families())})")
    return fam


def for_config_type(model_type: str) -> Family | None:
    """The family that reads config.json files of ``model_type`` (its own module first)."""
    module = _module(model_type) if isinstance(model_type, str) else None
    candidates = _families_in(module) if module is not None else []
    for fam in candidates:
        if fam.from_config is not None and model_type in fam.config_types:
            return fam
    for fam in all_families().values():  # only now import every module
        if fam.from_config is not None and model_type in fam.config_types:
            return fam
    return None


def __getattr__(name: str):
    if name == "FAMILIES":
        return all_families()
    raise AttributeError(name)
