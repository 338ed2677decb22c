"""The rule of thumb ``N ≈ 12·L·H² + (V+P+S)·H`` beside the exact count, for the models it is meant for."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..core.blocks import product_as_written, sum_as_written
from ..core.symbols import A, H, L, L_d, L_f


@dataclass(frozen=True)
class RuleOfThumb:
    """The estimate ``N ≈ 12·L·H² + (V+P+S)·H``: the weight matrices of the L layers (four H×H attention
    projections, two H×4H feed-forward matrices) and the embedding tables, nothing else.

    ``formula`` is written as the estimate is usually quoted, ``value`` is it at the model's values and
    ``total`` the exact count; ``share`` = value / total, exactly.
    """

    formula: sp.Expr
    value: int
    total: int

    @property
    def share(self) -> sp.Rational:
        return sp.Rational(self.value, self.total)

    def to_dict(self) -> dict[str, Any]:
        return {"formula": sp.sstr(self.formula), "formula_latex": sp.latex(self.formula, order="none"),
                "value": self.value, "total": self.total, "share": sp.sstr(self.share)}


#: layer counts of a second stack (decoder, dense layers before the experts): 12·L·H² does not describe them
_OTHER_STACKS = (L_d, L_f)
#: what one layer of the rule of thumb holds: 4·H² of attention, 2·4·H² of feed-forward
_THUMB_LAYER = 12


def rule_of_thumb(m) -> RuleOfThumb | None:
    """``N ≈ 12·L·H² + (V+P+S)·H`` for ``m``, or None where the estimate does not describe the model.

    It is meant for one stack of L layers whose weight matrices hold 12·H² (a 4·H² attention and a
    feed-forward of ratio 4, 2·(2 + r)·H² with r = 4): it applies when, at the model's values, N has
    exactly 12·L·H² and no second stack.  The embedding tables are the model's own (``(V+P+S)·H`` for
    BERT, ``(V+P)·H`` for GPT-2).  Needs every value.

    >>> from symparams import model
    >>> sp.sstr(rule_of_thumb(model("gpt2")).formula, order="none")
    '12*L*H**2 + (V + P)*H'
    >>> rule_of_thumb(model("llama-2-7b")) is None  # a gated feed-forward of width F = 11008: not 12·H²
    True
    """
    if m.free or H not in m.symbols or L not in m.symbols or set(_OTHER_STACKS) & set(m.symbols):
        return None
    others = {s: v for s, v in m.values.items() if s not in (H, L)}
    n = sp.expand(m.closed_form.xreplace(others))
    if not n.is_polynomial(H, L) or sp.Poly(n, H, L).coeff_monomial(H**2 * L) != _THUMB_LAYER:
        return None
    formula = sum_as_written(product_as_written(_THUMB_LAYER, L, H**2), *embedding_tables(m.tree))
    return RuleOfThumb(formula, int(sp.expand(formula.doit()).xreplace(m.values)), m.count)


def embedding_tables(tree) -> list[sp.Expr]:
    """The tables that embed tokens, positions and segments, written as the articles write them:
    ``(V + P + S)·H`` (a relative bias table, one column per head, is no such table)."""
    rows: dict[sp.Expr, list] = {}
    for _, block, copies in tree.walk():
        if block.is_leaf and block.kind == "embedding" and block.tied_to is None and copies == 1:
            num, dim = block.shape
            if A not in dim.free_symbols:
                rows.setdefault(dim, []).append(num)
    # two tables of one size (an encoder's and a decoder's sinusoidal positions) are written 2·P
    return [product_as_written(sum_as_written(*(product_as_written(n, num) for num, n in Counter(nums).items())), dim)
            for dim, nums in rows.items()]
