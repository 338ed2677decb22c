"""Fields once held at their defaults, now free within what the config class enforces, against transformers on
the meta device at other values: a top-k of router groups at most the groups (Dots3 Note), a power of two no shape
follows (Moshi's codebook size), and a value the config class accepts alone (Mllama's tiles, with the default
aspect ratios)."""

import pytest
import transformers

from symparams.families import inferred
from symparams.families.inferred_conditions import _check_relations, other_sides
from symparams.families.inferred_data import OutsideConditions
from tests.reference.inferred_builds import built, entry

#: a small Dots3 Note text model (its vocabulary kept: the default token ids must fall inside it)
DOTS3 = {"model_type": "dots3_note_text", "vocab_size": 152064, "hidden_size": 64, "intermediate_size": 96,
         "moe_intermediate_size": 24, "shared_experts_intermediate_size": 40, "num_hidden_layers": 3,
         "num_attention_heads": 4, "num_key_value_heads": 4, "n_routed_experts": 8, "n_shared_experts": 1,
         "num_experts_per_tok": 2, "q_lora_rank": 24, "kv_lora_rank": 16, "qk_nope_head_dim": 16,
         "qk_rope_head_dim": 8, "v_head_dim": 16, "head_dim": 24, "index_head_dim": 16, "index_n_heads": 2}


class Reader:  # a config.json's keys, as the reader reads them
    def __init__(self, data):
        self.data = data

    def has(self, key):
        return key in self.data

    def int(self, key, default=None, minimum=0):
        return self.data.get(key, default)


def test_a_relation_naming_fields_the_formula_does_not_count_by_reads_them_and_refuses_in_one_line():
    conditions = {"relations": ["n_group ≥ topk_group"]}
    defaults = {"n_group": 1, "topk_group": 1}
    assert other_sides(conditions, {}, defaults, Reader({"n_group": 4})) == {"n_group": 4, "topk_group": 1}
    _check_relations(conditions, other_sides(conditions, {}, defaults, Reader({"n_group": 4, "topk_group": 4})), "c")
    with pytest.raises(OutsideConditions, match=r"n_group = 1, topk_group = 2; the formula needs n_group ≥ "
                                                r"topk_group") as refused:
        _check_relations(conditions, other_sides(conditions, {}, defaults, Reader({"topk_group": 2})), "c")
    assert "\n" not in str(refused.value)


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("topk_group, n_group", [(2, 4), (3, 4), (4, 4), (1, 2)])
def test_dots3_note_text_is_counted_at_other_router_groups_as_transformers_builds_it(topk_group, n_group, cls):
    config = {**DOTS3, "topk_group": topk_group, "n_group": n_group}
    assert inferred.counted(entry("dots3_note_text", cls), config)[0] == built(config, cls)


@pytest.mark.crosscheck
def test_dots3_note_text_with_more_router_groups_chosen_than_there_are_is_refused_as_transformers_does():
    config = {**DOTS3, "topk_group": 3, "n_group": 2}
    with pytest.raises(Exception, match=r"topk_group must be in \[1, n_group\]"):  # a validation error
        built(config, "base")
    with pytest.raises(OutsideConditions, match="n_group = 2, topk_group = 3"):
        inferred.counted(entry("dots3_note_text", "base"), config)


#: a narrow Mllama, its layer counts and vocabulary kept (the lists of layers the formula holds for name them,
#: the default token ids must fall inside the vocabulary)
MLLAMA = {"model_type": "mllama",
          "vision_config": {"hidden_size": 32, "intermediate_size": 48, "attention_heads": 2, "image_size": 56,
                            "patch_size": 14, "vision_output_dim": 160},
          "text_config": {"hidden_size": 32, "intermediate_size": 48, "num_attention_heads": 4,
                          "num_key_value_heads": 2}}


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_mllama_s_tiles_are_the_only_value_transformers_accepts_with_the_default_aspect_ratios(cls):
    assert inferred.counted(entry("mllama", cls), MLLAMA)[0] == built(MLLAMA, cls)
    other = {**MLLAMA, "vision_config": {**MLLAMA["vision_config"], "max_num_tiles": 2}}
    with pytest.raises(Exception, match="max_num_tiles must be 4"):  # a validation error
        transformers.AutoConfig.for_model("mllama", **{k: v for k, v in other.items() if k != "model_type"})
    with pytest.raises(OutsideConditions, match="max_num_tiles = 4 .the only value transformers accepts"):
        inferred.counted(entry("mllama", cls), other)


#: a small Moshi (its audio encoder, Mimi, takes only powers of two as codebook sizes)
MOSHI = {"model_type": "moshi", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "ffn_dim": 96}


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("codebook_size", [256, 1024, 4096])
def test_moshi_is_counted_at_other_codebook_sizes_as_transformers_builds_it(codebook_size, cls):
    config = {**MOSHI, "audio_encoder_config": {"codebook_size": codebook_size}}
    assert inferred.counted(entry("moshi", cls), config)[0] == built(config, cls)
