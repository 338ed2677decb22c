"""Architecture families, one module each; :data:`FAMILIES` maps name → family.

Every module in this package that defines ``FAMILY`` (a
:class:`~symparams.family.Family`) or ``FAMILIES`` (a sequence of them) is
registered, in module-name order after the two original families.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..errors import SymparamsError
from ..family import Family

_FIRST = ("bert", "transformer")


def _discover() -> dict[str, Family]:
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    names.sort(key=lambda n: (_FIRST.index(n) if n in _FIRST else len(_FIRST), n))
    found: dict[str, Family] = {}
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        for fam in (getattr(module, "FAMILY", None), *getattr(module, "FAMILIES", ())):
            if fam is not None:
                found[fam.name] = fam
    return found


FAMILIES: dict[str, Family] = _discover()


def family(name: str) -> Family:
    """The family called ``name``."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise SymparamsError(f"unknown family {name!r} (families: {', '.join(FAMILIES)})") from None
