"""How the tiny real model's sizes are chosen (symparams/analysis/inference/real_check.py), and what its check
makes of the costs (cost_engine.checked_by)."""

from symparams.analysis.inference.cost_engine import checked_by
from symparams.analysis.inference.cost_result import CostVerification, Costs
from symparams.analysis.inference.real_check import SMALL, RealCheck, _candidates

#: BART's relations: each stack's head count divides the one width both stacks share
KINDS = {("encoder_attention_heads", "d_model"): "divides", ("decoder_attention_heads", "d_model"): "divides"}


def test_a_width_two_head_counts_divide_is_offered_their_multiples_beyond_the_small_values():
    offered = _candidates("d_model", {"encoder_attention_heads": 3, "decoder_attention_heads": 5}, KINDS)
    assert offered[0] == 15  # the one small value both divide: heads 3 and 1 wide
    assert all(v % 15 == 0 for v in offered)
    assert 60 in offered and 60 not in SMALL  # 3 and 5 heads of widths 20 and 12: none below 4


def test_a_field_no_chosen_value_divides_is_offered_the_small_values_alone():
    assert _candidates("encoder_attention_heads", {}, KINDS) == list(SMALL)
    assert _candidates("d_model", {}, KINDS) == list(SMALL)


def _verified() -> Costs:
    return Costs(verification=CostVerification(configurations=8, exact=8, seed=0, wanted=8))


def test_costs_a_tiny_real_model_confirms_are_kept():
    check = RealCheck(values={"hidden_size": 9}, seq=9, batch=2,
                      figures={"forward": [120, 120], "training": [360, 360]})
    kept = checked_by(_verified(), check)
    assert kept.exact and kept.real["passed"]


def test_costs_a_tiny_real_model_counts_otherwise_are_refused():
    check = RealCheck(values={"hidden_size": 9}, seq=9, batch=2,
                      figures={"forward": [120, 120], "training": [360, 362]})
    refused = checked_by(_verified(), check)
    assert not refused.exact
    assert refused.reason == "a tiny real model disagrees: training 360 by the formulas, 362 counted"


def test_costs_no_tiny_real_model_was_run_for_are_refused():
    """Granite-MoE-Hybrid's causal LM verified on meta traces, but no small configuration was found to run."""
    refused = checked_by(_verified(), RealCheck(reason="no small configuration was found (101720498 parameters)"))
    assert not refused.exact
    assert refused.to_dict() == {"exact": False, "reason": "no tiny real model checks the formulas: no small "
                                 "configuration was found (101720498 parameters)",
                                 "check": {"passed": False, "reason": "no small configuration was found (101720498 "
                                           "parameters)"}}
