"""Layer kinds under the legacy names transformers still reads (``mamba``, ``attention``).

Every config class renames them as it is built (``remap_legacy_layer_types``:
``mamba`` is ``linear_attention``, ``attention`` is ``full_attention``) in its
``layer_types`` and, for some types, in lists of their own (Zamba2's
``layers_block_type``, whose hub configs write ``mamba`` and ``hybrid``).  A
config.json in the old names counts what transformers builds from it, the
same as in the new names; the names and the lists are data generated from the
pinned transformers, compared here with a fresh generation.
"""

import json
import sys
from pathlib import Path

import pytest

from symparams.families.inferred import model
from symparams.families.inferred_data import DATA
from tests.reference.inferred_builds import built

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from inferred_fields import renamed_kinds  # noqa: E402

#: a small Qwen3-Next: three linear-attention layers and one of full attention, its layer_types as older
#: configs wrote them
QWEN3_NEXT = {"model_type": "qwen3_next", "vocab_size": 101, "hidden_size": 48, "intermediate_size": 40,
              "moe_intermediate_size": 24, "shared_expert_intermediate_size": 28, "num_experts": 4,
              "num_experts_per_tok": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8,
              "linear_value_head_dim": 6, "num_hidden_layers": 4,
              "layer_types": ["mamba", "mamba", "mamba", "attention"]}
#: a small Zamba2 as Zyphra's config.json files write its layers: ``mamba`` and ``hybrid``
ZAMBA2 = {"model_type": "zamba2", "vocab_size": 11, "hidden_size": 2560, "intermediate_size": 13,
          "mamba_d_state": 7, "mamba_d_conv": 3, "mamba_expand": 1, "n_mamba_heads": 4, "mamba_ngroups": 1,
          "num_attention_heads": 5, "num_key_value_heads": 5, "chunk_size": 5, "num_hidden_layers": 9,
          "layers_block_type": ["mamba"] * 3 + ["hybrid"] + ["mamba"] * 4 + ["hybrid"]}
NEW_NAMES = {"mamba": "linear_attention", "attention": "full_attention"}


def _renamed(config: dict, key: str) -> dict:
    return {**config, key: [NEW_NAMES.get(kind, kind) for kind in config[key]]}


@pytest.mark.parametrize("config, key", [(QWEN3_NEXT, "layer_types"), (ZAMBA2, "layers_block_type")],
                         ids=["qwen3_next", "zamba2"])
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_a_list_of_layer_kinds_in_the_legacy_names_counts_what_transformers_builds(config, key, cls):
    head = None if cls == "base" else cls
    counted = model(config, head=head).count
    assert counted == built(config, cls)
    assert counted == model(_renamed(config, key), head=head).count


def test_a_list_transformers_does_not_rename_keeps_the_legacy_name_and_is_refused():
    """DeepSeek-V3.2's ``mlp_layer_types`` is no list a config class renames: ``attention`` there is no kind it
    knows, and the count is refused in one line naming it."""
    from symparams.families.inferred_data import OutsideConditions

    with pytest.raises(OutsideConditions, match="mlp_layer_types has layers of kind 'attention'"):
        model({"model_type": "deepseek_v32", "num_hidden_layers": 2, "mlp_layer_types": ["attention", "sparse"]},
              head="causal-lm")


@pytest.mark.crosscheck
def test_the_renamed_kinds_data_is_what_the_pinned_transformers_gives():
    with open(DATA, encoding="utf-8") as fh:
        shipped = json.load(fh)
    types = {e["model_type"] for e in shipped["formulas"]}
    assert shipped["renamed_kinds"] == renamed_kinds(types)
    assert shipped["renamed_kinds"]["lists"]["zamba2"] == ["layers_block_type"]
