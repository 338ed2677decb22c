"""Costs whose relation between two fields is an order, not divisibility, read from the data alone, against tiny real
models at configurations the earlier costs refused: the dense layers first below the layer count without dividing it
(DeepSeek-V2, as its own default of 0 dense layers of 32; GLM-4-MoE, Sarvam), a sparse layer every few layers that
do not divide the count (Qwen2-MoE, Qwen3-MoE).  FLOPs under ``FlopCounterMode`` forward and training, and the
cache's tensors, at two lengths."""

from __future__ import annotations

import pytest

from symparams.families.inferred import entries
from symparams.families.inferred import model as inferred_model
from tests.analysis.test_inferred_costs import _config, _real, assert_costs_are_the_real_models

pytestmark = pytest.mark.crosscheck

#: (model_type, class, the relation's text, the layer fields set): configurations the order admits, divisibility not
CASES = [
    ("deepseek_v2", "causal-lm", "first_k_dense_replace < num_hidden_layers",
     {"num_hidden_layers": 3, "first_k_dense_replace": 2}),
    ("deepseek_v2", "base", "first_k_dense_replace < num_hidden_layers",
     {"num_hidden_layers": 3, "first_k_dense_replace": 0}),
    ("qwen2_moe", "causal-lm", "decoder_sparse_step < num_hidden_layers",
     {"num_hidden_layers": 5, "decoder_sparse_step": 2}),
    ("qwen3_moe", "causal-lm", "decoder_sparse_step < num_hidden_layers",
     {"num_hidden_layers": 5, "decoder_sparse_step": 3}),
    ("glm4_moe", "causal-lm", "first_k_dense_replace < num_hidden_layers",
     {"num_hidden_layers": 3, "first_k_dense_replace": 2}),
    ("sarvam_moe", "causal-lm", "first_k_dense_replace < num_hidden_layers",
     {"num_hidden_layers": 3, "first_k_dense_replace": 2}),
    ("sarvam_mla", "base", "first_k_dense_replace < num_hidden_layers",  # its count needs 1 dense layer at least
     {"num_hidden_layers": 5, "first_k_dense_replace": 3}),
]


@pytest.mark.parametrize("model_type, cls, relation, layers", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_an_order_admits_configurations_off_the_multiples_and_costs_what_a_real_model_counts(
        model_type, cls, relation, layers):
    assert relation in entries(model_type)[cls]["costs"]["relations"]
    config = {**_config(model_type, cls), **layers}
    head = None if cls == "base" else cls
    m = inferred_model(config, head=head)
    assert_costs_are_the_real_models(m, _real(model_type, cls, config), ((5, 2), (11, 1)))
