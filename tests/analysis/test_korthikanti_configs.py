"""The most loaded rank's activations for the configurations Korthikanti et al. 2022 train (arXiv:2205.05198).

Their Table 3 trains four GPT models at s = 2048, micro-batch 1, 8-way tensor parallelism: 22B (h = 6144,
a = 64, L = 48, one pipeline stage), GPT-3 175B (12288, 96, 96; 8 stages), MT-NLG 530B (20480, 128, 105; 35
stages) and 1T (25600, 160, 128; 64 stages), the runs of their Table 5 and the bars of their Figure 1.  What
the paper states of them, checked here on the first pipeline stage as ``memory`` places it:

* section 4.2.3, eq. (5): with 1F1B the first stage keeps ``p`` micro-batches of ``L/p`` layers, so its
  activations are ``s·b·h·L/t·(34 + 5·a·s/h)`` with sequence parallelism, whatever ``p``;
* eq. (6): with selective recomputation too, ``34·s·b·h·L/t``;
* Table 2's tensor-parallel row without sequence parallelism, ``s·b·h·L·(10 + 24/t + 5·a·s/(h·t))``;
* section 5: selective recomputation saves 70% of GPT-3's activations and 65% of MT-NLG's (5·a·s/h = 80 and
  64 against 34).
"""

from fractions import Fraction

import pytest

from symparams import model
from symparams.analysis.ranks import per_rank

S, T = 2048, 8
#: name → (h, a, L, p), Korthikanti et al. 2022, Table 3
CONFIGS = {"22B": (6144, 64, 48, 1), "175B": (12288, 96, 96, 8), "530B": (20480, 128, 105, 35),
           "1T": (25600, 160, 128, 64)}


def first_stage(name: str, sequence: bool, recompute: str) -> int:
    h, a, layers, p = CONFIGS[name]
    gpt = model("gpt2", head="causal-lm", V=51200, P=S, H=h, L=layers, A=a, r=4)
    rank = per_rank(gpt.memory("bf16", "adam", seq=S, batch=1, tensor_parallel=T, sequence_parallel=sequence,
                               recompute=recompute, pipeline_parallel=p if p > 1 else None))
    return rank.stages[0].activations


@pytest.mark.parametrize("name", CONFIGS)
def test_first_stage_keeps_every_layers_worth_as_eq_5_and_6_say(name):
    h, a, layers, _ = CONFIGS[name]
    sbh = S * h
    assert first_stage(name, True, "none") == Fraction(sbh * layers, T) * (34 + Fraction(5 * a * S, h))
    assert first_stage(name, True, "selective") == 34 * sbh * layers // T
    assert first_stage(name, False, "none") == sbh * layers * (10 + Fraction(24, T) + Fraction(5 * a * S, h * T))


@pytest.mark.parametrize("name, saved", [("175B", 70), ("530B", 65)])
def test_selective_recomputation_saves_what_section_5_says(name, saved):
    kept = Fraction(first_stage(name, True, "selective"), first_stage(name, True, "none"))
    assert round(100 * (1 - kept)) == saved
