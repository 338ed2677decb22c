"""The head widths the costs are fitted at when the smallest ones run another way.

A partial rotary embedding turns ``r = int(D · partial_rotary_factor)`` of a
head's ``D`` channels, and transformers' cosine has ``2·ceil(r/2)`` of them:
an odd ``r`` fails with a shape mismatch, except ``r = 1``, where the one
channel broadcasts to two and the head runs one channel wider (Phi with a
head of 2 or 3: a score matmul over 3 or 4 channels).  Those widths follow
the modulus that parts the widths that run from those that fail (``D`` mod
4 in {0, 1} for Phi's half-rotary heads), and the reader refuses the others
(see :mod:`.running`, which finds that rule again from the entry).  So when
the costs do not fit or check on every width, each per-head width the
parameters name (``floor(H/A)``, ``H/A``, a head width field) is traced at
:data:`SPAN` consecutive values from the base; where the runs follow a
modulus, the costs are fitted, verified and checked again at the widths it
allows only.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .tracing import Untraceable

#: consecutive values each width is traced at: every residue of the largest modulus, twice
SPAN = 16
#: the moduli runs may follow (a rotary embedding over a whole head, a half, a quarter)
MODULI = (2, 4, 8)
#: tokens of the traces (forward only: a width the forward accepts, the backward accepts)
SEQ = 5


@dataclass(frozen=True)
class HeadWidth:
    """A per-head width: ``top`` over ``bottom`` (rounded down), or the field ``top`` alone (``bottom`` None)."""

    top: str
    bottom: str | None = None

    def value(self, values: dict) -> int:
        return values[self.top] // values[self.bottom] if self.bottom else values[self.top]

    def moved(self, values: dict, width: int) -> dict:
        """``values`` with this width set to ``width`` through its numerator."""
        return {**values, self.top: width * (values[self.bottom] if self.bottom else 1)}


@dataclass(frozen=True)
class Runs:
    """The widths of one head width the forward pass runs at regularly: those whose residue modulo ``modulus``
    is among ``residues`` (modulus 0: the one value)."""

    width: HeadWidth
    modulus: int
    residues: tuple[int, ...]

    def allows(self, values: dict) -> bool:
        value = self.width.value(values)
        return (value % self.modulus if self.modulus else value) in self.residues


def head_widths(widths, names: dict) -> list[HeadWidth]:
    """The per-head widths among the terms of the parameters' dimensions (see :mod:`.widths`): a field over
    another, rounded down or not, or a field whose symbol is a head width (``D``, ``D_r``); ``names``: symbol →
    field."""
    out = []
    for term in sorted(widths, key=str):
        inner = term.args[0] if isinstance(term, sp.floor) else term
        numerator, denominator = sp.fraction(inner)
        if numerator in names and denominator in names:
            out.append(HeadWidth(names[numerator], names[denominator]))
        elif term in names and str(term).startswith("D"):
            out.append(HeadWidth(names[term]))
    return list(dict.fromkeys(out))


def regular_runs(domain, widths: list[HeadWidth]) -> list[Runs]:
    """For each width, the modulus its runs follow from the base of ``domain`` (a :class:`~.costs.Domain`), where
    some of :data:`SPAN` consecutive widths fail; none for a width at which every value runs, or whose runs follow no modulus."""
    start = {**domain.found.base, **domain.start}
    out = []
    for width in widths:
        if not all(isinstance(start.get(n), int) and start[n] > 0 for n in (width.top, width.bottom) if n):
            continue
        first = width.value(start)
        ran = {v: _runs(domain, width.moved(start, v)) for v in range(first, first + SPAN)}
        if all(ran.values()):
            continue
        rule = _rule(ran)
        if rule is not None:
            out.append(Runs(width, rule[0], tuple(rule[1])))
    return out


def _runs(domain, values: dict) -> bool:
    try:
        return domain.observe(values, SEQ, 1, regime=False, beyond=True) is not None
    except Untraceable:
        return False


def regular_widths(domain, values: dict) -> bool:
    """Whether ``values`` (the base's where they leave a field out) are at head widths every rule of
    ``domain.regular`` allows."""
    full = {**domain.found.base, **domain.start, **values}
    return all(rule.allows(full) for rule in domain.regular)


def _rule(ran: dict[int, bool]) -> tuple[int, list[int]] | None:
    """The smallest modulus whose residues part the values that ran from those that did not, each residue seen
    twice, and the residues that ran; ``(0, [value])`` where only the first value ran (NeoMMe's M-RoPE sections
    sum to half of one head width); None when nothing parts them."""
    if [v for v, ok in ran.items() if ok] == [min(ran)]:
        return 0, [min(ran)]
    for modulus in MODULI:
        seen: dict[int, set] = {}
        for value, ok in ran.items():
            seen.setdefault(value % modulus, set()).add(ok)
        twice = all(sum(1 for v in ran if v % modulus == r) >= 2 for r in range(modulus))
        if twice and all(len(outcomes) == 1 for outcomes in seen.values()):
            return modulus, sorted(r for r, outcomes in seen.items() if True in outcomes)
    return None
