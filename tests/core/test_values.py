"""User-given values and targets, parsed exactly and never evaluated as code."""

import re
from fractions import Fraction

import pytest
import sympy as sp

from symparams import SymparamsError
from symparams.core.values import parse_count, parse_value, to_python


def test_parse_value_never_evaluates_text():
    with pytest.raises(SymparamsError):
        parse_value("H", "__import__('os').system('true')")
    with pytest.raises(SymparamsError):
        parse_value("r", "2**10")


def test_a_ratio_is_exact_from_a_fraction_or_a_decimal_but_not_from_a_float():
    assert parse_value("r", "11008/4096") == parse_value("r", "2.6875") == sp.Rational(43, 16)
    with pytest.raises(SymparamsError, match="r must be a positive rational such as 4 or 11008/4096, not '2.5'"):
        parse_value("r", 2.5)  # a float may already be rounded: write it as text
    with pytest.raises(SymparamsError, match="r must be a number, not True"):
        parse_value("r", True)


@pytest.mark.parametrize("text,value", [("1e9", 10**9), ("1_000_000_000", 10**9), ("1,000,000", 10**6), (5, 5)])
def test_parse_count_reads_the_ways_a_count_is_written(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["1.5", "lots", "-5", "0", "1e-3", "2**10", True])
def test_parse_count_refuses_anything_but_a_positive_whole_number(text):
    with pytest.raises(SymparamsError, match="the target must be a"):
        parse_count(text)


@pytest.mark.parametrize("text,value", [("1e3", 1000), ("2.048e3", 2048), ("1024.0", 1024), ("+24", 24)])
def test_a_size_reads_the_decimal_notations_a_count_does(text, value):
    assert parse_value("H", text) == value


@pytest.mark.parametrize("text", ["1.5", "7.68e1", "1e-3", "3/1", "0x10", "1_000"])
def test_a_size_refuses_a_value_that_is_not_whole_or_not_decimal(text):
    with pytest.raises(SymparamsError, match=f"H must be a positive whole number, not '{re.escape(text)}'"):
        parse_value("H", text)


def test_to_python_gives_int_or_fraction():
    assert to_python(sp.Integer(768)) == 768 and type(to_python(sp.Integer(768))) is int
    assert to_python(sp.Rational(43, 16)) == Fraction(43, 16)


def test_integers_of_any_kind_are_sizes_but_never_text_python_would_evaluate():
    import numpy as np

    from symparams import model

    assert model("bert-base", H=np.int64(1024), A=16, L=24).count == 335_141_888
    assert model("bert-base", H=Fraction(768)).count == 109_482_240
    assert parse_value("r", np.int64(4)) == 4
    with pytest.raises(SymparamsError, match="H must be a positive whole number"):
        parse_value("H", Fraction(15, 2))
    with pytest.raises(SymparamsError, match="H must be a positive whole number"):
        parse_value("H", b"768")


@pytest.mark.parametrize("raw", ["9" * 1001, 10**1000, "1e1001", "1e-100000000", "1/" + "3" * 1100],
                         ids=["text", "int", "exponent", "negative exponent", "denominator"])
def test_no_number_has_more_than_1000_digits(raw):
    with pytest.raises(SymparamsError, match="more than 1000 digits"):
        parse_value("r", raw)


def test_the_largest_number_allowed_still_counts_exactly():
    from symparams import model

    v = 10**999
    assert model("bert-base", V=v).count == 109_482_240 + (v - 30522) * 768


@pytest.mark.parametrize("text,count", [("110M", 110_000_000), ("6.74B", 6_740_000_000), ("1.3e9", 1_300_000_000),
                                        ("340m", 340_000_000), ("2K", 2_000), ("1T", 10**12), ("7G", 7 * 10**9)])
def test_a_target_takes_the_suffixes_model_cards_use(text, count):
    assert parse_count(text) == count


@pytest.mark.parametrize("text", ["1.5K5", "M", "1.23456K", "-3M", "12KB"])
def test_a_target_must_still_be_a_positive_whole_number(text):
    with pytest.raises(SymparamsError, match="the target must be a"):
        parse_count(text)
