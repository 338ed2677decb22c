"""A fused projection's width fitted as a sum of the parameters' widths: transformers' own trace is the reference."""

from __future__ import annotations

import random

import sympy as sp
import transformers

from symparams.analysis.inference import tracing
from symparams.analysis.inference.widths import fit_widths, width_terms

H, A, G = sp.symbols("H A G", integer=True, positive=True)
SYMBOLS = {"hidden_size": H, "num_attention_heads": A, "num_key_value_heads": G}
NAMES = list(SYMBOLS)
#: Phi-3's qkv_proj weight as the parameter count writes it (its own fit, checked against builds)
QKV_WEIGHT = (A * sp.floor(H / A) + 2 * G * sp.floor(H / A), H)


def _traced(values: dict) -> list:
    """The products of Phi-3 at ``values``, as a meta-device trace of transformers' model sees them."""
    config = transformers.Phi3Config(vocab_size=11, pad_token_id=0, intermediate_size=8, num_hidden_layers=1,
                                     **values)
    return tracing.trace(tracing.build(transformers.Phi3Model, config), 3, 1, cache=False, backward=False).products


def _qkv_width(values: dict) -> int:
    """The output width of Phi-3's fused qkv_proj matmul."""
    (product,) = [p for p in _traced(values) if p.module.endswith("qkv_proj")]
    return product.factors[-1]


def _score_width(values: dict) -> int:
    """The contracted width of Phi-3's attention scores (queries times keys): its per-head width."""
    product = next(p for p in _traced(values) if p.op == "bmm")
    return product.factors[2]


def _draw(rng: random.Random) -> dict:
    """Heads, kv heads dividing them, and a width the heads need not divide, whose per-head width ⌊H/A⌋ is even
    (RoPE rotates pairs)."""
    kv = rng.choice([1, 2, 3, 4])
    heads = kv * rng.choice([1, 2, 3, 5])
    return {"num_attention_heads": heads, "num_key_value_heads": kv,
            "hidden_size": heads * 2 * rng.randint(1, 6) + rng.randint(0, heads - 1)}


def test_phi3_fused_qkv_width_is_fitted_from_its_weights_widths_and_holds_on_fresh_traces():
    rng = random.Random(0)
    points = [_draw(rng) for _ in range(16)]
    found = fit_widths(points, [_qkv_width(p) for p in points], NAMES, width_terms([QKV_WEIGHT]), SYMBOLS)
    assert found is not None
    formula = sp.Add(*(c * w.form for w, c in found.items()))
    fresh = [_draw(rng) for _ in range(6)]
    assert any(p["hidden_size"] % p["num_attention_heads"] for p in fresh)  # ⌊H/A⌋ is not H/A there
    for p in fresh:
        assert formula.xreplace({SYMBOLS[n]: v for n, v in p.items()}) == _qkv_width(p), p


def test_the_per_head_width_of_the_attention_scores_is_a_factor_of_a_weights_width():
    rng = random.Random(2)
    points = [_draw(rng) for _ in range(12)]
    found = fit_widths(points, [_score_width(p) for p in points], NAMES, width_terms([QKV_WEIGHT]), SYMBOLS)
    assert found is not None
    formula = sp.Add(*(c * w.form for w, c in found.items()))
    for p in [_draw(rng) for _ in range(4)]:
        assert formula.xreplace({SYMBOLS[n]: v for n, v in p.items()}) == _score_width(p), p


def test_a_width_no_few_weight_widths_explain_is_refused():
    rng = random.Random(1)
    points = [_draw(rng) for _ in range(16)]
    squares = [p["hidden_size"] ** 2 // p["num_attention_heads"] for p in points]  # no parameter's width
    assert fit_widths(points, squares, NAMES, width_terms([QKV_WEIGHT]), SYMBOLS) is None
