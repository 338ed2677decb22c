"""Where transformers' forward runs: the rule found from traces at consecutive head widths, and the shipped rules
against the model transformers builds (a rotary embedding fails at an odd rotated width)."""

import json

import pytest
import torch
import transformers

from symparams.analysis.inference.running import _rule
from symparams.core.errors import SymparamsError
from symparams.families.inferred import model as inferred_model
from symparams.families.inferred_data import entries


def test_the_rule_is_the_smallest_modulus_whose_residues_part_the_runs():
    assert _rule({w: w % 2 == 0 for w in range(4, 20)}) == (2, [0])  # a whole head rotated
    assert _rule({w: (w // 2) % 2 == 0 for w in range(4, 20)}) == (4, [0, 1])  # half of each head (Persimmon)
    assert _rule({w: (w // 4) % 2 == 0 for w in range(4, 20)}) == (8, [0, 1, 2, 3])  # a quarter


def test_a_width_that_alone_runs_is_the_rule_itself():
    assert _rule({w: w == 64 for w in range(64, 80)}) == (0, [64])  # NeoMMe: M-RoPE sections fixed in the config


def test_runs_that_follow_no_modulus_or_that_too_few_widths_show_give_no_rule():
    assert _rule({w: int(w * 0.4) % 2 == 0 for w in range(4, 20)}) is None  # two fifths of a head: period 5
    assert _rule({w: w % 2 == 0 for w in range(4, 7)}) is None  # a residue seen once proves nothing


def _config(model_type: str, heads: int, width: int) -> dict:
    """A one-layer config.json of ``model_type`` whose heads are ``width`` wide (H = A·width)."""
    config = {"model_type": model_type, "hidden_size": heads * width, "num_attention_heads": heads,
              "num_key_value_heads": heads, "intermediate_size": 16, "num_hidden_layers": 1, "vocab_size": 32}
    return {k: v for k, v in config.items() if k in entries(model_type)["base"]["symbols"] or k == "model_type"}


def _runs(model_type: str, config: dict) -> bool:
    built = transformers.AutoConfig.for_model(model_type, **{k: v for k, v in config.items() if k != "model_type"})
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(built, attn_implementation="eager")
        try:
            module(input_ids=torch.zeros(1, 5, dtype=torch.long))
        except Exception:  # a shape mismatch in the rotary embedding
            return False
    return True


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type", ["olmo", "persimmon"])
def test_the_shipped_costs_are_refused_exactly_where_transformers_model_does_not_run(model_type):
    assert entries(model_type)["base"]["costs"]["runs"], "the data holds no rule for a rotary model"
    for width in range(4, 12):
        config = _config(model_type, 2, width)
        m = inferred_model(json.loads(json.dumps(config)))
        try:
            m.flops(5, 1)
            refused = None
        except SymparamsError as exc:
            refused = str(exc)
        assert (refused is None) == _runs(model_type, config), (width, refused)
        if refused:
            assert f"is {width}): the model transformers builds does not run" in refused and "\n" not in refused


def test_an_entry_probed_again_finds_its_rule_again():
    """The regeneration probes a kept entry again, one that holds its rule already; read under it, the odd widths
    were no value tried, every width left ran, and the rule was lost (SmolLM3's forward fails at an odd H/A)."""
    from symparams.analysis.inference.running import width_rules

    entry = entries("smollm3")["base"]
    assert entry["costs"]["runs"] == [[[["1", [], [["H", "A", 1]]]], 2, [0]]]
    assert width_rules(entry) == entry["costs"]["runs"]
