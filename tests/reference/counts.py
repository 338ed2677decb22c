"""Counts written out by hand, and brute force over them: what solve and sweep are compared with."""

from __future__ import annotations

from fractions import Fraction


def bert(H, L, A=12, V=30522, P=512, S=2, r=Fraction(4)) -> int:
    """BERT's count by hand, exact: embeddings (V + P + S)·H + 2·H, L layers, the pooler H² + H.

    One layer: Q K V and the attention output 4·(H² + H), two LayerNorms 4·H, the FFN
    H·rH + rH + rH·H + H.  ``A`` does not appear: every admissible head count gives the same.
    """
    layer = 4 * (H * H + H) + 4 * H + H * (r * H) + r * H + (r * H) * H + H
    total = Fraction((V + P + S) * H + 2 * H + L * layer + H * H + H)
    assert total.denominator == 1, "r·H is not whole"
    return int(total)


def nearest(candidates, count, target):
    """Brute force: the candidate with the smallest |count - target| (ties: the smaller)."""
    return min(candidates, key=lambda v: (abs(count(v) - target), v))
