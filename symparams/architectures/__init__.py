"""Architecture families, one module each; :data:`FAMILIES` maps name → family."""

from __future__ import annotations

from ..errors import SymparamsError
from ..family import Family
from . import bert, transformer

FAMILIES: dict[str, Family] = {f.name: f for f in (bert.FAMILY, transformer.FAMILY)}


def family(name: str) -> Family:
    """The family called ``name``."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise SymparamsError(f"unknown family {name!r} (families: {', '.join(FAMILIES)})") from None
