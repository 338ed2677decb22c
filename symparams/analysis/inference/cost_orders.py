"""Whether a relation the cost discovery finds between two fields is divisibility or an order.

The discovery finds a field that traces only when moved with another (the
dense layers first moved with the layer count; a key/value head count with
the heads) and records ``f ⊑ g``.  Which kind of relation that is, the
bases cannot say where ``f`` divides ``g`` there: at a base of 1 both hold.
So it is traced where the two kinds differ (:func:`ordered`); an order's
greater field is drawn off the lesser's multiples in the verification
(:func:`off_multiples`), and its formulas vouched for only where that
verification passes (see :func:`~.cost_engine._verified`).  The count's own
relations bound the costs' too (:func:`outside_count`).
"""

from __future__ import annotations

import random
from typing import Callable

from .result import Conditions


def ordered(observe: Callable, base, name: str, other: str, moved: dict) -> bool:
    """Whether the relation ``name ⊑ other``, found at ``moved`` where ``name`` divides ``other``, is an order:
    whether ``observe`` (a trace at the base length, None where it does not run) keeps the base structure where ``name`` is
    at most ``other`` and no divisor of it (``other`` one up, ``name`` at least 2).  DeepSeek-V2's one dense layer
    first, below two layers, divides them; three dense layers of seven trace: only the order is true.  Bases that
    do not divide show an order already (see :func:`relation_kind`)."""
    a, b = moved[name], moved[other]
    if not _whole(a) or a < 2 or not _whole(b) or a > b or b % a:
        return False
    obs = observe({**moved, other: b + 1})
    return obs is not None and obs.structure == base.structure


def relation_kind(found, relations: set, orders: set, f: str, g: str) -> str:
    """The kind of the relation ``f ⊑ g`` among ``relations``: ``equals`` (both ways, equal at the base), ``below``
    where it is one of ``orders`` (see :func:`ordered`) or the bases do not divide, else ``divides``."""
    a, b = found.fields[f].base, found.fields[g].base
    if (g, f) in relations and a == b:
        return "equals"
    return "below" if (f, g) in orders or not (a and b % a == 0) else "divides"


def off_multiples(domain, values: dict, rng: random.Random) -> None:
    """One time in two, the greater field of each of ``domain``'s orders drawn anew above the lesser, up to the
    multiple of it the draws' lattice gave (a sparse layer in every 3 of 7 layers), unless another relation needs it
    on the multiples: the formulas must hold wherever the order does, not only where it divides."""
    found = domain.found
    divisible = {n for pair in found.relations | domain.relations if pair not in domain.orders for n in pair}
    for f, g in sorted(domain.orders):
        if g not in divisible and rng.random() < 0.5:
            values[g] = rng.randint(values[f] + 1, max(values[f] + 1, values[g]))


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def outside_count(domain, values: dict, fields: set | None = None) -> bool:
    """Whether ``values``, as the trace builds them (the fields the costs hold at their values), break a relation
    of the count's formula (only those that name one of ``fields``, where given)."""
    relations = tuple(r for r in domain.count_relations
                      if fields is None or {*r.left.split("*"), *r.right.split("*")} & fields)
    return bool(Conditions(relations=relations).violated({**domain.start, **values, **domain.held}))
