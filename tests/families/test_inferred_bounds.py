"""Shipped formulas of types whose counts a field bounds by a layer count: ERNIE 4.5 MoE's range of expert layers
(to ``moe_layer_end_index``, past the last layer: to the last layer), Flint's experts beside two dense layers.
Each config is counted as ``count --config`` reads it, on both sides of the bound, and compared with a
meta-device build.  Zamba2 (``num_mem_blocks`` shared blocks, but no more than the hybrid layers) likewise, with
a config.json's own attention widths (transformers keeps them over its ``2 x hidden_size``) and its own
``hybrid_layer_ids`` (as many adapters as it names): one naming other than the hybrid layers' number is refused."""

import pytest

from symparams.core.errors import SymparamsError
from symparams.families import inferred
from tests.reference.inferred_builds import built, entry

pytestmark = pytest.mark.crosscheck


#: a small ERNIE 4.5 MoE: 6 layers, experts from layer 1 to 3 at one in every 2 (layers 1 and 3)
ERNIE = {"model_type": "ernie4_5_moe", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96,
         "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "moe_intermediate_size": 32,
         "moe_num_experts": 4, "moe_k": 2, "moe_num_shared_experts": 1, "moe_layer_start_index": 1,
         "moe_layer_end_index": 3, "moe_layer_interval": 2}

#: a small Flint: 7 layers, 0 and 1 dense, experts on every other layer elsewhere (3 and 5)
FLINT = {"model_type": "flint", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96,
         "num_hidden_layers": 7, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
         "moe_intermediate_size": 32, "shared_expert_intermediate_size": 40, "num_experts": 4,
         "num_experts_per_tok": 2, "decoder_sparse_step": 2, "sliding_window": 8}

#: a small Zamba2: 3 hybrid layers among 10, 2 shared blocks
ZAMBA2 = {"model_type": "zamba2", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 10,
          "layers_block_type": ["linear_attention", "hybrid", "linear_attention", "linear_attention", "hybrid",
                                "linear_attention", "linear_attention", "hybrid", "linear_attention",
                                "linear_attention"],
          "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 96, "mamba_d_state": 16,
          "n_mamba_heads": 4, "mamba_expand": 2, "num_mem_blocks": 2, "adapter_rank": 8}


def without(config: dict, key: str) -> dict:
    return {k: v for k, v in config.items() if k != key}


CONFIGS = {
    # below the layers: the main formula; past them (and at them): the branch, as many as there are
    "ernie-below": (ERNIE, False), "ernie-past": ({**ERNIE, "moe_layer_end_index": 9}, True),
    "ernie-at": ({**ERNIE, "moe_layer_end_index": 6}, True),
    "ernie-start-2-every-1": ({**ERNIE, "moe_layer_start_index": 2, "moe_layer_interval": 1}, False),
    # left out, transformers takes the last layer: the main formula with the field following the layers
    "ernie-left-out": (without(ERNIE, "moe_layer_end_index"), None),
    "flint-every-2": (FLINT, False), "flint-every-1": ({**FLINT, "decoder_sparse_step": 1}, False),
    "flint-every-3": ({**FLINT, "decoder_sparse_step": 3, "num_hidden_layers": 11}, False),
    # fewer shared blocks than hybrid layers: the main formula; as many or more: the branch
    "zamba2-below": (ZAMBA2, False), "zamba2-at": ({**ZAMBA2, "num_mem_blocks": 3}, True),
    "zamba2-past": ({**ZAMBA2, "num_mem_blocks": 5, "use_shared_attention_adapter": True}, True),
    "zamba2-adapters": ({**ZAMBA2, "num_mem_blocks": 3, "use_shared_attention_adapter": True,
                         "add_bias_linear": True, "tie_word_embeddings": False}, True),
    # the file's own attention widths, not 2 x hidden_size: transformers builds with them
    "zamba2-own-attention": ({**ZAMBA2, "attention_hidden_size": 192, "attention_head_dim": 24}, False),
    # its own list of as many hybrid layers, whichever: as many adapters
    "zamba2-own-ids": ({**ZAMBA2, "hybrid_layer_ids": [0, 5, 9]}, False),
}


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_zamba2_s_file_widths_are_built_as_given_and_a_stale_hybrid_list_is_refused(cls):
    from symparams.families.inferred_data import OutsideConditions
    from transformers import AutoConfig

    # transformers keeps a config.json's attention_hidden_size over the 2 x hidden_size it computes
    wide = {**ZAMBA2, "attention_hidden_size": 192}
    assert AutoConfig.for_model(**wide).attention_hidden_size == 192 and built(wide, cls) != built(ZAMBA2, cls)
    assert inferred.counted(entry("zamba2", cls), wide)[0] == built(wide, cls)
    # a file written in full (as save_pretrained writes one), then given two hybrid layers of three, its
    # hybrid_layer_ids left as written: transformers builds an adapter slot for each of the 3 ids listed
    full = {**AutoConfig.for_model(**ZAMBA2).to_dict(), "model_type": "zamba2"}
    stale = {**full, "layers_block_type": ["linear_attention", "hybrid"] * 2 + ["linear_attention"] * 6}
    assert len(stale["hybrid_layer_ids"]) == 3
    assert built(stale, cls) != built({**stale, "hybrid_layer_ids": [1, 3]}, cls)
    with pytest.raises(OutsideConditions, match="hybrid_layer_ids names 3 layers") as refused:
        inferred.counted(entry("zamba2", cls), stale)
    assert "\n" not in str(refused.value)
    assert inferred.counted(entry("zamba2", cls), {**stale, "hybrid_layer_ids": [1, 3]})[0] \
        == built({**stale, "hybrid_layer_ids": [1, 3]}, cls)


def test_a_split_s_side_reads_a_kind_s_layers_from_the_list_and_a_left_out_bound_as_transformers_computes_it():
    from symparams.families.config import ConfigReader

    def side(entry, config):
        return inferred.branch_of(entry, ConfigReader(config, "config"))

    hybrid = "layers_block_type#hybrid"
    kinds = {"symbols": {"num_mem_blocks": "M", hybrid: "K", "layers_block_type#linear_attention": "R"},
             "defaults": {"num_mem_blocks": 1, hybrid: 9},
             "branches": [{"conditions": {"split": [f"num_mem_blocks ≥ {hybrid}"]}}]}
    listed = {"layers_block_type": ["hybrid", "linear_attention"] * 3}  # 3 hybrid layers, not the default 9
    assert side(kinds, {**listed, "num_mem_blocks": 5}) == (("split", f"num_mem_blocks ≥ {hybrid}"),)
    assert side(kinds, {**listed, "num_mem_blocks": 2}) == ()
    end = {"symbols": {"moe_layer_end_index": "E", "num_hidden_layers": "L"},
           "defaults": {"moe_layer_end_index": 27, "num_hidden_layers": 28},
           "follows": {"moe_layer_end_index": [["-1", [], []], ["1", [["num_hidden_layers", 1]], []]]},
           "branches": [{"conditions": {"split": ["moe_layer_end_index ≥ num_hidden_layers"]}}]}
    # left out, the last expert layer is the last layer (9 of 10), not the default config's 27
    assert side(end, {"num_hidden_layers": 10}) == ()
    assert side(end, {"num_hidden_layers": 10, "moe_layer_end_index": 12}) != ()


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_small_config_is_counted_as_transformers_builds_it_on_its_side_of_the_bound(name, cls):
    config, in_branch = CONFIGS[name]
    count, key = inferred.counted(entry(config["model_type"], cls), config)
    assert count == built(config, cls)
    if in_branch is not None:  # the side the config is on decides the formula that counts it
        assert bool(key) == in_branch


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_ernie_s_last_expert_layer_written_minus_1_is_refused_in_one_line(cls):
    # transformers reads -1 as the last layer; the inferred reader refuses it rather than count layers to -1
    with pytest.raises(SymparamsError) as refused:
        inferred.counted(entry("ernie4_5_moe", cls), {**ERNIE, "moe_layer_end_index": -1})
    assert "moe_layer_end_index" in str(refused.value) and "\n" not in str(refused.value)
