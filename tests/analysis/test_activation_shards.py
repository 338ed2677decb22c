"""Korthikanti et al.'s per-layer activation terms and which of them tensor parallelism divides.

The forms are written out from Korthikanti, Casper, Lym, McAfee, Andersch, Shoeybi and Catanzaro, "Reducing
Activation Recomputation in Large Transformer Models" (MLSys 2023, arXiv:2205.05198), section 4 and Table 2.
"""

import pytest
import sympy as sp

from symparams import model
from symparams.analysis.activation_shards import TENSOR, TERMS, departures, divided, layer_bytes

s, b, h, a, t = sp.symbols("s b h a t", positive=True)

#: Table 2, activation memory per transformer layer (bytes), no recomputation
TABLE_2 = {
    "no parallelism": s * b * h * (34 + 5 * a * s / h),
    "tensor parallel (baseline)": s * b * h * (10 + 24 / t + 5 * a * s / (h * t)),
    "tensor + sequence parallel": s * b * h / t * (34 + 5 * a * s / h),
}


def test_terms_add_up_to_table_2_without_parallelism():
    assert sp.expand(layer_bytes(s, b, h, a, 1) - TABLE_2["no parallelism"]) == 0


@pytest.mark.parametrize("ranks", [2, 8, TENSOR])
def test_terms_add_up_to_table_2_per_tensor_parallel_rank(ranks):
    at = {t: ranks}
    assert sp.expand(layer_bytes(s, b, h, a, ranks) - TABLE_2["tensor parallel (baseline)"].subs(at)) == 0
    assert sp.expand(layer_bytes(s, b, h, a, ranks, True) - TABLE_2["tensor + sequence parallel"].subs(at)) == 0


def test_ten_sbh_stays_whole_without_sequence_parallelism():
    """Section 4.2.2: 'the 10sbh ... not parallelized' (layer norms, block inputs, dropout masks)."""
    whole = [term for term in TERMS if not divided(term, False)]
    assert sum(term.linear for term in whole) == 10 and all(term.scores == 0 for term in whole)
    assert {term.block for term in whole} == {"attention", "mlp", "norms"}
    assert not [term for term in TERMS if not divided(term, True)]


def test_blocks_hold_the_paper_sizes():
    """Section 4.1: attention 11sbh + 5as²b, MLP 19sbh, the two layer norms 4sbh."""
    for block, linear, scores in (("attention", 11, 5), ("mlp", 19, 0), ("norms", 4, 0)):
        terms = [term for term in TERMS if term.block == block]
        assert (sum(x.linear for x in terms), sum(x.scores for x in terms)) == (linear, scores)


@pytest.mark.parametrize("name, expected", [
    ("gpt2", ()),  # Radford et al.: 12 heads of 64 = 768, MLP 3072 = 4·768, LayerNorm, no gate
    ("llama-3-8b", ("kv_heads", "gated", "ffn_width")),  # 8 KV heads of 32, SwiGLU, 14336 ≠ 4·4096
    ("mixtral-8x7b", ("kv_heads", "gated", "experts")),
    ("t5-base", ("cross", "norms")),  # the decoder's layers run a third norm, before cross-attention
    ("falcon-7b", ("kv_heads", "norms")),  # multi-query attention, one norm before attention and MLP in parallel
    ("deepseek-v3", ("latent", "norms", "gated", "ffn_width", "experts")),  # MLA (and q/kv latent norms)
])
def test_departures_from_the_gpt_layer(name, expected):
    m = model(name)
    assert departures(m.tree, lambda e: m.evaluate(e) != 0) == expected
