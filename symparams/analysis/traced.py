"""What the inferred data leaves unknown for a model, refused in one line where a figure needs it.

A model of an inferred type carries its costs as items of its Block tree
(:mod:`symparams.families.inferred_costs`); where the data holds none, or
not this one, the tree says why (:class:`~symparams.core.compute.Untraced`)
and the figures that need it are refused with that reason, never computed
from what is left (a missing cache would read as an encoder's 0).

>>> from symparams import model
>>> require(model("bert-base"), "cache", what="the KV cache")  # a hand family: nothing is unknown
"""

from __future__ import annotations

from ..core.compute import untraced
from ..core.errors import SymparamsError


def require(model, *costs: str, what: str) -> None:
    """Refuse ``what`` (a figure, "the FLOPs") in one line when the model's costs as a whole, or any of ``costs``
    (``"cache"``, ``"activations"``), are unknown."""
    unknown = untraced(model.tree)
    for cost in ("costs", *costs):
        if cost in unknown:
            raise SymparamsError(f"{model.name}: {what} not known: {unknown[cost]}")
