"""What an architecture family declares: switches, heads, constraints, builder.

Every family module in :mod:`symparams.architectures` defines one
:class:`Family`.  Values given by users are parsed here, never with
``sympify`` (which evaluates text): sizes with ``int``, ratios with
``fractions.Fraction``.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping

import sympy as sp

from .blocks import Block
from .errors import SymparamsError
from .symbols import SYMBOLS, A, H, r

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


@dataclass(frozen=True)
class Switch:
    """A structural option: a boolean, or one of ``choices``."""

    name: str
    default: Any
    choices: tuple[str, ...] = ()  # empty: boolean
    en: str = ""
    zh: str = ""

    def parse(self, raw: Any) -> Any:
        if not self.choices:
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise SymparamsError(f"switch {self.name} takes true or false, not {str(raw)!r}")
        text = str(raw).strip().lower()
        if text not in self.choices:
            raise SymparamsError(f"switch {self.name} takes one of {', '.join(self.choices)}, not {str(raw)!r}")
        return text


@dataclass(frozen=True)
class Constraint:
    """``expr`` must be a positive whole number once its symbols have values."""

    expr: sp.Expr
    message: str  # formatted with the values, e.g. "H={H} is not divisible by A={A}"
    #: the side condition as the proof states it: (LaTeX, English, Chinese)
    condition: tuple[str, str, str] | None = None


#: The usual head-count constraint: H/A (the head dimension) is whole.
HEAD_DIM = Constraint(
    H / A, "H={H} is not divisible by A={A} (the head dimension H/A must be a whole number)",
    (r"A \mid H", "A divides H: H/A is the head dimension, a whole number",
     "A 整除 H：H/A 即每个头的维度，必须是整数"))

#: The FFN's intermediate size r·H is whole.
FFN_SIZE = Constraint(r * H, "r·H={value} is not a whole number (the intermediate size r·H must be one)")


@dataclass(frozen=True)
class Family:
    """An architecture family.

    ``build(switches, head)`` returns the Block tree; ``resolve`` fills
    defaults (some depend on the head: BERT's pooler).
    """

    name: str
    title: Mapping[str, str]
    build: Callable[[Mapping[str, Any], str | None], Block]
    switches: tuple[Switch, ...] = ()
    heads: tuple[str, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    defaults: Mapping[sp.Symbol, sp.Expr] = field(default_factory=dict)  # e.g. C = 2 labels
    components: tuple[str, ...] = ()  # top-level components always reported
    resolve_switches: Callable[[dict, str | None], dict] | None = None
    #: ``model_type`` values of the config.json files this family reads
    config_types: tuple[str, ...] = ()
    #: ``from_config(reader) -> (values, switches)``, reader a :class:`symparams.config.ConfigReader`;
    #: missing keys take the defaults of the family's transformers config class
    from_config: Callable[[Any], tuple[dict, dict]] | None = None

    def switch(self, name: str) -> Switch:
        for sw in self.switches:
            if sw.name == name:
                return sw
        known = ", ".join(s.name for s in self.switches) or "none"
        raise SymparamsError(f"unknown switch {name!r} for {self.name} (switches: {known})")

    def check_head(self, head: str | None) -> str | None:
        if head is None or head in ("", "none", "base"):
            return None
        if head not in self.heads:
            known = ", ".join(self.heads) or "none"
            raise SymparamsError(f"unknown head {head!r} for {self.name} (heads: {known})")
        return head

    def resolve(self, given: Mapping[str, Any], head: str | None) -> dict[str, Any]:
        """All switches, parsed, with defaults filled in."""
        switches = {}
        for name, raw in given.items():
            switches[name] = self.switch(name).parse(raw)
        for sw in self.switches:
            switches.setdefault(sw.name, sw.default)
        if self.resolve_switches is not None:
            switches = self.resolve_switches(switches, head)
        return switches


def parse_value(name: str, raw: Any) -> sp.Expr:
    """Parse a user-given value for symbol ``name`` exactly.

    Sizes must be positive whole numbers; a ratio (``r``) a positive
    rational, written ``4``, ``11008/4096`` or ``2.6875``.

    >>> parse_value("H", "768")
    768
    >>> parse_value("r", "11008/4096")
    43/16
    >>> parse_value("H", "7.5")
    Traceback (most recent call last):
    ...
    symparams.errors.SymparamsError: H must be a positive whole number, not '7.5'
    """
    info = SYMBOLS.get(name)
    if info is None:
        raise SymparamsError(f"unknown symbol {name!r} (known: {', '.join(SYMBOLS)})")
    if isinstance(raw, bool):
        raise SymparamsError(f"{name} must be a number, not {raw!r}")
    if info.rational:
        try:
            if isinstance(raw, float):
                raise ValueError
            value = Fraction(raw.strip() if isinstance(raw, str) else raw)
        except (ValueError, ZeroDivisionError, TypeError):
            raise SymparamsError(f"{name} must be a positive rational such as 4 or 11008/4096, not {str(raw)!r}") from None
        if value <= 0:
            raise SymparamsError(f"{name} must be positive, not {str(raw)!r}")
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, (sp.Integer,)):
        value = int(raw)
    elif isinstance(raw, str) and re.fullmatch(r"\+?[0-9]+", raw.strip(), flags=re.ASCII):
        value = int(raw.strip())
    else:
        raise SymparamsError(f"{name} must be a positive whole number, not {str(raw)!r}")
    if value <= 0:
        raise SymparamsError(f"{name} must be a positive whole number, not {str(raw)!r}")
    return sp.Integer(value)


@dataclass(frozen=True)
class Preset:
    name: str
    family: str
    values: Mapping[str, Any]
    switches: Mapping[str, Any] = field(default_factory=dict)
    en: str = ""
    zh: str = ""
    #: the transformers class that builds the same model (for the cross-checks)
    reference: str | None = None
