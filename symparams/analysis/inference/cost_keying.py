"""How the products of a module's copies are told apart where they differ: the ways tried, in order, each kept for
every trace of the class once it is taken (see :meth:`.costs.Domain.observe`).

A module's copies (its layers, its calls) share one key as long as their
products are equal; where they differ the class has no costs, unless they
are told apart by: the names of their layers' parameters (a hybrid stack's
state-space and attention mixers under one name), then each call of the
module within one call of its parent (a projection of the tokens, then of
the global tokens), then the place of each layer in a period of the lists
the module lies in (Pegasus-X's even and odd layers; Funnel's blocks, each
at its own pooled length, and the first layer of each, which pools).
"""

from __future__ import annotations

import re

from .observing import CopiesDiffer

#: (the domain's attribute, its value): each way of telling copies apart, taken with those before it
KEYINGS = (("by_names", True), ("by_calls", True))
#: the longest period of places tried: a pattern longer than this is left refused
MOST_PERIOD = 6
#: a list index in a module's path, as tracing writes it: ``*``, ``*2`` (a kind), ``*@1`` (a place)
_LIST_INDEX = re.compile(r"\*\d*(@\d+)?$")


def keyed_apart(domain, trace_base):
    """``trace_base()`` (the base trace), taken with each of :data:`KEYINGS` in turn while a module's products
    differ between its copies, then with its lists keyed by place (:func:`_by_places`); the last one's error
    where none tells them apart."""
    for attribute, value in KEYINGS:
        try:
            return trace_base()
        except CopiesDiffer:
            setattr(domain, attribute, value)
    return _by_places(domain, trace_base)


def _by_places(domain, trace_base):
    """``trace_base()`` with the lists holding each module whose copies differ keyed by place, the period of
    those lists one longer each time the module's copies still differ (2: even and odd layers; as long as the
    list: each layer apart).  Only the lists of such a module: a stack of another length in every configuration
    (a decoder of L_d layers) keeps its copies under one key.  The period found holds for every later trace:
    a configuration whose layers differ otherwise is refused there, never fitted."""
    while True:
        try:
            return trace_base()
        except CopiesDiffer as exc:
            lists = lists_of(exc.module)
            period = max((domain.positions.get(name, 1) for name in lists), default=MOST_PERIOD) + 1
            if period > MOST_PERIOD:
                raise
            domain.positions.update({name: period for name in lists})


def lists_of(module: str) -> list[str]:
    """The lists ``module`` lies in, by their normalised paths (places and kinds as plain ``*``).

    >>> lists_of("encoder.blocks.*@1.*2@0.attention.q_head")
    ['encoder.blocks', 'encoder.blocks.*']
    """
    parts = module.split(".") if module else []
    plain = ["*" if _LIST_INDEX.match(p) else p for p in parts]
    return [".".join(plain[:i]) for i, p in enumerate(parts) if _LIST_INDEX.match(p)]
