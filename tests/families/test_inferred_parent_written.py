"""Shipped formulas of Gemma 4's assistants, whose parent config writes a field into its text config: every layer
reuses the target model's keys and values, so the assistant sets ``num_kv_shared_layers`` to the layer count (a
file that leaves it out) and refuses any other value.  The fit moved the layers with it; a config.json is counted
with or without it, as transformers builds it.  The reference is always a meta-device build."""

import copy

import pytest
import transformers

from symparams.families import inferred
from tests.reference.inferred_builds import built, entry

pytestmark = pytest.mark.crosscheck

TYPES = ["gemma4_assistant", "gemma4_unified_assistant"]

#: a small assistant: five layers, two of them full attention (the last one must be)
TEXT = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 2, "num_key_value_heads": 1,
        "vocab_size": 1024, "num_hidden_layers": 5, "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                                                "sliding_attention", "full_attention"]}


#: the assistant's validator wants no per-layer inputs, which Gemma 4's text config has by default (the unified
#: one's text config has no such fields)
NO_PER_LAYER_INPUTS = {"gemma4_assistant": {"hidden_size_per_layer_input": 0, "vocab_size_per_layer_input": 0},
                       "gemma4_unified_assistant": {}}


def small(model_type: str, **text) -> dict:
    return {"model_type": model_type, "backbone_hidden_size": 48, "num_centroids": 16,
            "text_config": {**copy.deepcopy(TEXT), **NO_PER_LAYER_INPUTS[model_type], **text}}


@pytest.mark.parametrize("model_type", TYPES)
@pytest.mark.parametrize("layers", [1, 3, 7])
def test_a_file_without_the_shared_layers_is_counted_at_any_layer_count(model_type, layers):
    kinds = [*(["sliding_attention", "full_attention"] * 4)[:layers - 1], "full_attention"]
    config = small(model_type, num_hidden_layers=layers, layer_types=kinds)
    assert inferred.counted(entry(model_type, "causal-lm"), config)[0] == built(config, "causal-lm")


@pytest.mark.parametrize("model_type", TYPES)
def test_a_saved_file_holding_the_shared_layers_is_counted(model_type):
    """save_pretrained writes the value the parent computed: the layer count, here 5, not the default's 30."""
    hf = transformers.AutoConfig.for_model(model_type, **{k: v for k, v in small(model_type).items()
                                                          if k != "model_type"})
    saved = hf.to_dict()
    assert saved["text_config"]["num_kv_shared_layers"] == 5
    assert inferred.counted(entry(model_type, "causal-lm"), saved)[0] == built(saved, "causal-lm")


@pytest.mark.parametrize("model_type", TYPES)
def test_a_list_ending_in_a_sliding_layer_is_refused_as_transformers_makes_it_full(model_type):
    kinds = ["sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention"]
    config = small(model_type, layer_types=kinds)
    as_listed = small(model_type, layer_types=[*kinds[:-1], "full_attention"])
    assert built(config, "causal-lm") == built(as_listed, "causal-lm")  # the last layer is full either way
    with pytest.raises(inferred.OutsideConditions, match="text_config.layer_types ends with 'sliding_attention'"):
        inferred.counted(entry(model_type, "causal-lm"), config)


@pytest.mark.parametrize("model_type", TYPES)
def test_a_head_width_set_away_from_the_default_is_counted_or_refused_never_counted_at_the_default(model_type):
    """The text config's ``head_dim`` reads back as no one value (its full-attention layers override it per layer),
    which once made it look computed and left it out of the reading: a file's 16 was counted at 256."""
    config = small(model_type, head_dim=16)
    assert built(config, "causal-lm") != built(small(model_type), "causal-lm")  # it changes shapes
    try:
        ours = inferred.counted(entry(model_type, "causal-lm"), config)[0]
    except inferred.OutsideConditions as refused:
        assert "text_config.head_dim" in str(refused)
    else:
        assert ours == built(config, "causal-lm")


@pytest.mark.parametrize("field", ["hidden_size_per_layer_input", "vocab_size_per_layer_input"])
def test_a_per_layer_input_width_the_assistant_validates_to_0_is_its_only_value(field):
    """Gemma 4's assistant's config class refuses any per-layer input width but 0: the formula holds 0, which
    leaves no config transformers accepts out (the type counts as free), and a file with another is refused in one
    line saying so, as transformers refuses it."""
    conditions = entry("gemma4_assistant", "causal-lm")["conditions"]
    assert f"text_config.{field}" in conditions["sole"] and conditions["fixed"][f"text_config.{field}"] == 0
    config = small("gemma4_assistant", **{field: 16})
    with pytest.raises(inferred.OutsideConditions, match=rf"{field} = 0 \(the only value transformers accepts\)") \
            as refused:
        inferred.counted(entry("gemma4_assistant", "causal-lm"), config)
    assert "\n" not in str(refused.value)
    with pytest.raises(Exception, match=f"{field} must be 0"):
        transformers.AutoConfig.for_model("gemma4_assistant", **{k: v for k, v in config.items() if k != "model_type"})
    assert inferred.counted(entry("gemma4_assistant", "causal-lm"), small("gemma4_assistant"))[0] \
        == built(small("gemma4_assistant"), "causal-lm")
