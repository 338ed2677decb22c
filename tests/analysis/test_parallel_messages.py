"""A layout's refusal names the module it is about as ``named_modules()`` of the transformers model names it."""

from __future__ import annotations

import re

import pytest

from symparams import SymparamsError, model
from symparams.analysis.parallel import Layout, Split
from tests.reference import decoders


def test_a_split_dimension_tensor_parallelism_cannot_divide_is_named_by_its_module():
    m = model("llama", V=1000, H=64, L=2, A=8, G=8, F=97)
    with pytest.raises(SymparamsError, match="must divide the features F = 97") as refused:
        Split(m, Layout(tensor=2))
    module = re.search(r"that (\S+) splits", str(refused.value))[1]
    assert module in dict(decoders.reference(m)[0].named_modules())


def test_a_module_tensor_parallelism_cannot_split_is_named_by_its_first_copy():
    m = model("t5", V=100, H=16, L=2, A=2, D=8, B=4, F=32)
    with pytest.raises(SymparamsError, match="does not know how Megatron splits") as refused:
        Split(m, Layout(tensor=2))
    module = re.search(r"splits the module (\S+) \(", str(refused.value))[1]
    assert module == "encoder.block.0.layer.0.SelfAttention.relative_attention_bias"
    assert module in dict(decoders.reference(m)[0].named_modules())
