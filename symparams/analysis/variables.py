"""What solve and sweep share: the symbols they vary, taken out of a model."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..core.errors import SymparamsError
from ..core.model import Model
from ..core.symbols import SYMBOLS


def as_model(m) -> Model:
    """``m`` itself, or the model a preset's or family's name stands for."""
    if isinstance(m, Model):
        return m
    if isinstance(m, str):
        from ..families.lookup import model

        return model(m)
    raise SymparamsError(f"a model or a model's name is needed, not {type(m).__name__}")


def model_symbol(m, name: str) -> sp.Symbol:
    """The symbol ``name`` of model ``m`` (one-line errors for unknown or unused names)."""
    if not isinstance(name, str):
        raise SymparamsError(f"a symbol is named by text such as 'H', not {type(name).__name__}")
    if name not in SYMBOLS:
        if any(sw.name == name for sw in m.family.switches):
            raise SymparamsError(f"{name} is a switch of {m.family.name}, not a symbol (set it with --set {name}=...)")
        raise SymparamsError(f"unknown symbol {name!r} (the symbols of {m.name}: "
                             f"{' '.join(s.name for s in m.symbols)})")
    sym = SYMBOLS[name].symbol
    if sym not in m.symbols:
        raise SymparamsError(f"symbol {name} is not used by {m.name} (its symbols: {' '.join(s.name for s in m.symbols)})")
    return sym


def without(m, symbols) -> Any:
    """``m`` with the values of ``symbols`` removed (they become free)."""
    keep = {s.name: v for s, v in m.values.items() if s not in symbols}
    return Model(m.family, keep, m.switches, m.head, m.name)


def require_values(base, free_ok, what: str) -> dict:
    missing = [s.name for s in base.free if s not in free_ok]
    if missing:
        raise SymparamsError(f"{base.name}: no value for {', '.join(missing)}, needed to {what} "
                             f"(give them with --set KEY=VALUE, or start from a preset)")
    return dict(base.values)
