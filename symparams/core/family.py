"""What an architecture family declares: switches, heads, constraints, builder.

Every family module in :mod:`symparams.families` defines one :class:`Family`
(and may name :class:`Preset` variants of it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, NamedTuple

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

    def others(self, value: Any) -> tuple:
        """Values besides ``value``, enough to tell whether a tree depends on the switch: the other choices, the
        other truth value, or for a number (a count, a window; none) the next one up."""
        if self.choices:
            return tuple(c for c in self.choices if c != value)
        if isinstance(value, bool):
            return (not value,)
        return (1 if value is None else value + 1,)


class Constraint(NamedTuple):
    """``expr`` must be a positive whole number once its symbols have values."""

    expr: sp.Expr
    message: str  # formatted with the values, e.g. "H={H} is not divisible by A={A}"
    #: the side condition as the proof states it: (LaTeX, English, Chinese)
    condition: tuple[str, str, str] | None = None


class Follows(NamedTuple):
    """A size the source leaves out and transformers computes from others, ``symbol = expr``: a config.json
    without ``num_key_value_heads`` has G = A.  ``field`` is the config's name for it."""

    symbol: sp.Symbol
    expr: sp.Expr
    field: str


#: The usual head-count constraint: H/A (the head dimension) is whole.
HEAD_DIM = Constraint(
    H / A, "H={H} is not divisible by A={A} (the head dimension H/A must be a whole number)",
    (r"A \mid H", "A divides H: H/A is the head dimension, a whole number",
     "A 整除 H：H/A 即每个头的维度，必须是整数"))

#: The FFN's intermediate size r·H is whole.
FFN_SIZE = Constraint(r * H, "r·H={value} is not a whole number (the intermediate size r·H must be one)")


@dataclass(frozen=True, eq=False)  # a family is itself: hashed by identity (its trees are cached per family)
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
    #: ``from_config(reader) -> (values, switches)``, reader a :class:`symparams.families.config.ConfigReader`;
    #: missing keys take the defaults of the family's transformers config class
    from_config: Callable[[Any], tuple[dict, dict]] | None = None
    #: built from formulas inferred from transformers' builds, not written by hand: no article tells its story
    inferred: bool = False
    #: the sizes its source leaves for transformers to compute from others (what the head-count proof reasons with)
    follows: tuple[Follows, ...] = ()

    def switch(self, name: str) -> Switch:
        for sw in self.switches:
            if sw.name == name:
                return sw
        known = ", ".join(s.name for s in self.switches) or "none"
        raise SymparamsError(f"unknown switch {name!r} for {self.name} (switches: {known})")

    def split(self, given: Mapping[str, Any], label: str) -> tuple[dict, dict]:
        """Keyword values and switches told apart: ``({"H": 1024}, {"pooler": "false"})``.

        ``label`` names the model in the error for a key that is neither.
        """
        values, switches = {}, {}
        for key, value in given.items():
            if key in SYMBOLS:
                values[key] = value
            elif any(sw.name == key for sw in self.switches):
                switches[key] = value
            else:
                names = ", ".join(sw.name for sw in self.switches) or "none"
                raise SymparamsError(f"unknown key {key!r} for {label} (symbols: {' '.join(self.symbol_names())}; "
                                     f"switches: {names})")
        return values, switches

    def symbol_names(self) -> list[str]:
        """The symbols this family's trees can use: with every switch at its default or flipped, and every
        head (in the house order)."""
        used = set()
        for head in (None, *self.heads):
            for flipped in (None, *(sw.name for sw in self.switches if isinstance(sw.default, bool))):
                given = {} if flipped is None else {flipped: not self.switch(flipped).default}
                try:
                    used.update(self.build(self.resolve(given, head), head).symbols)
                except SymparamsError:  # a switch this head does not allow
                    pass
        return [name for name in SYMBOLS if SYMBOLS[name].symbol in used]

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


class Preset(NamedTuple):
    """A named model of a family: its values and switches, described in English and Chinese."""

    name: str
    family: str
    values: Mapping[str, Any]
    switches: Mapping[str, Any] = MappingProxyType({})  # read-only: every preset without switches shares it
    en: str = ""
    zh: str = ""
    #: the transformers class that builds the same model (for the cross-checks)
    reference: str | None = None
