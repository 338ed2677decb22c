"""Where a Block's modules sit in transformers' module tree, index by index.

A Block's ``ref`` writes the index of a ``ModuleList`` as ``*`` (``layers.*``): the path every entry
shares.  Where one list holds entries of more than one kind (T5's sub-layers ``layer.*``: self-attention,
cross-attention, feed-forward; DeepSeek-V3's dense and expert layers, both ``layers.*``), the ``*`` names
modules that do not exist, and each kind sits at indices of its own, in order: :func:`list_entries`.
A message that names one module (a refusal) names its first copy, as ``named_parameters()`` prints it:
:func:`first_module_paths`.

>>> from symparams import model
>>> m = model("t5-base")
>>> first_module_paths(m.tree, m.values)["t5.encoder.block.feed_forward.DenseReluDense.wi"]
'encoder.block.0.layer.1.DenseReluDense.wi'
"""

from __future__ import annotations

from typing import Mapping

import sympy as sp

from .algebra import whole
from .blocks import Block


def list_entries(block: Block, values: Mapping[sp.Symbol, sp.Expr]) -> dict[int, tuple[str, int, int]]:
    """The children of ``block`` that are the entries of one list holding more than one kind of entry: siblings
    whose ``ref`` is one starred segment, in order, each kind with as many indices as it has copies.  Child (by
    identity) → (the list's name, its first index, its last index).

    >>> from symparams import model
    >>> m = model("deepseek-v3")
    >>> decoder = m.tree.find("decoder")
    >>> sorted(first_last[1:] for first_last in list_entries(decoder, m.values).values())
    [(0, 2), (3, 60)]
    """
    lists: dict[str, list[Block]] = {}
    for child in block.children:
        if child.ref and child.ref.endswith(".*") and "*" not in child.ref[:-2]:
            lists.setdefault(child.ref[:-2], []).append(child)
    out: dict[int, tuple[str, int, int]] = {}
    for prefix, listed in lists.items():
        if len(listed) > 1:
            first = 0
            for child in listed:
                last = first + whole(child.repeat, values) - 1
                out[id(child)] = (prefix, first, last)
                first = last + 1
    return out


def first_module_paths(tree: Block, values: Mapping[sp.Symbol, sp.Expr]) -> dict[str, str]:
    """Each block's path as :meth:`~symparams.core.blocks.Block.walk` writes it (our names) → the path
    ``named_parameters()`` gives its first copy (transformers' names, every index a number)."""
    out: dict[str, str] = {}

    def visit(block: Block, path: str, printed: str, segment: str) -> None:
        path = f"{path}.{block.name}" if path else block.name
        printed = ".".join(p for p in (printed, segment.replace("*", "0")) if p)
        out[path] = printed
        entries = list_entries(block, values)
        for child in block.children:
            if id(child) in entries:
                prefix, first, _ = entries[id(child)]
                visit(child, path, printed, f"{prefix}.{first}")
            else:
                visit(child, path, printed, child.name if child.ref is None else child.ref)

    visit(tree, "", "", tree.name if tree.ref is None else tree.ref)
    return out
