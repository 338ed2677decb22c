"""How the tiny real model's sizes are chosen (symparams/analysis/inference/real_check.py)."""

from symparams.analysis.inference.real_check import SMALL, _candidates

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
