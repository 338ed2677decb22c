"""Costs of stacks whose layers are of several kinds (sliding-window and full attention by a pattern), read from the
data alone, against tiny real models at widths no fit saw and layers of both kinds:
the FLOPs under ``FlopCounterMode`` forward and training, and every tensor the cache holds, at a length inside the
sliding window and one past it."""

from __future__ import annotations

import pytest

from symparams.core.errors import SymparamsError
from symparams.families.inferred import model as inferred_model
from tests.families.test_inferred_spellings import ZAMBA2
from tests.reference.inferred_builds import built
from tests.analysis.test_inferred_costs import _config, _lengths, _real, assert_costs_are_the_real_models
from tests.reference.flops import token_ids

pytestmark = pytest.mark.crosscheck

#: (model_type, class, the layer fields changed): each with layers of both kinds
CASES = [
    # a full-attention layer in every 6 (a period of the config class's own): 1 of 8, the other 7 sliding
    ("gemma3_text", "causal-lm", {"num_hidden_layers": 8}),
    # a full-attention layer in every global_attn_every_n_layers, moved off its default 4; two dense layers first
    ("afmoe", "causal-lm", {"num_hidden_layers": 7, "global_attn_every_n_layers": 3, "num_dense_layers": 2}),
]


@pytest.mark.parametrize("model_type, cls, layers", CASES, ids=[c[0] for c in CASES])
def test_a_pattern_of_sliding_and_full_layers_costs_what_a_tiny_real_model_counts(model_type, cls, layers):
    config = {**_config(model_type, cls), **layers}
    m = inferred_model(config, head=cls)
    module = _real(model_type, cls, config)
    short, long = _lengths(m)
    assert long > min(kept for kept, _ in m.kv_cache("fp32")._sizes.windows) + 1  # the window does bound the cache
    assert_costs_are_the_real_models(m, module, ((short, 2), (long, 1)))


def test_gemma4_layers_of_each_kind_in_any_order_cost_what_a_tiny_real_model_counts():
    """Gemma 4's layers by kind, in an order no default pattern gives, and a per-layer input width no fit saw: the
    per-layer projection is that width times every layer (a fit that kept the width at its base in its layer traces
    took it for 7.5 layers of 11); full-attention layers hold the whole length in the cache, sliding ones a window."""
    kinds = ["sliding_attention", "full_attention", "full_attention", "sliding_attention", "sliding_attention",
             "full_attention"]
    config = {k: v for k, v in _config("gemma4_text", "causal-lm").items() if "#" not in k}
    config.update(layer_types=kinds, num_hidden_layers=len(kinds), hidden_size_per_layer_input=7)
    m = inferred_model(config, head="causal-lm")
    short, long = _lengths(m)
    rows = min(config["vocab_size"], config["vocab_size_per_layer_input"])  # the per-layer table is indexed too
    assert_costs_are_the_real_models(m, _real("gemma4_text", "causal-lm", config), ((short, 2), (long, 1)),
                                     lambda seq, batch: {"input_ids": token_ids(rows, seq, batch)})


def test_gemma4_sliding_layers_as_wide_as_the_full_ones_cost_what_a_tiny_real_model_counts():
    """Gemma 4's sliding head width at the full layers' 512: the two kinds have one structure (the verification
    compares their sums, see cost_engine._kinds_together), and the formulas of each kind must still add up to the
    real model's, its sliding layers' cache bounded by the window, the full ones' not."""
    config = {k: v for k, v in _config("gemma4_unified_text", "causal-lm").items() if "#" not in k}
    kinds = ["sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention"]
    config.update(layer_types=kinds, num_hidden_layers=len(kinds), head_dim=512, num_attention_heads=2,
                  num_key_value_heads=1, vocab_size=1024)  # the head width divides the vocabulary (a condition)
    m = inferred_model(config, head="causal-lm")
    short, long = _lengths(m)
    assert_costs_are_the_real_models(m, _real("gemma4_unified_text", "causal-lm", config), ((short, 2), (long, 1)))


def test_zamba2_mamba_and_hybrid_layers_cost_what_a_tiny_real_model_counts_and_another_width_is_refused():
    """Zamba2's costs hold at its 2,560-wide hidden state only (no other width traced with its structure), so no
    tiny model checks them: the real one here has 283M parameters.  Seven Mamba-2 layers and two hybrid ones (the
    shared transformer block before a Mamba-2 mixer), its layers written as Zyphra's config.json files write them,
    at head counts, state and convolution widths no fit saw.  Another hidden width keeps its count and has its
    FLOPs refused in one line."""
    m = inferred_model(ZAMBA2, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("zamba2", "causal-lm", ZAMBA2), ((5, 2), (12, 1)))
    narrower = inferred_model({**ZAMBA2, "hidden_size": 3840}, head="causal-lm")
    assert narrower.count == built({**ZAMBA2, "hidden_size": 3840}, "causal-lm")
    with pytest.raises(SymparamsError, match="the inferred costs hold only for hidden_size = 2560"):
        narrower.flops(5)


def test_dots1_while_max_window_layers_covers_every_layer_costs_what_a_tiny_real_model_counts_and_fewer_are_refused():
    """dots1 makes its layers from ``max_window_layers`` on sliding-window ones: its full-attention layers are the
    fewer of the two, no polynomial.  The costs are fitted where the bound is at least the layers (the released
    checkpoint has 62 of 62), at a bound and a window no fit saw; one layer past the bound is refused in one
    line, its count kept."""
    config = {**_config("dots1", "causal-lm"), "num_hidden_layers": 5, "max_window_layers": 5, "sliding_window": 3}
    m = inferred_model(config, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("dots1", "causal-lm", config), ((4, 2), (9, 1)))
    past = {**config, "num_hidden_layers": 6}
    fewer = inferred_model(past, head="causal-lm")
    assert fewer.count == built(past, "causal-lm")
    with pytest.raises(SymparamsError, match=r"the inferred costs need max_window_layers ≥ num_hidden_layers "
                                             r"\(max_window_layers is 5, num_hidden_layers is 6\)"):
        fewer.flops(5)
