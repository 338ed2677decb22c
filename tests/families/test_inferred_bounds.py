"""Shipped formulas of types whose counts a field bounds by a layer count: ERNIE 4.5 MoE's range of expert layers
(to ``moe_layer_end_index``, past the last layer: to the last layer), Flint's experts beside two dense layers,
Zamba2's shared blocks (``num_mem_blocks``, but no more than the hybrid layers).  Each config is counted as
``count --config`` reads it, on both sides of the bound, and compared with a meta-device build."""

import pytest
import torch
import transformers

from symparams.core.errors import SymparamsError
from symparams.families import inferred

pytestmark = pytest.mark.crosscheck

AUTO = {"base": "AutoModel", "causal-lm": "AutoModelForCausalLM"}

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

#: a small Zamba2: 3 hybrid layers among 10, 2 shared blocks (the causal-lm class's formula below the hybrid
#: layers holds for 7 recurrent layers or more, without attention adapters)
ZAMBA2 = {"model_type": "zamba2", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 10,
          "layers_block_type": ["linear_attention", "hybrid", "linear_attention", "linear_attention", "hybrid",
                                "linear_attention", "linear_attention", "hybrid", "linear_attention",
                                "linear_attention"],
          "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 96, "mamba_d_state": 16,
          "n_mamba_heads": 4, "mamba_expand": 2, "num_mem_blocks": 2, "adapter_rank": 8}


def built(config: dict, cls: str) -> int:
    values = {k: v for k, v in config.items() if k != "model_type"}
    hf = transformers.AutoConfig.for_model(config["model_type"], **values)
    with torch.device("meta"):
        model = getattr(transformers, AUTO[cls]).from_config(hf)
    return sum(p.numel() for p in model.parameters())


def entry(model_type: str, cls: str) -> dict:
    found = (inferred.entries(model_type) or {}).get(cls)
    assert found is not None and found["exact"], f"{model_type} {cls}: not exact in the shipped data"
    return found


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
    "zamba2-fewer-blocks": (ZAMBA2, False), "zamba2-one-block": ({**ZAMBA2, "num_mem_blocks": 1}, False),
    # as many blocks as hybrid layers and more: the branch, with attention adapters
    "zamba2-more-blocks": ({**ZAMBA2, "num_mem_blocks": 5, "use_shared_attention_adapter": True}, True),
    "zamba2-as-many-blocks": ({**ZAMBA2, "num_mem_blocks": 3, "use_shared_attention_adapter": True}, True),
}


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
