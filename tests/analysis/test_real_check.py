"""How the tiny real model's sizes are chosen (symparams/analysis/inference/real_check.py), and what its check
makes of the costs (cost_engine.checked_by)."""

from types import SimpleNamespace

from symparams.analysis.inference.cost_engine import checked_by
from symparams.analysis.inference.cost_result import CostVerification, Costs
from symparams.analysis.inference.discovered import Field
from symparams.analysis.inference.observing import Observed
from symparams.analysis.inference.real_check import SMALL, RealCheck, _candidates, tiny_values

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


def _mamba_domain() -> SimpleNamespace:
    """A toy of Bamba's Mamba mixer: it runs only where its heads times their width are twice the hidden width
    (the config's own check), and no relation the discovery found says so."""
    start = {"hidden_size": 4096, "mamba_n_heads": 128, "mamba_d_head": 64}
    found = SimpleNamespace(free=list(start), relations=set(), products=[], base=dict(start),
                            fields={n: Field(n, v, kind="free", step="scale") for n, v in start.items()})

    def observe(values, seq, batch):
        if values["mamba_n_heads"] * values["mamba_d_head"] != 2 * values["hidden_size"]:
            return None
        return Observed(seq, batch, {("factor", ("in_proj", 0, "mm"), 1): values["hidden_size"],
                                     ("factor", ("heads", 0, "mm"), 1): values["mamba_n_heads"]})

    return SimpleNamespace(found=found, start=start, cost_fields={}, low={}, held={}, observe=observe, products=[],
                           orders=set(), regular=())


def test_a_width_no_small_value_traces_alone_is_divided_with_the_heads_its_product_holds():
    """No single field of Bamba's product moves alone; the hidden width and the heads halved together five times
    keep it (the sixth leaves 2 heads, below the 4 that keep the code's path), a model of 128 wide, not 4096."""
    domain = _mamba_domain()
    values = tiny_values(domain, domain.observe(domain.start, 7, 2))
    assert values == {"hidden_size": 128, "mamba_n_heads": 4, "mamba_d_head": 64}


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


def test_a_width_the_costs_hold_is_kept_and_its_heads_chosen_among_its_divisors():
    """Zamba 2's costs hold its hidden width (no move of it traces with the base structure): the heads that must
    divide it are chosen among its divisors (6: the first small value of 4 or more, odd ones first, that divides
    48), and no partner moved along takes the width off the value held (3 × 48 for 3 heads)."""
    fields = {"heads": Field("heads", 16, kind="free", step="scale"), "width": Field("width", 48, kind="fixed")}
    found = SimpleNamespace(free=["heads"], relations={("heads", "width")}, products=[], fields=fields,
                            base={"heads": 16, "width": 48})

    def observe(values, seq, batch):
        if values["width"] % values["heads"]:
            return None
        return Observed(seq, batch, {("factor", ("q_proj", 0, "mm"), 1): values["width"],
                                     ("factor", ("scores", 0, "bmm"), 0): values["heads"]})

    start = {"heads": 16, "width": 48}
    domain = SimpleNamespace(found=found, start=start, cost_fields={}, low={}, held={"width": 48}, observe=observe,
                             products=[], orders=set(), regular=())
    assert tiny_values(domain, observe(start, 7, 2)) == {"heads": 6, "width": 48}
