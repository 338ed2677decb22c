"""A mixture of experts' tensors as its released checkpoints store them: one tensor per expert and projection.

transformers 5 holds a layer's routed experts fused (``mlp.experts.gate_up_proj`` ``[E, 2F, H]``,
``mlp.experts.down_proj`` ``[E, H, F]``), and converts a checkpoint's per-expert tensors when it loads them:
``data/checkpoint_layouts.json``, written from transformers' own ``conversion_mapping`` by
``scripts/checkpoint_layouts.py``, says which per-expert names stack into which fused tensor (gate and up
concatenated along the output dimension) and which modules are renamed (Mixtral's ``block_sparse_moe`` is
``mlp``).  The audit expects the per-expert tensors where the file holds them (any name of that layout), the
fused ones otherwise.

>>> from symparams import model
>>> from symparams.analysis.stored import stored_tensors
>>> m = model("mixtral")
>>> [(t.path, t.shape, t.copies) for t in as_checkpoint(m, stored_tensors(m.tree), ["x.block_sparse_moe.y"])][7:10]
[('layers.*.block_sparse_moe.gate.weight', (N_e, H), L), ('layers.*.block_sparse_moe.experts.*.w1.weight', (F_e, H), L*N_e), ('layers.*.block_sparse_moe.experts.*.w3.weight', (F_e, H), L*N_e)]
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Sequence

import sympy as sp

from ..core.errors import SymparamsError
from .stored import Stored

DATA = os.path.join(os.path.dirname(__file__), "..", "families", "data", "checkpoint_layouts.json")


@lru_cache(maxsize=1)
def _layouts() -> dict:
    with open(DATA, encoding="utf-8") as f:
        return json.load(f)


def layout_of(m) -> dict:
    """The checkpoint layout of ``m``'s experts (its config type's, else its family's); refused where
    transformers records none or one the audit cannot follow."""
    types = (*m.family.config_types, m.family.name)
    found = next((_layouts()[t] for t in types if t in _layouts()), None)
    if found is None:
        raise SymparamsError(f"the audit does not know how checkpoints of {types[0]} store its routed experts "
                             f"(transformers' conversion mapping has no entry for it)")
    if "refused" in found:
        raise SymparamsError(f"the audit does not read checkpoints of {types[0]}: {found['refused']}")
    return found


def as_checkpoint(m, tensors: Sequence[Stored], names: Sequence[str]) -> tuple[Stored, ...]:
    """``tensors`` (the model's, experts fused) as a checkpoint whose tensor names are ``names`` stores them: per
    expert, renamed back, where one name is of that layout; as they are otherwise."""
    if not any(t.part == "experts" for t in tensors):
        return tuple(tensors)
    found = layout_of(m)
    if not _per_expert(found, names):
        return tuple(tensors)
    out = []
    for t in tensors:
        out += _split(t, found["experts"]) if t.part == "experts" else [t]
    return tuple(t._replace(path=_renamed_back(t.path, found["rename"])) for t in out)


def _per_expert(found: dict, names: Sequence[str]) -> bool:
    """Whether the file's names are the per-expert layout: one holds a renamed module or an expert's index."""
    sources = [_regex(s) for c in found["experts"] for s in c["from"]]
    return any(old in name for name in names for old, _ in found["rename"]) or \
        any(r.search(name) for name in names for r in sources)


def _regex(pattern: str) -> re.Pattern:
    return re.compile(re.escape(pattern).replace(r"\*", r"\d+") + "$")


def _split(t: Stored, converters: list) -> list[Stored]:
    """A fused expert tensor as the per-expert tensors it is stacked from, its output dimension split among the
    projections concatenated into it."""
    path = "." + t.path
    for c in converters:
        target = c["to"] if c["to"].startswith(".") else "." + c["to"]
        if path.endswith(target):
            base = path[: -len(target)]
            n = len(c["from"])
            out, rest = t.shape[0], t.shape[1:]
            return [Stored((base + (s if s.startswith(".") else "." + s))[1:], (sp.expand(out / n), *rest),
                           t.copies, t.part) for s in c["from"]]
    raise SymparamsError(f"{t.path}: transformers' conversion mapping does not say how checkpoints store it")


def _renamed_back(path: str, renames: list) -> str:
    """A model's name as the checkpoint writes it: each renaming undone (``.mlp.`` → ``.block_sparse_moe.``)."""
    for old, new in renames:
        path = ("." + path + ".").replace(new, old)[1:-1]
    return path
