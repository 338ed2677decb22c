"""What discovery found of one class's config: each field's kind and effects, the flags, the relations between
fields and where a formula of its own (a branch) starts; and the small rules every probe shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .probing import Observation, common_fields

@dataclass
class Field:
    """A config field and what moving it does.

    ``kind`` is free (a variable of the formula), irrelevant (moves, changes no shape), fixed (cannot move) or
    derived (the config computes it); ``step`` is how it moves: scale (×3, so by multipliers) or jitter (±1).
    """

    name: str
    base: Any
    kind: str = "fixed"
    step: str = ""
    effects: set = field(default_factory=set)
    followers: set = field(default_factory=set)  # fields the config moves along with this one (their default)
    sole: bool = False  # held, and the config class itself refuses every other value tried (ZAYA's top-1 routing)

    @property
    def free(self) -> bool:
        return self.kind == "free"

    @property
    def counts(self) -> bool:
        """Whether moving it changes how many instances some parameter has (a layer count)."""
        return any(e[0] == "count" for e in self.effects)

    def moved(self, step: str, effects: set) -> None:
        self.step, self.effects = step, self.effects | effects
        self.kind = "free" if self.effects else "irrelevant"


#: the other side of each kind of split
OTHER_SIDE = {"equals": "differs", "differs": "equals", "below": "atleast", "atleast": "below"}
#: the splits no change of structure shows: the fit's samples are kept to their side by the relation itself
ORDERS = ("below", "atleast")


@dataclass(frozen=True)
class Branch:
    """Where a formula of its own holds, and where its discovery starts (each a tuple of pairs, so a branch is a
    value): ``minimum``, fields at these values or above (a field held at 0 or 1 whose larger values build);
    ``given``, fields the default config leaves unset (None), set here from these values (GPT-2's ``n_inner``);
    ``split``, ``(left, kind, right)``: the side (equals or differs) of a change of structure two fields meeting
    makes (a projection between two widths exists only where they differ), started from ``start``'s values; or
    the side (below or at least) of a bound that stops mattering past another field (see :data:`ORDERS`)."""

    minimum: tuple = ()
    given: tuple = ()
    split: tuple = ()
    start: tuple = ()

    @property
    def overrides(self) -> dict:
        """The values discovery starts from."""
        return {**dict(self.minimum), **dict(self.given), **dict(self.start)}


@dataclass
class Discovery:
    """The outcome of the perturbation phase."""

    base: dict
    observation: Observation
    fields: dict[str, Field]
    flags: dict[str, Field]
    relations: set = field(default_factory=set)
    defaults: dict = field(default_factory=dict)
    lifted: dict = field(default_factory=dict)  # field → its default, for the fields discovery started above it
    branch: Branch = Branch()  # where this formula holds, when it is a branch of another
    optional: dict = field(default_factory=dict)  # unset fields (a tuple) → a value that builds and changes shapes
    quiet: set = field(default_factory=set)  # unset fields whose setting changes no shape
    empty: set = field(default_factory=set)  # lists empty by default whose entries change shapes (or do not build)
    splits: list = field(default_factory=list)  # (left, kind, right, start) of the other side of a meeting
    lowest: dict = field(default_factory=dict)  # layer counts drawn no lower than their base (a pattern of layers
    # whose first few differ: the last layer a full-attention one while there are fewer than a period)
    hidden: dict = field(default_factory=dict)  # fields the base's few layers hide → (the deeper values, the move)
    least: dict = field(default_factory=dict)  # sizes whose value 1 builds another structure (a single expert is
    # a plain MLP, no router): no lower than 2, a condition
    last_resort: bool = False  # counts may be fitted with the last levels (see fitting.BOUNDED): a formula that
    # failed without them (a type exact without them keeps its formula)
    companions: dict = field(default_factory=dict)  # the builder's per-layer lists (see Builder): another builder
    kinds: dict = field(default_factory=dict)  # of the class (the costs') configures layer counts as this one did
    sums: dict = field(default_factory=dict)  # the builder's lists that add up to a size (see Builder)
    computed: dict = field(default_factory=dict)  # widths the modeling code computes (see .computed) → their rules
    products: list = field(default_factory=list)  # (left, right): products of fields the config holds equal
    orders: set = field(default_factory=set)  # (low, high): a field the config keeps at most another (see
    # relations.ceiling), held nowhere else

    @property
    def minimum(self) -> dict:
        """A branch's fields and their lowest values."""
        return dict(self.branch.minimum)

    @property
    def free(self) -> list[str]:
        return [n for n, f in self.fields.items() if f.free]

    @property
    def sides(self) -> list[tuple[str, str, str]]:
        """The orders this formula's configurations keep to, ``(left, kind, right)``: a branch's own, and the
        other side of each order split off the main formula."""
        own = [s for s in self.branch.split if s[1] in ORDERS]
        return own + [(left, OTHER_SIDE[kind], right) for left, kind, right, _ in self.splits if kind in ORDERS]

    @property
    def flag_variables(self) -> list[str]:
        return [n for n, f in self.flags.items() if f.free]


def effects(a: Observation, b: Observation) -> set:
    """The targets that differ between two builds: ``("count", name)`` and ``("dim", name, i)``."""
    out = set()
    for name in a.shapes.keys() | b.shapes.keys():
        sa, sb = a.shapes.get(name), b.shapes.get(name)
        if sa is None or sb is None or len(sa) != len(sb):
            out.add(("count", name))
        if sa is not None and sb is not None and len(sa[0]) == len(sb[0]):
            out |= {("dim", name, i) for i in range(len(sa[0])) if sa[0][i] != sb[0][i]}
    return out


def common(name: str) -> bool:
    """Whether a field is one every config has (token ids, the dtype, the task's labels): no size of the
    architecture."""
    return "token_id" in name or name.rpartition(".")[2] in common_fields()


class Uninferable(Exception):
    """The engine cannot infer this type; the message says why, in one line."""


def moves(value: int) -> list[tuple[str, int]]:
    moves = [("scale", value * 3)] if value > 0 else []
    moves.append(("jitter", value + 1))
    if value - 1 >= 1:
        moves.append(("jitter", value - 1))
    return moves


def same(found: Discovery, obs: Observation | None, regime=None) -> bool:
    return obs is not None and obs.regime == (regime or found.observation.regime) and not obs.uneven()
