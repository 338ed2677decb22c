"""The module names a document prints: transformers' own, with the index where layers differ.

A Block's ``ref`` writes the index of a ``ModuleList`` as ``*`` (``layers.*``): the path every entry
shares, which is how the per-module counts are compared with ``named_parameters()``.  Where a list's
entries are not all alike, ``*`` names modules that do not exist: T5's sub-layers are all ``layer.*``
(self-attention, cross-attention, feed-forward), DeepSeek-V3's dense and expert layers are both
``layers.*``.  Siblings whose ``ref`` is one starred segment are the entries of one list, in order, so a
document prints their indices: ``layer.0``, ``layer.1``, ``layer.2`` for single modules, ``layers.0–2``
and ``layers.3–60`` for stacks.  A list of one kind of entry keeps its ``*``: every index has the module.

>>> from symparams import model
>>> names = printed_names(model("deepseek-v3"))
>>> sorted({n for n in names.values() if n.startswith("layers.")})
['layers.0–2', 'layers.3–60']
"""

from __future__ import annotations

from ..core.blocks import Block
from ..core.model import Model
from ..core.module_paths import list_entries
from .walk import presented


def printed_names(m: Model, tree: Block | None = None) -> dict[int, str]:
    """Block (by identity) → its path segment as a document prints it, for every block of ``tree``
    (default: the tree the documents walk, :func:`~symparams.documents.walk.presented`)."""
    tree = presented(m.tree) if tree is None else tree
    out: dict[int, str] = {}
    _name(tree, m.values, out)
    return out


def _name(block: Block, values, out: dict[int, str]) -> None:
    out.setdefault(id(block), block.name if block.ref is None else block.ref)
    for child_id, (prefix, first, last) in list_entries(block, values).items():
        out[child_id] = f"{prefix}.{first}" if first == last else f"{prefix}.{first}–{last}"
    for child in block.children:
        _name(child, values, out)


def printed_paths(m: Model) -> dict[str, str]:
    """A module's path as ``reference_paths`` writes it (``layers.*`` for every list) → the path a document
    prints, where every block of that path has the same printed path (T5's ``block.*.layer.0.SelfAttention.q``);
    a path the blocks of several kinds share (DeepSeek's ``layers.*.self_attn.o_proj``, dense and expert
    layers) stays as written, true of every index."""
    names = printed_names(m, m.tree)
    found: dict[str, set[str]] = {}
    for path, block, printed in _paths(m.tree, "", "", names):
        found.setdefault(path, set()).add(printed)
    return {path: next(iter(printed)) for path, printed in found.items() if len(printed) == 1}


def printed_tied(m: Model, tied_to: str | None) -> str | None:
    """The module a tied block reuses (``tied_to``, a path in our names such as ``embeddings.shared``) as
    ``named_parameters()`` names it (``shared``): a document never prints a path transformers lacks."""
    if tied_to is None:
        return None
    owner = m.tree.find(tied_to)
    names = printed_names(m, m.tree)
    return next(printed for _, block, printed in _paths(m.tree, "", "", names) if block is owner)


def _paths(block: Block, path: str, printed: str, names: dict[int, str]):
    seg = block.name if block.ref is None else block.ref
    path = ".".join(p for p in (path, seg) if p)
    printed = ".".join(p for p in (printed, names[id(block)]) if p)
    yield path, block, printed
    for child in block.children:
        yield from _paths(child, path, printed, names)
