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


def mixtral(L, experts=8, H=4096, V=32000, A=32, G=8, N_e=8, F_e=14336) -> int:
    """Mixtral's base model (``MixtralModel``) by hand, counting ``experts`` experts of each layer: all
    N_e of them for the count, the k_e a token is routed to for the active count.

    Embeddings V·H; one layer: q and o H·H each, k and v H·G·(H/A) each (no biases), the router
    H·N_e, the experts 3·H·F_e each (gate, up, down, no biases), two RMSNorms 2·H; the final norm H.
    Mixtral-8x7B: 46,571,720,704 in all, 12,748,853,248 used by a token (Mistral AI's announcement:
    46.7B and 12.9B, there with the LM head's V·H).
    """
    layer = 2 * H * H + 2 * H * G * (H // A) + H * N_e + experts * 3 * H * F_e + 2 * H
    return V * H + L * layer + H
