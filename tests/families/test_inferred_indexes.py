"""Lists of layer indices (Llama 4's ``moe_layers``: the layers whose MLP is a mixture of experts).

The formula counts how many layers such a list names, which transformers
computes from other keys when a config.json leaves it out (one layer in every
``interleave_moe_layer_step``).  A config.json's own list naming as many
layers, wherever they are, is counted; one naming another number is refused
in one line.  The reference is always a meta-device build.
"""

import json
import sys
from pathlib import Path

import pytest

from symparams.families import inferred
from tests.reference.inferred_builds import built
from symparams.families.config import ConfigReader
from symparams.families.inferred_keys import check_indexes

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from inferred_fields import index_lists, indexes_of  # noqa: E402

#: one MoE layer in every ``step`` of ``layers``: floor(layers / step) listed
INDEXES = {"moe_layers": {"layers": "layers", "count": [["1", [], [["layers", "step", 1]]]]}}


def checked(moe_layers, layers: int = 6, step: int = 2) -> None:
    reader = ConfigReader({"layers": layers, "step": step, "moe_layers": moe_layers}, "c.json")
    check_indexes(INDEXES, reader, {"layers": layers, "step": step}, "c.json")


@pytest.mark.parametrize("moe_layers", [[1, 3, 5], [0, 1, 2], [5, 0, 3]])
def test_a_list_naming_as_many_layers_as_the_rule_is_taken_wherever_they_are(moe_layers):
    checked(moe_layers)


@pytest.mark.parametrize("moe_layers,words", [([1, 3], "names 2 layers, the formula holds only with 3"),
                                              ([0, 1, 2, 3, 4, 5], "names 6 layers"),
                                              ([1, 1, 3], "names a layer twice"),
                                              ([1, 3, 6], "not indices of the 6 layers"),
                                              (3, "not indices")])
def test_a_list_naming_another_number_of_layers_is_refused_in_one_line(moe_layers, words):
    with pytest.raises(inferred.OutsideConditions, match=words) as refused:
        checked(moe_layers)
    assert "\n" not in str(refused.value)


def test_a_layer_count_the_formula_does_not_read_is_the_file_s_and_a_list_without_one_is_refused():
    # Zamba2 counts its layers by kind; its hybrid_layer_ids must name as many layers as are hybrid
    indexes = {"ids": {"layers": "layers", "count": "kinds#hybrid"}}
    check_indexes(indexes, ConfigReader({"layers": 4, "ids": [0, 3]}, "c.json"), {"kinds#hybrid": 2}, "c.json")
    with pytest.raises(inferred.OutsideConditions, match="names 2 layers, the formula holds only with 3"):
        check_indexes(indexes, ConfigReader({"layers": 4, "ids": [0, 3]}, "c.json"), {"kinds#hybrid": 3}, "c.json")
    with pytest.raises(inferred.OutsideConditions, match="not indices of the 4 layers"):
        check_indexes(indexes, ConfigReader({"layers": 4, "ids": [0, 4]}, "c.json"), {"kinds#hybrid": 2}, "c.json")
    with pytest.raises(inferred.OutsideConditions, match="ids is given without layers") as refused:
        check_indexes(indexes, ConfigReader({"ids": [0, 3]}, "c.json"), {"kinds#hybrid": 2}, "c.json")
    assert "\n" not in str(refused.value)


@pytest.mark.crosscheck
def test_zamba2_s_hybrid_layer_ids_count_its_hybrid_layers():
    """The config class computes the list after its fields, so a null stays null: left out, it is the hybrid layers'
    indices, whichever the per-layer list makes hybrid, and no size moves it."""
    sizes = ("hidden_size", "layers_block_type#hybrid", "layers_block_type#linear_attention", "num_mem_blocks")
    assert indexes_of("zamba2", "base", sizes) == {
        "hybrid_layer_ids": {"layers": "num_hidden_layers", "count": "layers_block_type#hybrid"}}


def test_a_list_is_an_index_list_only_below_one_layer_count_of_its_own_config():
    values = {"num_hidden_layers": 48, "interleave_moe_layer_step": 2, "moe_layers": [1, 3, 47],
              "dense_layers": [64, 64], "layer_sizes": [64, 128], "attn_resolutions": [3],
              "text_config.num_hidden_layers": 4, "text_config.global_attn_indexes": [0, 2]}
    # repeated entries are widths, not indices; [64, 128] is below no layer count; resolutions name no layers
    assert index_lists(values) == {"moe_layers": "num_hidden_layers",
                                   "text_config.global_attn_indexes": "text_config.num_hidden_layers"}
    # two layer counts above the largest index: which one the list indexes is unknown
    assert index_lists({"num_layers": 8, "num_decoder_layers": 6, "cross_layers": [1, 4]}) == {}


# -- Llama 4 against meta builds ------------------------------------------------------------------------------------

SMALL = {"vocab_size": 1000, "hidden_size": 64, "intermediate_size": 48, "intermediate_size_mlp": 96,
         "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 3}


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("layers,step,moe_layers", [(6, 2, None), (6, 2, [0, 1, 5]), (5, 3, [4]), (4, 1, [0, 1, 2, 3]),
                                                    (7, 4, None), (7, 4, [6])])
def test_llama4_text_counts_the_layers_its_list_names(cls, layers, step, moe_layers):
    """Two of six layers dense and four MoE are another count than four dense and two MoE: counted with the list
    the file gives, or the one transformers computes from the step."""
    config = {"model_type": "llama4_text", **SMALL, "num_hidden_layers": layers, "interleave_moe_layer_step": step}
    if moe_layers is not None:
        config["moe_layers"] = moe_layers
    assert inferred.model(config, head=None if cls == "base" else cls).count == built(config, cls)


@pytest.mark.crosscheck
def test_llama4_text_refuses_a_list_of_other_layers_than_it_counts():
    """Six layers, a step of 2: three MoE layers counted.  A file listing all six (as a save of the default's list
    retiled would) builds six: refused, not counted as three."""
    config = {"model_type": "llama4_text", **SMALL, "num_hidden_layers": 6, "interleave_moe_layer_step": 2,
              "moe_layers": [0, 1, 2, 3, 4, 5]}
    with pytest.raises(inferred.OutsideConditions, match="moe_layers names 6 layers, the formula holds only with 3"):
        inferred.model(config)
    assert built(config, "base") != built({**config, "moe_layers": [1, 3, 5]}, "base")  # the list shapes the model


@pytest.mark.crosscheck
def test_llama4_counts_its_text_model_s_moe_layers_through_its_sub_config(tmp_path):
    text = {**SMALL, "num_hidden_layers": 4, "interleave_moe_layer_step": 2, "moe_layers": [0, 3]}
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
              "vision_output_dim": 48, "projector_input_dim": 48, "projector_output_dim": 48, "image_size": 56,
              "patch_size": 14}
    config = {"model_type": "llama4", "text_config": text, "vision_config": vision}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert inferred.model(json.loads(path.read_text())).count == built(config, "base")
    with pytest.raises(inferred.OutsideConditions, match="text_config.moe_layers names 1 layers"):
        inferred.model({**config, "text_config": {**text, "moe_layers": [2]}})


# -- GOT-OCR2 against meta builds -----------------------------------------------------------------------------------

#: a small GOT-OCR2: its vision tower's global-attention layers are those global_attn_indexes names (2, 5, 8 and 11
#: by default), the others windowed, with relative-position tables of another size
GOT_VISION = {"hidden_size": 32, "output_channels": 16, "num_attention_heads": 2, "image_size": 64, "patch_size": 8,
              "window_size": 3, "mlp_dim": 48}
GOT_TEXT = {"vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 4,
            "num_attention_heads": 4, "num_key_value_heads": 2}


def got_ocr2(layers: int, indexes=None) -> dict:
    vision = {**GOT_VISION, "num_hidden_layers": layers}
    if indexes is not None:
        vision["global_attn_indexes"] = indexes
    return {"model_type": "got_ocr2", "vision_config": vision, "text_config": GOT_TEXT}


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("layers", [12, 13, 14, 20])
def test_got_ocr2_counts_four_global_layers_from_its_list_s_last_index_up(cls, layers):
    """From 12 vision layers on every default index names a layer: 4 global layers and the rest windowed (at 14
    layers a pattern of one global layer in every 3 would have 5, at 20 layers 7)."""
    config = got_ocr2(layers)
    assert inferred.model(config, head=None if cls == "base" else cls).count == built(config, cls)


@pytest.mark.crosscheck
def test_got_ocr2_refuses_fewer_layers_than_its_list_names_and_a_list_of_its_own():
    """At 8 vision layers the default list names 2 and 5 only: 2 global layers, not the 4 the formula counts.  The
    formula holds for the default's list only: a file's own is refused (it may name other layers than there are)."""
    assert built(got_ocr2(8), "base") != built(got_ocr2(8, [0, 1, 2, 3]), "base")  # the list shapes the model
    with pytest.raises(inferred.OutsideConditions, match="vision_config.num_hidden_layers is 8") as refused:
        inferred.model(got_ocr2(8))
    assert "\n" not in str(refused.value)
    with pytest.raises(inferred.OutsideConditions, match="global_attn_indexes is \\[3, 7, 11, 15\\]"):
        inferred.model(got_ocr2(16, [3, 7, 11, 15]))
