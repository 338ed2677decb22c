"""What a base model's LM head changes: the parts its tree drops and the parts it adds, counted.

A model card counts a generative model with the head it was trained with,
and that count is not the base count plus a head: BertForMaskedLM has no
pooler, and T5's head reuses the token embedding.  The two trees (the base
model's and the one with its head) are compared module by module, and every
number is read from each model's one exact evaluation.

>>> from symparams import model
>>> change = head_change(model("bert-base"))
>>> [(p.name, p.count) for p in change.dropped], change.total - change.base
([('pooler', 590592)], 32058)
>>> [(p.name, p.count) for p in change.added]
[('cls.predictions.bias', 30522), ('cls.predictions.transform.dense', 590592), ('cls.predictions.transform.LayerNorm', 1536)]
>>> change.dropped[0].formula
'H \\\\cdot H + H'
>>> [(p.name, p.tied_name) for p in change.tied]
[('cls.predictions.decoder', 'embeddings.word_embeddings')]
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.blocks import ONE, Block, product_as_written
from ..core.errors import SymparamsError
from ..core.model import Model
from .formulas import latex


@dataclass(frozen=True)
class HeadPart:
    """One module the head drops, adds, or ties: its title key, its path as ``named_parameters()`` prints it,
    its count (0 when tied) and its formula as written (LaTeX) and, when tied, the title key and path of
    the module whose weights it reuses."""

    key: str
    name: str
    count: int
    formula: str = ""
    tied_key: str = ""
    tied_name: str = ""


@dataclass(frozen=True)
class HeadChange:
    """The base model's LM head ``head``: the totals without (``base``) and with it (``total``), and the
    modules that make the difference (``added`` less ``dropped``; ``tied`` ones add nothing)."""

    head: str
    base: int
    total: int
    dropped: tuple[HeadPart, ...]
    added: tuple[HeadPart, ...]
    tied: tuple[HeadPart, ...]
    #: the head drops only whole modules of the base model; False where the two builds list one tensor under
    #: different modules (an inferred model whose tied embedding is listed in its head), which a list of
    #: parts would tell as dropped and added
    whole: bool = True


def head_change(m: Model) -> HeadChange | None:
    """How ``m``'s LM head changes its count; None for a model with a head, or without an LM head."""
    if m.head is not None or m.lm_head is None:
        return None
    headed = m.with_head(m.lm_head)
    base_names, headed_names = _reference_names(m.tree), _reference_names(headed.tree)
    dropped, added = _difference(m.tree, headed.tree)
    leaves = _leaves(added)
    change = HeadChange(
        head=m.lm_head, base=m.count, total=headed.count,
        dropped=tuple(_part(m, block, above, base_names) for block, above in dropped),
        added=tuple(_part(headed, leaf, above, headed_names) for leaf, above in leaves
                    if leaf.tied_to is None and headed.counts_of(leaf).total),
        tied=tuple(_tied(headed, leaf, headed_names) for leaf, _ in leaves if leaf.tied_to is not None),
        whole=all(any(block is c for c in m.tree.children) for block, _ in dropped))
    if sum(p.count for p in change.added) - sum(p.count for p in change.dropped) != change.total - change.base:
        raise SymparamsError(f"{m.name}: the parts its {m.lm_head} head drops and adds do not make up the "
                             f"difference {change.total - change.base:,}")
    return change


def untied_output(c: HeadChange | None) -> HeadPart | None:
    """The output projection the head adds as a matrix of its own (not tied to the token embedding, which
    would put it in ``tied``), or None."""
    return next((p for p in c.added if p.key == "output_projection"), None) if c is not None else None


def _difference(base: Block, headed: Block, above: sp.Expr = ONE):
    """(modules only ``base`` has, modules only ``headed`` has), each with the repeats of the modules around
    it (``above``); two modules of one name and another count are compared part by part, or, where either
    is a single tensor or they repeat otherwise, dropped and added whole.  Where ``headed`` holds the base
    model one level down (an inferred ``…ForMaskedLM``'s ``roberta``), the base model is compared with it."""
    inner = _base_within(base, headed)
    if inner is not None:
        dropped, added = _difference(base, inner, above)
        return dropped, [(c, above) for c in headed.children if c is not inner] + added
    before = {c.name: c for c in base.children}
    after = {c.name: c for c in headed.children}
    dropped = [(c, above) for name, c in before.items() if name not in after]
    added = [(c, above) for name, c in after.items() if name not in before]
    for name in before.keys() & after.keys():
        old, new = before[name], after[name]
        if _same_count(old, new):
            continue
        if old.is_leaf or new.is_leaf or old.repeat != new.repeat:
            dropped.append((old, above))
            added.append((new, above))
        else:
            inner_dropped, inner_added = _difference(old, new, above * old.repeat)
            dropped += inner_dropped
            added += inner_added
    return dropped, added


def _base_within(base: Block, headed: Block) -> Block | None:
    """The child of ``headed`` that holds most of the top-level modules of ``base`` when ``headed`` itself
    holds none of them; None otherwise."""
    names = {c.name for c in base.children}
    if names & {c.name for c in headed.children}:
        return None
    shared = {c.name: len(names & {g.name for g in c.children}) for c in headed.children}
    best = max(headed.children, key=lambda c: shared[c.name], default=None)
    return best if best is not None and shared[best.name] else None


def _same_count(block: Block, other: Block) -> bool:
    """``other`` holds as many parameters as ``block``, for any sizes (two builds may split it otherwise)."""
    return sp.expand(block.total - other.total) == 0


def _leaves(blocks: list[tuple[Block, sp.Expr]]) -> list[tuple[Block, sp.Expr]]:
    """Every leaf under ``blocks`` with the repeats of the modules around it."""
    out = []
    for block, above in blocks:
        if block.is_leaf:
            out.append((block, above))
        else:
            out += _leaves([(c, above * block.repeat) for c in block.children])
    return out


def _reference_names(tree: Block) -> dict[int, str]:
    """Block (by identity) → its path in transformers (``walk`` and ``reference_paths`` visit alike)."""
    return {id(block): path for (_, block, _), (path, _) in zip(tree.walk(), tree.reference_paths())}


def _part(m: Model, block: Block, above: sp.Expr, names: dict[int, str]) -> HeadPart:
    """``block`` as the head's change lists it: every copy counted, its formula as written."""
    counts = m.counts_of(block)
    return HeadPart(block.title_key, _parameter_name(block, names),
                    int(m.evaluate(above)) * counts.repeat * counts.total,
                    formula=latex(product_as_written(above, block.total_as_written), written=True))


def _tied(m: Model, leaf: Block, names: dict[int, str]) -> HeadPart:
    target = m.block(leaf.tied_to)
    return HeadPart(leaf.title_key, _parameter_name(leaf, names), 0, tied_key=target.title_key,
                    tied_name=names[id(target)])


def _parameter_name(block: Block, names: dict[int, str]) -> str:
    """A module's path; a bare parameter's (an output bias held by its parent) is its parent's and its own."""
    path = names[id(block)]
    if block.kind == "parameter" and len(block.params) == 1 and block.params[0][0]:
        return ".".join(p for p in (path, block.params[0][0]) if p)
    return path
