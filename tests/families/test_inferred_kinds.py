"""A config.json's own list of sliding and full attention layers against the inferred costs, which were traced with
the list transformers computes when the file leaves it out (Gemma 3: a full-attention layer in every 6)."""

from __future__ import annotations

import pytest

from symparams.core.errors import SymparamsError
from symparams.families.inferred import model as inferred_model

SLIDING, FULL = "sliding_attention", "full_attention"
CONFIG = {"model_type": "gemma3_text", "num_hidden_layers": 7, "hidden_size": 64, "intermediate_size": 96,
          "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 128, "sliding_window": 4}


def test_the_list_transformers_computes_is_costed_as_traced():
    computed = inferred_model({**CONFIG, "layer_types": [SLIDING] * 5 + [FULL, SLIDING]}, head="causal-lm")
    left_out = inferred_model(CONFIG, head="causal-lm")
    assert computed.kv_cache("fp32", 9, 1).total == left_out.kv_cache("fp32", 9, 1).total
    # 6 sliding layers keep 3 tokens each, the full one all 9: keys and values, 1 head of 16, 4 bytes
    assert left_out.kv_cache("fp32", 9, 1).total == 2 * 16 * 4 * (6 * 3 + 9)


def test_another_list_keeps_its_count_and_refuses_its_costs():
    every_sliding = {**CONFIG, "layer_types": [SLIDING] * 7}
    m = inferred_model(every_sliding, head="causal-lm")
    assert m.count == inferred_model(CONFIG, head="causal-lm").count
    with pytest.raises(SymparamsError, match="layer_types has 0 layers of kind 'full_attention', the inferred costs "
                                             "hold only with 1"):
        m.kv_cache("fp32", 9, 1).total
