"""A size set to null in a config.json where the type's default is a number: transformers builds without it
(DeepSeek-V3's and GLM-4.7-Flash's ``q_lora_rank: null``: no query compression, as Moonlight's checkpoint has
it), so an inferred formula fitted with it refuses the file rather than count the default's compressed query."""

import pytest
import torch
import transformers

from symparams import model as lookup
from symparams.families.inferred import model
from symparams.families.inferred_data import OutsideConditions

#: a DeepSeek-V3 small enough to build in a moment, its query uncompressed
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "vocab_size": 11, "hidden_size": 15, "intermediate_size": 13,
               "moe_intermediate_size": 7, "num_hidden_layers": 3, "first_k_dense_replace": 1,
               "num_attention_heads": 5, "num_key_value_heads": 5, "n_shared_experts": 2, "n_routed_experts": 6,
               "n_group": 2, "topk_group": 1, "num_experts_per_tok": 2, "kv_lora_rank": 7, "q_lora_rank": None,
               "qk_rope_head_dim": 4, "qk_nope_head_dim": 5, "v_head_dim": 3, "head_dim": 4}


def _built(config: dict) -> int:
    made = transformers.AutoConfig.for_model(config["model_type"],
                                             **{k: v for k, v in config.items() if k != "model_type"})
    with torch.device("meta"):
        return sum(p.numel() for p in transformers.AutoModel.from_config(made).parameters())


@pytest.mark.crosscheck
def test_a_null_size_is_refused_by_the_inferred_formula_and_counted_by_the_family():
    with pytest.raises(OutsideConditions, match="key q_lora_rank is null; transformers then builds without it"):
        model(dict(DEEPSEEK_V3))
    with pytest.raises(OutsideConditions, match="key q_lora_rank is null"):
        model({"model_type": "glm4_moe_lite", "q_lora_rank": None})
    # the hand-written family reads the null as transformers does (a query projection of H × A·(D_n + D_r))
    assert lookup(dict(DEEPSEEK_V3)).count == _built(DEEPSEEK_V3)
    assert model({**DEEPSEEK_V3, "q_lora_rank": 9}).count == _built({**DEEPSEEK_V3, "q_lora_rank": 9})
