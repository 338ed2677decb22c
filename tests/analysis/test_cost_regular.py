"""The head widths the costs are fitted at when the smallest run another way (see
:mod:`symparams.analysis.inference.regular`): the per-head widths found among the parameters' widths, the rule their
runs follow, the draws it keeps, and Phi's shipped costs against transformers where the rule lets them hold and
where it refuses them."""

from types import SimpleNamespace

import pytest
import sympy as sp
import torch
import transformers

from symparams.analysis.inference.regular import HeadWidth, Runs, head_widths, regular_runs, regular_widths
from symparams.core.errors import SymparamsError
from symparams.families.inferred import model as inferred_model
from tests.reference.flops import counted, real, token_ids

H, A, D, F = sp.symbols("H A D F", integer=True, positive=True)
NAMES = {H: "hidden_size", A: "num_attention_heads", D: "head_dim", F: "intermediate_size"}


def test_the_per_head_widths_are_a_field_over_another_or_a_head_width_field():
    terms = {sp.floor(H / A), A * sp.floor(H / A), H / A, D, F, H}
    assert head_widths(terms, NAMES) == [HeadWidth("head_dim"), HeadWidth("hidden_size", "num_attention_heads")]


def _half_rotary_domain(start: dict):
    """A stand-in for a class whose heads rotate int(D/2) channels: transformers' cosine has 2·ceil(r/2), so an
    odd r fails, but r = 1 runs (one channel wider)."""
    def observe(values, *args, **kwargs):
        rotated = values["hidden_size"] // values["num_attention_heads"] // 2
        return None if rotated % 2 and rotated > 1 else object()

    return SimpleNamespace(found=SimpleNamespace(base=dict(start)), start=dict(start), observe=observe, regular=[])


def test_the_rule_is_traced_from_the_base_width_and_keeps_the_degenerate_small_widths_out():
    domain = _half_rotary_domain({"hidden_size": 64 * 32, "num_attention_heads": 32})
    rules = regular_runs(domain, [HeadWidth("hidden_size", "num_attention_heads")])
    assert rules == [Runs(HeadWidth("hidden_size", "num_attention_heads"), 4, (0, 1))]
    domain.regular = rules
    widths = [w for w in range(1, 13) if regular_widths(domain, {"hidden_size": 5 * w, "num_attention_heads": 5})]
    # heads of 2 and 3 run (a one-channel rotation, one channel wider) and are left out with the failing 6, 7, 10, 11
    assert widths == [1, 4, 5, 8, 9, 12]


def test_a_width_at_which_every_value_runs_gives_no_rule():
    domain = _half_rotary_domain({"hidden_size": 64 * 32, "num_attention_heads": 32})
    domain.observe = lambda *args, **kwargs: object()
    assert regular_runs(domain, [HeadWidth("hidden_size", "num_attention_heads")]) == []


def _phi(hidden: int, heads: int, rotary: float = 0.5, layers: int = 2, vocab: int = 64) -> dict:
    return {"model_type": "phi", "hidden_size": hidden, "num_attention_heads": heads, "num_key_value_heads": heads,
            "intermediate_size": 2 * hidden, "num_hidden_layers": layers, "vocab_size": vocab,
            "partial_rotary_factor": rotary}


def _model(config: dict, device: str = "cpu"):
    built = transformers.AutoConfig.for_model("phi", **{k: v for k, v in config.items() if k != "model_type"})
    with torch.device(device):
        return real("PhiForCausalLM", built)


@pytest.mark.crosscheck
@pytest.mark.parametrize("config", [_phi(45, 5), _phi(36, 4, layers=3)], ids=["heads of 9", "heads of 9, 3 layers"])
def test_phi_costs_equal_a_tiny_real_model(config):
    """Heads of 9 channels, 4 of them rotated: sizes neither the fit (widths of ×3 multiples) nor the generator's
    check (heads of 4) used."""
    m = inferred_model(config, head="causal-lm")
    module = _model(config)
    for seq, batch in ((5, 2), (12, 1)):
        inputs = {"input_ids": token_ids(config["vocab_size"], seq, batch)}
        flops = m.flops(seq, batch)
        assert (flops.forward, flops.training) == counted(module, inputs), (seq, batch)


@pytest.mark.crosscheck
def test_phi_2_shaped_heads_cost_what_transformers_counts():
    """Phi-2's heads (2560 wide, 32 of 80 channels, two fifths of each rotated), one layer of a narrow MLP: the score
    product is 80 wide."""
    config = {**_phi(2560, 32, rotary=0.4, layers=1), "intermediate_size": 64}
    inputs = {"input_ids": token_ids(64, 7, 2)}
    flops = inferred_model(config, head="causal-lm").flops(7, 2)
    assert (flops.forward, flops.training) == counted(_model(config), inputs)


@pytest.mark.crosscheck
def test_phi_costs_are_refused_at_a_one_channel_rotation_where_transformers_runs_a_wider_head():
    config = _phi(10, 5)  # heads of 2: one channel rotated, which transformers' cosine turns as two
    inputs = {"input_ids": token_ids(64, 5, 1)}
    wider, _ = counted(_model(config), inputs)
    plain, _ = counted(_model({**config, "partial_rotary_factor": 0.0}), inputs)
    # each layer's score product runs over 3 channels, not 2: one more per head, query and key
    assert wider - plain == 2 * config["num_hidden_layers"] * 5 * 5 * 5
    with pytest.raises(SymparamsError, match="head widths"):
        inferred_model(config, head="causal-lm").flops(5, 1)


@pytest.mark.crosscheck
@pytest.mark.parametrize("rotary", [{"partial_rotary_factor": 0.4},
                                    {"rope_parameters": {"partial_rotary_factor": 0.4, "rope_theta": 10000.0,
                                                         "rope_type": "default"}}], ids=["top level", "rope_parameters"])
def test_phi_costs_follow_a_config_s_own_rotary_share(rotary):
    """Heads of 4 pass the rule traced at the default half (4 mod 4 = 0), but two fifths of 4 is one channel, which
    transformers turns as two: refused, naming the key; heads of 16 turn 6 channels and are counted."""
    narrow = {**{k: v for k, v in _phi(20, 5).items() if k != "partial_rotary_factor"}, **rotary}
    inputs = {"input_ids": token_ids(64, 5, 1)}
    wider, _ = counted(_model(narrow), inputs)
    plain, _ = counted(_model({**narrow, "rope_parameters": None, "partial_rotary_factor": 0.0}), inputs)
    assert wider - plain == 2 * narrow["num_hidden_layers"] * 5 * 5 * 5  # one channel more in each score
    with pytest.raises(SymparamsError, match=r"int\(floor\(H/A\) \* partial_rotary_factor\) even \(it is 1\)"):
        inferred_model(narrow, head="causal-lm").flops(5, 1)
    wide = {**narrow, "hidden_size": 80}
    flops = inferred_model(wide, head="causal-lm").flops(5, 1)
    assert (flops.forward, flops.training) == counted(_model(wide), inputs)
