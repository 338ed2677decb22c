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


F = sp.Symbol("F", integer=True, positive=True)


def test_a_width_halved_on_the_lattice_is_the_parameters_whole_width_not_a_fraction():
    """RecurrentGemma's MLP is ``intermediate_size // 2`` wide: on the fit's lattice (even F) ``F/2`` fits too, and
    is 4.5 at F = 9, where the real model is 4 wide.  With whole coefficients only ``⌊F/2⌋`` fits."""
    points = [{"intermediate_size": f} for f in (2, 4, 6, 8, 10, 12, 14, 16)]
    values = [p["intermediate_size"] // 2 for p in points]
    terms = width_terms([(H, sp.floor(F / 2))]) | {F}  # F too: the generic bases' plain term
    symbols = {"intermediate_size": F}
    fractional = fit_widths(points, values, ["intermediate_size"], terms, symbols, surplus=3)
    assert {str(w): c for w, c in fractional.items()} == {"F": sp.Rational(1, 2)}  # the plainer term, halved
    whole = fit_widths(points, values, ["intermediate_size"], terms, symbols, whole=True, surplus=3)
    assert {str(w): c for w, c in whole.items()} == {"floor(F/2)": 1}


def test_a_fitted_factor_with_a_fractional_coefficient_is_rewritten_as_the_parameters_width():
    from types import SimpleNamespace

    from symparams.analysis.inference.cost_fitting import _parameter_width, _whole_coefficients

    target = ("factor", ("mlp.up_proj", 0, "mm"), 2)
    domain = SimpleNamespace(names=["intermediate_size", "hidden_size"], widths=width_terms([(sp.floor(F / 2), H)]),
                             dimensions=set(), effects={"intermediate_size": {target}, "hidden_size": set()})
    used = [({"intermediate_size": f, "hidden_size": 8}, f // 2) for f in (2, 4, 6, 8, 10, 12, 14, 16)]
    assert not _whole_coefficients(F / 2) and _whole_coefficients(2 * F + H) and _whole_coefficients(sp.floor(F / 2))
    assert _parameter_width(domain, target, used, {"intermediate_size": F, "hidden_size": H}) == sp.floor(F / 2)
    # a width no whole combination of the parameters' widths fits stays as it was fitted (None: no rewrite)
    odd = [(p, 3 * v + 1) for p, v in used]
    assert _parameter_width(domain, target, [(p, v / 2) for p, v in odd], {"intermediate_size": F,
                                                                          "hidden_size": H}) is None


D = sp.Symbol("D", integer=True, positive=True)
#: ZAYA's value projections are ``G·D // 2`` wide, as its parameter count writes that width (verified on builds)
ZAYA_VALUE_WIDTH = -2 * sp.floor(D / 2) * sp.floor(G / 2) + D * sp.floor(G / 2) + G * sp.floor(D / 2)


def test_a_halved_width_is_a_parameters_whole_dimension_before_any_one_of_its_terms():
    """On the fit's lattice the head width D is even, and ZAYA's value width ``⌊G·D/2⌋`` is ``G·⌊D/2⌋`` there
    too, one term of its dimension; at an odd D and an even G (a tiny model's D = 5, G = 2) the term gives 4
    channels where transformers builds 5.  The whole dimension is tried first, and holds there."""
    from types import SimpleNamespace

    from symparams.analysis.inference.cost_fitting import _parameter_width

    target = ("factor", ("self_attn.v_proj_current", 0, "mm"), 2)
    names = {"num_key_value_heads": G, "head_dim": D}
    shapes = [(ZAYA_VALUE_WIDTH, H)]
    used = [({"num_key_value_heads": g, "head_dim": d}, g * d // 2) for g in (1, 2, 3, 4) for d in (2, 4, 6)]
    effects = {n: {target} for n in names}

    def width(dimensions):
        domain = SimpleNamespace(names=list(names), widths=width_terms(shapes), dimensions=dimensions,
                                 effects=effects)
        return _parameter_width(domain, target, used, names)

    assert width(set()) == G * sp.floor(D / 2)  # the term alone: 4 at G = 2, D = 5
    found = width({sp.expand(d) for d in shapes[0]})
    for g, d in ((2, 5), (4, 7), (3, 5), (1, 1)):
        assert found.xreplace({G: g, D: d}) == g * d // 2, (g, d)
