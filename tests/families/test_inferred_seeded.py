"""Shipped formulas of types whose default config does not build: the engine started them from seeded values
(see :mod:`symparams.analysis.inference.seeds`), and a config.json is counted as transformers builds it, or
refused where the default leaves the seeded field unset.  The reference is always a meta-device build."""

import pytest

from symparams.families import inferred
from tests.reference.inferred_builds import built, entry

pytestmark = pytest.mark.crosscheck


#: a small Qwen4-Exp text model: two linear-attention layers and two indexed ones, its QSA indexer set
QWEN4 = {"model_type": "qwen4_exp_text", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 4,
         "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "linear_key_head_dim": 8,
         "linear_value_head_dim": 8, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
         "moe_intermediate_size": 24, "shared_expert_intermediate_size": 40, "num_experts": 6,
         "num_experts_per_tok": 2, "hc_count": 3, "hc_lowrank": 20,
         "layer_types": ["linear_attention", "indexed_attention", "linear_attention", "indexed_attention"],
         "indexer_n_heads": 3, "indexer_kv_heads": 1, "indexer_head_dim": 32, "indexer_budget": 64,
         "indexer_compress_ratio": 4}

#: a small LFM2-MoE: one dense layer, then mixtures of experts; two attention layers and four convolutions
LFM2 = {"model_type": "lfm2_moe", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96,
        "moe_intermediate_size": 40, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2,
        "num_dense_layers": 1, "num_experts": 5, "num_experts_per_tok": 2,
        "layer_types": ["conv", "full_attention", "conv", "conv", "full_attention", "conv"]}


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("config", [QWEN4, LFM2], ids=["qwen4_exp_text", "lfm2_moe"])
def test_a_small_config_is_counted_as_transformers_builds_it(config, cls):
    assert inferred.counted(entry(config["model_type"], cls), config)[0] == built(config, cls)


def test_qwen4_s_indexer_left_unset_is_refused_as_transformers_cannot_build_it():
    unset = {k: v for k, v in QWEN4.items() if not k.startswith("indexer_")}
    with pytest.raises(TypeError):  # the modeling code divides the unset budget by the unset ratio
        built(unset, "base")
    with pytest.raises(inferred.OutsideConditions, match="indexer"):
        inferred.counted(entry("qwen4_exp_text", "base"), unset)


def test_qwen4_s_per_layer_embeddings_are_refused_not_left_out_of_the_count():
    """Layers listed in ``ple_layer_ids`` carry n-gram embeddings the formula was not fitted over: counting the
    config without them would be a wrong number (transformers builds more)."""
    with_ple = {**QWEN4, "ple_layer_ids": [1], "ple_embed_dim": 32, "eos_token_id": 2, "ngram_vocab_size_base": 500}
    assert built(with_ple, "base") > built(QWEN4, "base")
    with pytest.raises(inferred.OutsideConditions, match="ple_layer_ids"):
        inferred.counted(entry("qwen4_exp_text", "base"), with_ple)
    assert inferred.counted(entry("qwen4_exp_text", "base"), {**QWEN4, "ple_layer_ids": []})[0] == built(QWEN4, "base")


def test_lfm2_moe_s_layer_count_without_its_list_is_refused():
    """The default config lists no layer kinds (transformers cannot build it): a layer count alone says
    nothing of how many layers attend."""
    without = {k: v for k, v in LFM2.items() if k != "layer_types"}
    with pytest.raises(inferred.OutsideConditions, match="layer_types"):
        inferred.counted(entry("lfm2_moe", "base"), without)
