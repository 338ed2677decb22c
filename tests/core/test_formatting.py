"""Exact numbers as users read them: percentages, JSON, parsed targets."""

from fractions import Fraction

import sympy as sp

from symparams.core.formatting import decimal, json_number, percent
from symparams.core.values import parse_count


def test_a_tiny_share_keeps_two_significant_digits():
    # 14 in a million is 0.0014 %: at two decimals it would read 0.00%
    assert percent(Fraction(14, 1_000_000)) == "0.0014%"
    assert percent(Fraction(1, 3)) == "33.33%"


def test_shares_and_sizes_round_half_up_to_two_decimals():
    # BERT-base's embeddings, 23,837,184 of 109,482,240: 21.7726...%; 2/3 GiB reads 0.67, 1/8 reads 0.13
    assert percent(Fraction(23_837_184, 109_482_240)) == "21.77%"
    assert (decimal(sp.Rational(2, 3)), decimal(sp.Rational(1, 8))) == ("0.67", "0.13")


def test_a_ratio_goes_to_json_as_its_fraction():
    # LLaMA's FFN ratio 11008/4096 is 43/16 in lowest terms
    assert json_number(sp.Rational(11008, 4096)) == "43/16"
    assert json_number(sp.Integer(4096)) == 4096 and type(json_number(sp.Integer(4096))) is int


def test_a_whole_float_target_is_read_exactly():
    assert parse_count(6.74e9) == 6_740_000_000
