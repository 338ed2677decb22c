"""How the products of a module's copies are told apart where they differ: the ways tried, in order, each kept for
every trace of the class once it is taken (see :meth:`.costs.Domain.observe`).

A module's copies (its layers, its calls) share one key as long as their
products are equal; where they differ the class has no costs, unless they
are told apart by: the names of their layers' parameters (a hybrid stack's
state-space and attention mixers under one name), then each call of the
module within one call of its parent (a projection of the tokens, then of
the global tokens).
"""

from __future__ import annotations

from .tracing import Untraceable

#: (the domain's attribute, its value): each way of telling copies apart, taken with those before it
KEYINGS = (("by_names", True), ("by_calls", True))


def keyed_apart(domain, trace_base):
    """``trace_base()`` (the base trace), taken with each of :data:`KEYINGS` in turn while a module's products
    differ between its copies; the last one's error where none tells them apart."""
    for attribute, value in KEYINGS:
        try:
            return trace_base()
        except Untraceable as exc:
            if "differ between its copies" not in str(exc):
                raise
            setattr(domain, attribute, value)
    return trace_base()
