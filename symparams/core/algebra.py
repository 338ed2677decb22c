"""The two ways a Block tree becomes numbers: its simplified closed form, and exact integers.

:func:`closed_form` is the total as a reader sees it (collected in H² and H; per kind of layer where the
first ``L_f`` layers differ from the others).
:func:`exact_counts` is the one exact evaluation every number any output
shows comes from: each parameter's size is evaluated at the values and the
integers are added up the tree (cheaper than substituting into the symbolic
sums; the test-suite checks that both agree for every preset and head).

>>> from symparams import model
>>> m = model("bert-base")
>>> counts = exact_counts(m.tree, m.values)
>>> counts[id(m.tree.find("embeddings"))]
BlockCounts(repeat=1, total=23837184, trainable=23837184, untied=23837184, used=1, active=23837184)
>>> closed_form(m.tree.total)
H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Mapping, NamedTuple

import sympy as sp

from .blocks import Block
from .symbols import H, L, L_f


@lru_cache(maxsize=4096)
def closed_form(expr: sp.Expr) -> sp.Expr:
    """The simplified total: expanded, then collected in H² and H (see :func:`per_layer_kind` for a model
    whose first ``L_f`` layers differ).

    Collecting by powers of the hidden size reads like the articles'
    "quadratic part plus linear part".
    """
    expr = sp.expand(expr)
    return per_layer_kind(expr, _in_powers_of_h)


def by_layer_kind(expr: sp.Expr) -> bool:
    """Whether ``expr`` (a :func:`closed_form`) is written per kind of layer, ``L_f`` and ``L − L_f``."""
    return any(L - L_f in sp.Mul.make_args(term) for term in sp.Add.make_args(expr))


def _in_powers_of_h(expr: sp.Expr) -> sp.Expr:
    if not expr.has(H):
        return expr
    collected = sp.collect(expr, H, evaluate=False)
    return sp.Add(*(power * _coefficient(coeff) for power, coeff in collected.items()))


#: stands for L − L_f while the terms are sorted by the kind of layer they belong to
_OTHER_LAYERS = sp.Dummy("L_other", positive=True, integer=True)


def per_layer_kind(expr: sp.Expr, shape) -> sp.Expr:
    """``expr`` as ``L_f·(one dense layer) + (L − L_f)·(one other layer) + the rest``, each part
    written by ``shape``, where the model has ``L_f`` layers of a kind of their own; else ``shape(expr)``.

    Expanded, the ``L − L_f`` layers leave terms such as ``−3·F_e·H·L_f·N_e``
    that a reader cannot match with any part of the model; written per kind
    of layer every term is a part, and ``L_f`` multiplies its layer once.
    """
    if not expr.has(L_f):
        return shape(expr)
    split = sp.collect(sp.expand(expr.xreplace({L: L_f + _OTHER_LAYERS})), [L_f, _OTHER_LAYERS], evaluate=False)
    if not set(split) <= {L_f, _OTHER_LAYERS, sp.S.One}:
        return shape(expr)
    kinds = {L_f: L_f, _OTHER_LAYERS: L - L_f}
    return sp.Add(*(sp.Mul(kinds[key], shape(part), evaluate=False) if key in kinds else shape(part)
                    for key, part in split.items()))


@lru_cache(maxsize=4096)
def _coefficient(coeff: sp.Expr) -> sp.Expr:
    """A coefficient of the closed form, collected in L: many totals share their coefficients."""
    return sp.factor_terms(sp.collect(coeff, L))


@lru_cache(maxsize=8192)
def evaluated(expr: sp.Expr) -> sp.Expr:
    """``expand(expr.doit())``: the count an as-written form stands for."""
    return sp.expand(expr.doit())


def whole(expr, values: Mapping[sp.Symbol, sp.Expr], what: str = "") -> int:
    """``expr`` at ``values`` as an exact integer (a ``ValueError`` when it is not whole)."""
    value = expr.xreplace(values) if isinstance(expr, sp.Basic) else sp.Integer(expr)
    if not value.is_Integer:
        value = sp.expand(value.doit())
    if not value.is_Integer:
        raise ValueError(f"{what}{expr} is {value} at these values, not a whole number")
    return int(value)


class BlockCounts(NamedTuple):
    """One block's numbers at given values.

    ``repeat`` is how many copies its parent holds; ``total`` and
    ``trainable`` count one copy (0 when tied); ``untied`` is one copy's
    size as if it held its own weights (what a tied block would add).
    ``used`` is how many of the copies one token passes through (the top-k
    of routed experts; else ``repeat``), ``active`` what one token uses of
    one copy.
    """

    repeat: int
    total: int
    trainable: int
    untied: int
    used: int
    active: int


def exact_counts(tree: Block, values: Mapping[sp.Symbol, sp.Expr], what: str = "") -> dict[int, BlockCounts]:
    """``id(block)`` → :class:`BlockCounts` for every block of ``tree``, every symbol given a value."""
    out: dict[int, BlockCounts] = {}

    def visit(block: Block) -> BlockCounts:
        untied = sum(whole(n, values, what) for _, n in block.params)
        trainable = active = untied
        for child in block.children:
            c = visit(child)
            untied += c.repeat * c.total
            trainable += c.repeat * c.trainable
            active += c.used * c.active
        tied = block.tied_to is not None
        repeat = whole(block.repeat, values, what)
        counts = BlockCounts(repeat, 0 if tied else untied, 0 if tied or not block.trainable else trainable, untied,
                             repeat if block.used is None else whole(block.used, values, what), 0 if tied else active)
        out[id(block)] = counts
        return counts

    visit(tree)
    return out


#: head counts are found among the divisors of H; past this many, enumerating them is not worth its cost
MAX_DIVISORS = 4096


def small_divisors(n: int) -> list[int] | None:
    """The divisors of ``n``, or None when finding them would be costly (a large factor that trial
    division does not find, or more than :data:`MAX_DIVISORS` divisors).

    >>> small_divisors(768)[:6], len(small_divisors(768))
    ([1, 2, 3, 4, 6, 8], 18)
    >>> small_divisors(1000000007 * 998244353 * 10**30 + 1) is None
    True
    """
    factors = sp.factorint(n, limit=10**5, use_trial=True, use_rho=False, use_pm1=False, use_ecm=False)
    rest = [p for p in factors if p > 10**5 and not sp.isprime(p)]  # a composite trial division left
    if rest or math.prod(e + 1 for e in factors.values()) > MAX_DIVISORS:
        return None
    divisors = [1]
    for p, e in factors.items():
        divisors = [d * p**k for d in divisors for k in range(e + 1)]
    return sorted(divisors)
