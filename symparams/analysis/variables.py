"""What solve and sweep share: the symbols they vary, taken out of a model."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..core.compute import BATCH, SEQ, declares_attention, traced, untraced
from ..core.errors import SymparamsError
from ..core.model import Model
from ..core.symbols import SYMBOLS
from ..core.values import parse_whole
from .flops import flop_terms

#: the pass's own sizes, which FLOPs may vary over: tokens per sequence, sequences
PASS_SIZES = {"s": SEQ, "b": BATCH}

#: what solve and sweep evaluate, and how outputs name it: the parameter count, or the FLOPs of a forward
#: pass or a training step
QUANTITIES = {"parameters": "parameters", "flops": "FLOPs", "training_flops": "training FLOPs"}


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


def quantity(of) -> str:
    if of not in QUANTITIES:
        raise SymparamsError(f"one of {', '.join(QUANTITIES)}, not {str(of)[:40]!r}")
    return of


def quantity_of(tree, of: str) -> sp.Expr:
    """The expression a sweep evaluates: the count, or FLOPs in the model's symbols and s, b."""
    if of == "parameters":
        return tree.total
    if "costs" in untraced(tree):
        raise SymparamsError(f"the FLOPs of this model are not known: {untraced(tree)['costs']}")
    if not (declares_attention(tree) or traced(tree)):
        raise SymparamsError("this model does not declare its attention modules, so the FLOPs of attention are "
                             "not known")
    terms = flop_terms(tree)
    return sp.expand(sp.Add(*(t.forward + (t.backward if of == "training_flops" else 0) for t in terms)))


def pass_sizes(of: str, symbols, seq, batch) -> dict:
    """Values of s and b for FLOPs: given, or varied (on a grid, solved for); b defaults to 1."""
    if of == "parameters":
        if seq is not None or batch is not None:
            raise SymparamsError("a sequence length or batch size is for FLOPs (--of flops)")
        return {}
    out = {}
    for symbol, given, default in ((SEQ, seq, None), (BATCH, batch, 1)):
        if symbol in symbols:
            if given is not None:
                raise SymparamsError(f"{symbol} varies: do not also give it a value")
            continue
        if given is None and default is None:
            raise SymparamsError("FLOPs need a sequence length: give --seq S (or vary s)")
        out[symbol] = sp.Integer(parse_whole(symbol.name, default if given is None else given))
    return out


def pass_size_or_symbol(m, key: str, of: str) -> sp.Symbol:
    """The symbol ``key`` names: the pass's ``s`` or ``b`` for FLOPs, else one of the model's symbols."""
    if isinstance(key, str) and key in PASS_SIZES:
        if of == "parameters":
            raise SymparamsError(f"{key} ({'tokens per sequence' if key == 's' else 'sequences'}) sizes a pass, "
                                 f"not the model: it varies FLOPs (--of flops), not the parameter count")
        return PASS_SIZES[key]
    return model_symbol(m, key)
