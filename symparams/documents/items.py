"""The components and parts a document shows, with a model's exact numbers laid on the tree's plans."""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import sympy as sp

from ..core.algebra import BlockCounts, whole
from ..core.blocks import Block
from ..core.model import Model
from .formulas import fill_numbers, sum_latex, times_latex, value_latex
from .module_names import printed_names, printed_tied
from .walk import Plan, module_names, plans, presented


@dataclass(frozen=True)
class Item:
    """One component or part of a model, as a document shows it.

    A group with a single child is shown as one item (``pooler`` → its
    ``dense``); identical consecutive siblings are merged into one item with
    a ``multiplicity`` (``query``, ``key``, ``value`` → ``3·A·(…)``).

    ``expr`` is one copy's count (times the multiplicity) as the document
    writes it: a leaf's count as written (``A`` visible), a group's given
    written form or else its simplified count.  ``formula`` is its LaTeX,
    ``substituted`` the same with numbers (for a group without a written
    form: the sum of its parts' counts, as the articles write
    ``12(2362368+1536+4722432+1536)``).  ``total_*`` is for all ``repeat``
    copies; ``contribution`` and ``share`` count every copy in the model.
    """

    path: str
    block_path: str
    names: tuple[str, ...]          # module names (a chain of single children: "pooler.dense")
    keys: tuple[str, ...]           # title keys; a chain's second key says what its leaf is
    depth: int
    leaf: bool
    multiplicity: int
    repeat: sp.Expr
    repeat_value: int
    copies: sp.Expr
    copies_value: int
    shape: str
    shape_values: str
    expr: sp.Expr
    formula: str
    collapsed: str | None
    substituted: str
    count: int
    total_expr: sp.Expr
    total_formula: str
    total_substituted: str
    total: int
    contribution: int
    share: sp.Rational
    tied_to: str | None
    untied: int
    trainable: bool
    per_head: bool
    cancels: bool
    children: tuple["Item", ...] = ()
    #: a component's running total: its contribution and those of the components before it
    running: int = 0
    #: the title key of what repeats (``encoder_layer``), "" when the item does not repeat
    unit: str = ""

    @property
    def key(self) -> str:
        return self.keys[0]

    def walk(self):
        """This item and every item below it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class SummaryRow:
    """A row of the summary table (a component, or one of its parts)."""

    level: int
    path: str
    names: tuple[str, ...]
    keys: tuple[str, ...]
    repeat: str          # "L" (LaTeX) when the part repeats, else ""
    repeat_value: int
    shape: str
    shape_values: str
    formula: str         # simplified, all copies
    count: int           # all copies
    share: sp.Rational
    tied_to: str | None
    trainable: bool


class Builder:
    """A model's numbers laid on the plans: every count from the model's one exact evaluation."""

    def __init__(self, m: Model, total: int):
        self.m = m
        self.values = dict(m.values)
        self.texts = {s.name: value_latex(v) for s, v in self.values.items()}
        self.grand = total

    def counts(self, block: Block) -> BlockCounts:
        """The model's exact numbers of ``block``; a step of an article's walk (:func:`presented`) adds up
        its parts'."""
        try:
            return self.m.counts_of(block)
        except KeyError:
            pass
        parts = [self.counts(c) for c in block.children]
        repeat = whole(block.repeat, self.values)
        total = sum(c.repeat * c.total for c in parts)
        trainable = sum(c.repeat * c.trainable for c in parts) if block.trainable else 0
        return BlockCounts(repeat, total, trainable, total, repeat, sum(c.used * c.active for c in parts))

    def item(self, plan: "Plan", copies_value: int) -> Item:
        """The item of ``plan`` at this model's values, held ``copies_value`` times in the model."""
        counts = [self.counts(b) for b in plan.counted]
        count, untied = sum(c.total for c in counts), sum(c.untied for c in counts)
        rep_value = math.prod(self.counts(b).repeat for b in plan.repeats)
        children: tuple[Item, ...] = ()
        if plan.leaf or plan.written:
            substituted = fill_numbers(plan.expr, self.texts, written=True)
        if not plan.leaf:
            children = tuple(self.item(c, copies_value * rep_value) for c in plan.children)
        if not plan.leaf and not plan.written:
            parts = [c.total for c in children if not c.tied_to]
            # the sum of the parts' counts, as the articles write it; one part needs no sum
            substituted = sum_latex(parts) if len(parts) > 1 else ""
        total = rep_value * count
        contribution = copies_value * total
        shape = ("[" + ", ".join(str(whole(d, self.values)) for d in plan.shape_dims) + "]") if plan.shape else ""
        shape = f"{plan.tensors} \\times {shape}" if shape and plan.tensors > 1 else shape
        item = Item(
            path=plan.path, block_path=plan.block_path, names=module_names(plan.names, self.printed),
            keys=plan.keys, depth=plan.depth, leaf=plan.leaf, multiplicity=plan.multiplicity, repeat=plan.repeat,
            repeat_value=rep_value,
            copies=plan.copies, copies_value=copies_value, shape=plan.shape, shape_values=shape,
            expr=plan.expr, formula=plan.formula, collapsed=plan.collapsed, substituted=substituted, count=count,
            total_expr=plan.total_expr, total_formula=plan.total_formula,
            total_substituted=times_latex(rep_value, count) if plan.repeated else substituted,
            total=total, contribution=contribution, share=sp.Rational(contribution, self.grand),
            tied_to=printed_tied(self.m, plan.tied), untied=untied * rep_value, trainable=plan.trainable,
            per_head=plan.per_head, cancels=plan.cancels, children=children, unit=plan.unit)
        self.plans[id(item)] = plan
        return item

    def sections(self) -> tuple[Item, ...]:
        self.plans: dict[int, Plan] = {}
        tree = presented(self.m.tree)
        self.printed = printed_names(self.m, tree)
        copies = self.counts(tree).repeat
        sections = [self.item(p, copies) for p in plans(tree)]
        out = []
        for section, running in zip(sections, itertools.accumulate(s.contribution for s in sections)):
            out.append(dataclasses.replace(section, running=running))
            self.plans[id(out[-1])] = self.plans[id(section)]
        return tuple(out)

    def summary(self, sections) -> tuple[SummaryRow, ...]:
        rows = []
        for s in sections:
            rows.append(self.row(s, 1))
            if not s.leaf:
                rows.extend(self.row(c, 2) for c in s.children)
        return tuple(rows)

    def row(self, item: Item, level: int) -> SummaryRow:
        plan = self.plans[id(item)]
        return SummaryRow(
            level=level, path=item.path, names=item.names, keys=item.keys,
            repeat=plan.row_repeat, repeat_value=item.copies_value * item.repeat_value,
            shape=item.shape, shape_values=item.shape_values, formula=plan.row_formula, count=item.contribution,
            share=item.share, tied_to=item.tied_to, trainable=item.trainable)
