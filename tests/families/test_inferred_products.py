"""Shipped formulas of a type whose config class holds two products of fields equal: Mamba2's
``hidden_size·expand = num_heads·head_dim`` (the in-projection, convolution and norm are ``hidden_size·expand``
wide, the per-head parameters ``num_heads`` long).  Small configs on the equality, at ratios other than the
default's (the width no multiple of 32 heads, the head count no multiple of the expansion, the head width no
divisor of the width), counted as ``count --config`` reads them and compared with meta-device builds; a config
off the equality, which transformers refuses, is refused in one line naming the fields."""

import pytest
import transformers

from symparams.families import inferred
from symparams.families.inferred_data import OutsideConditions
from tests.reference.inferred_builds import built, entry

pytestmark = pytest.mark.crosscheck

SMALL = {"model_type": "mamba2", "vocab_size": 1000, "num_hidden_layers": 5, "state_size": 16, "n_groups": 2,
         "conv_kernel": 4}

CONFIGS = {
    # 64·3 = 4·48: 3 does not divide the 4 heads, 48 does not divide the width 64
    "expand-3": {**SMALL, "hidden_size": 64, "expand": 3, "num_heads": 4, "head_dim": 48},
    # 70·3 = 6·35: 6 heads do not divide the width 70
    "odd-width": {**SMALL, "hidden_size": 70, "expand": 3, "num_heads": 6, "head_dim": 35},
    # 96·1 = 2·48: no expansion, few wide heads
    "expand-1": {**SMALL, "hidden_size": 96, "expand": 1, "num_heads": 2, "head_dim": 48},
    # 48·2 = 96·1: head width 1, as many heads as the inner width
    "head-width-1": {**SMALL, "hidden_size": 48, "expand": 2, "num_heads": 96, "head_dim": 1, "n_groups": 1},
    # the default's own ratio (4096·2 = 128·64), small
    "default-ratio": {**SMALL, "hidden_size": 256, "expand": 2, "num_heads": 8, "head_dim": 64},
}


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_config_on_the_product_equality_is_counted_as_transformers_builds_it(name, cls):
    config = CONFIGS[name]
    assert inferred.counted(entry("mamba2", cls), config)[0] == built(config, cls)


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_a_config_off_the_product_equality_is_refused_in_one_line_as_transformers_refuses_it(cls):
    off = {**CONFIGS["expand-3"], "head_dim": 32}  # 64·3 = 192, 4·32 = 128
    with pytest.raises(Exception, match="must equal num_heads"):
        transformers.AutoConfig.for_model(**off)
    with pytest.raises(OutsideConditions, match=r"the formula needs expand\*hidden_size = head_dim\*num_heads") \
            as refused:
        inferred.counted(entry("mamba2", cls), off)
    assert "\n" not in str(refused.value)
