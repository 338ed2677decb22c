"""Widths the modeling code computes with a float (LFM2's and xLSTM's feed-forward widths): the rule the data holds
computes what Python computes, and ``count --config`` counts as transformers builds on the meta device."""

import json
import random
from fractions import Fraction

import pytest
import transformers

from symparams.core.errors import SymparamsError
from symparams.families import inferred
from tests.reference.inferred_builds import built
from symparams.families.inferred_widths import nearest_double, width

#: LFM2's and xLSTM's widths as their modeling code writes them, and as the data's rules
SOURCES = {
    "lfm2": (lambda F, m, f: m * ((int(f * int(2 * F / 3)) + m - 1) // m),
             ["*", "m", ["//", ["+", ["+", ["int", ["*", "f", ["int", ["/", ["*", 2, "F"], 3]]]], "m"], -1], "m"]]),
    "xlstm": (lambda F, m, f: int(((F * f + m - 1) // m) * m),
              ["int", ["*", "m", ["//", ["+", ["+", ["*", "F", "f"], "m"], -1], "m"]]]),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_width_rule_computes_bit_for_bit_what_python_computes(name):
    """Python is the reference: decimals no binary fraction is (0.29 * 100 is 28.999999999999996, so 28, where
    the decimal 0.29 would give 29), products that round onto a multiple, large widths."""
    python, rule = SOURCES[name]
    rng = random.Random(name)
    for _ in range(20000):
        F, m = rng.randint(1, 10 ** 7), rng.choice([1, 2, 3, 7, 64, 256, rng.randint(1, 999)])
        f = rng.choice([round(rng.uniform(0.05, 4), rng.randint(1, 4)), rng.uniform(0.05, 4), 0.29, 1.1, 2.667])
        expected = python(F, m, f)
        if expected >= 1:
            assert width(rule, {"F": F, "m": m, "f": f}) == expected, (F, m, f)


def test_rounding_to_a_double_is_ieee_s_nearest_ties_to_even():
    rng = random.Random(0)
    for _ in range(20000):  # CPython's int / int is correctly rounded: the reference
        a, b = rng.randint(1, 10 ** rng.randint(1, 30)), rng.randint(1, 10 ** rng.randint(1, 30))
        assert nearest_double(Fraction(a, b)) == Fraction(a / b)
    assert nearest_double(Fraction(2 ** 53 + 1)) == 2 ** 53 and nearest_double(Fraction(2 ** 53 + 3)) == 2 ** 53 + 4


@pytest.mark.parametrize("values,why", [({"f": "1.5", "F": 3}, "key f is '1.5'"),
                                        ({"f": None, "F": 3}, "needs numbers"),
                                        ({"f": float("inf"), "F": 3}, "key f is inf"),
                                        ({"f": 1.0, "F": 2 ** 60}, "beyond the 2\\*\\*50"),
                                        ({"f": 0.1, "F": 3}, "comes to 0")])
def test_a_width_no_number_or_too_large_is_refused_in_one_line(values, why):
    with pytest.raises(SymparamsError, match=why) as refused:
        width(["int", ["*", "f", "F"]], values)
    assert "\n" not in str(refused.value)


AUTO = {"base": transformers.AutoModel, "causal-lm": transformers.AutoModelForCausalLM}


#: a small LFM2: attention and convolution layers mixed
LFM2 = {"model_type": "lfm2", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 200, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "block_multiple_of": 16,
        "layer_types": ["conv", "full_attention", "conv", "conv"]}
LFM2_WIDTHS = [{}, {"block_ffn_dim_multiplier": 1.5}, {"block_ffn_dim_multiplier": 0.29, "block_multiple_of": 1},
               {"block_ffn_dim_multiplier": 1.1, "block_multiple_of": 7},
               {"block_auto_adjust_ff_dim": False, "intermediate_size": 77},
               {"block_ffn_dim_multiplier": 2, "hidden_size": 48, "intermediate_size": 301}]


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", sorted(AUTO))
@pytest.mark.parametrize("moved", LFM2_WIDTHS, ids=[json.dumps(m) for m in LFM2_WIDTHS])
def test_lfm2_is_counted_with_its_feed_forward_width_as_transformers_computes_it(cls, moved):
    """Two thirds of intermediate_size, times the multiplier, truncated, rounded up to block_multiple_of: counted
    as transformers builds it (the data held no formula: no polynomial in the sizes gives that width)."""
    config = {**LFM2, **moved}
    assert inferred.model(config, head=None if cls == "base" else cls).count == built(config, cls)


#: a small xLSTM
XLSTM = {"model_type": "xlstm", "vocab_size": 1000, "hidden_size": 96, "num_hidden_layers": 2, "num_blocks": 2,
         "num_heads": 4, "ffn_round_up_to_multiple_of": 64}
XLSTM_WIDTHS = [{}, {"ffn_proj_factor": 1.3, "ffn_round_up_to_multiple_of": 7},
                {"ffn_proj_factor": 4.0, "qk_dim_factor": 0.25, "v_dim_factor": 0.75},
                {"qk_dim_factor": 0.3, "hidden_size": 100, "embedding_dim": 100, "ffn_round_up_to_multiple_of": 1}]


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", sorted(AUTO))
@pytest.mark.parametrize("moved", XLSTM_WIDTHS, ids=[json.dumps(m) for m in XLSTM_WIDTHS])
def test_xlstm_is_counted_with_its_float_widths_as_transformers_computes_them(cls, moved):
    """The feed-forward width hidden_size * ffn_proj_factor rounded up to a multiple, the query/key and value
    widths int(hidden_size * factor): counted as transformers builds them."""
    config = {**XLSTM, **moved}
    assert inferred.model(config, head=None if cls == "base" else cls).count == built(config, cls)


def test_a_remainder_is_python_s_of_whole_numbers_and_refused_of_a_float():
    """ConvBERT's attention width is 0 (refused) where the kept heads do not divide H: ``%`` decides it."""
    rule = ["if", ["%", "h", "n"], 0, ["*", "n", ["//", ["//", "h", "n"], 2]]]
    assert [width(rule, {"h": h, "n": 3}) for h in (9, 12, 45)] == [3, 6, 21]
    with pytest.raises(SymparamsError, match="comes to 0"):
        width(rule, {"h": 10, "n": 3})
    with pytest.raises(SymparamsError, match="whole numbers only"):
        width(["%", "h", "n"], {"h": 10.5, "n": 3})
    with pytest.raises(SymparamsError, match="divides by zero"):
        width(["%", "h", "n"], {"h": 10, "n": 0})
