"""Products of size fields the config class holds equal (Mamba2: ``hidden_size·expand = num_heads·head_dim``).

No field of such a product moves alone, and any field of one side moves
with any field of the other: the pairwise relations a partner search finds
(``expand ⊑ num_heads``, ``head_dim ⊑ hidden_size``) are true of the
multipliers it tried, not of the configs that build, and drawn by them the
fit's points keep the sides' ratios fixed (``hidden_size = 32·num_heads``),
so the fit writes one field in another's place and counts wrong off them.
A product equality of two fields against two is found by builds (every
cross pair moved by ×3 builds, and one field ×9 against the other side's two
×3, which no pairwise relation admits); its fields then move freely but for the second of the right side,
which is solved for (see :func:`solve_products`), and the formula holds only
where the equality does (a condition the reader enforces, as any relation).
"""

from __future__ import annotations

import itertools
import math
import random

from .discovered import Discovery, effects, same
from .probing import Builder


def product_equalities(builder: Builder, found: Discovery) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The product equalities of two fields against two, among the fields that moved only with a partner or
    took one along (``(left, right)``, each side sorted, the left first), found as the module says; their fields
    made free, and the pairwise relations among them dropped.  (A width against a head count times a head width is left to the
    pairwise relations, which hold it already: the width is a multiple of either.)"""
    partnered = sorted({n for pair in found.relations for n in pair if _size(found, n)})
    out: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for left, right in itertools.combinations(itertools.combinations(partnered, 2), 2):
        if set(left) & set(right) or _overlaps(out, left + right) or \
                _base_product(found, left) != _base_product(found, right):
            continue
        if _held_equal(builder, found, left, right):
            out.append((left, right))
    for left, right in out:
        fields = set(left + right)
        found.relations -= {(f, g) for f, g in found.relations if f in fields and g in fields}
    return out


def _size(found: Discovery, name: str) -> bool:
    f = found.fields[name]
    return isinstance(f.base, int) and not isinstance(f.base, bool) and f.base > 1 and f.step == "scale" \
        and "layer" not in name.rpartition(".")[2]


def _base_product(found: Discovery, names: tuple[str, ...]) -> int:
    return math.prod(found.fields[n].base for n in names)


def _overlaps(found: list, names: tuple[str, ...]) -> bool:
    return any(set(names) & set(left + right) for left, right in found)


def _held_equal(builder: Builder, found: Discovery, left: tuple[str, ...], right: tuple[str, ...]) -> bool:
    """Whether every cross pair moved ×3 builds as the base does, and so does one left field ×9 against both
    right fields ×3 (9·1 = 3·3: no pairwise relation of the multipliers admits it)."""
    moved: set = set()
    for a, b in itertools.product(left, right):
        obs = builder.observe({**found.base, a: found.fields[a].base * 3, b: found.fields[b].base * 3})
        if not same(found, obs):
            return False
        moved |= effects(found.observation, obs)
    nine = {left[0]: found.fields[left[0]].base * 9, **{n: found.fields[n].base * 3 for n in right}}
    if not same(found, builder.observe({**found.base, **nine})):
        return False
    for name in left + right:
        found.fields[name].moved("scale", moved)
    return True


def solve_products(products, values: dict, rng: random.Random) -> None:
    """``values`` made to hold every product equality: the right side's last field set to the left's product
    over its first (if it has two); where the first does not divide that, it is first set to a random divisor of
    it (so the fields still move on their own, and a width off its multiples still shows)."""
    for left, (*first, solved) in products:  # a right side of one field (A·D = H) is the left's product
        if not all(isinstance(values.get(n), int) and values[n] > 0 for n in (*left, *first)):
            continue
        total = math.prod(values[n] for n in left)
        if first and total % values[first[0]]:
            values[first[0]] = rng.choice(_divisors(total))
        values[solved] = total // math.prod(values[n] for n in first)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def product_text(names) -> str:
    """A side of a product equality as the conditions write it (``expand*hidden_size``)."""
    return "*".join(names)


# -- the costs' side (see :mod:`.costs`): a domain has the count's discovery ``found`` and the products only the
# forward pass needs (``products``), each ``(left, right)`` as above

def balanced(found: Discovery, move: dict, start: dict) -> dict:
    """``move`` (fields ×3) with as many fields of each side of the count's product equalities moved (the first
    ones unmoved), so that it still holds (Mamba-2's heads ×3 with its width ×3: ``expand·H = A·D``)."""
    out = dict(move)
    for sides in found.products:
        moved = [[n for n in side if n in out] for side in sides]
        for side, other in ((0, 1), (1, 0)):
            for n in [n for n in sides[side] if n not in out][:len(moved[other]) - len(moved[side])]:
                out[n] = start[n] * 3
    return out


def tied(found: Discovery, names: set, product: set) -> set:
    """The fields outside ``product`` a relation ties to one of ``names``, moved with it (ESMC's key/value heads,
    which its config holds equal to the heads)."""
    return {g for pair in found.relations if set(pair) & names for g in pair} - product


def beside_product(domain, left: tuple, solved: str) -> set:
    """The relations the forward pass needs beside ``product(left) = solved``: none among its fields (moved by one
    multiplier, ``A ⊑ H`` and ``H ⊑ A`` say no more than the product), none of ``solved`` below another (it is
    the product); a field below ``solved`` is below the field of ``left`` the fit's draws keep ``solved``'s
    multiplier equal to, as they did (Helium's key/value heads, found with ``H`` and ``A`` moved together:
    dividing ``A``, as ``repeat_kv`` needs), or none."""
    relations = domain.found.relations
    twin = next((x for x in left if {(solved, x), (x, solved)} <= relations), None)
    out = set()
    for f, g in domain.relations:
        if {f, g} <= {*left, solved} or f == solved:
            continue
        if g != solved:
            out.add((f, g))
        elif twin is not None:
            out.add((f, twin))
    return out


def in_product(domain, names) -> bool:
    """Whether every one of ``names`` is a field of one product the forward pass needs equal (see
    :func:`.costs._product_partner`) or the config holds equal (the count's, above): their pairwise
    relations say no more than the product."""
    return any(set(names) <= {*left, *right} for left, right in all_products(domain))


def all_products(domain) -> list:
    """The product equalities the costs hold: the count's (Mamba-2's ``expand·H = A·D``), then the forward pass's."""
    return [*domain.found.products, *domain.products]
