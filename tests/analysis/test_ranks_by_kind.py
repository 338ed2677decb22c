"""Every parallelism's per-rank figures on a dense model, a grouped-query model and a mixture of experts.

``test_parallel.py`` checks each stage's parameters Ψ against transformers' tensors split by hand; here the
bytes built on Ψ are checked, for the three kinds of model, against their sources' forms:

* ZeRO stages 0–3 (Rajbhandari et al. 2020, Figure 1): ``(2 + 2 + K)·Ψ``, ``(2 + 2)·Ψ + K·Ψ/N``,
  ``2·Ψ + (2 + K)·Ψ/N``, ``(2 + 2 + K)·Ψ/N``, K = 12, with tensor and pipeline parallelism;
* Megatron's distributed optimizer: ``6 + 12/N`` bytes a parameter (``compute_weight_and_optimizer_memory``);
* the first stage's activations with tensor, sequence, context and pipeline parallelism (interleaved too):
  Korthikanti et al.'s Table 2 row ``34·s·b·h/t`` for each rank's ``s/C`` tokens plus ``5·a·s²·b/(t·C)``
  for its queries' scores against all keys, per layer, for ``L·(1 + (P − 1)/(P·V))`` layers (1F1B: ``L``);
* expert parallelism: the mixture's routed experts divided by E, which ``test_ranks.py`` checks further.
"""

import math
from fractions import Fraction

import pytest

from symparams import model
from symparams.analysis import ranks
from symparams.analysis.parallel import Layout, Split

KINDS = {
    "dense": model("gpt2", head="causal-lm", V=1000, P=64, H=64, L=8, A=8, r=4),
    "gqa": model("llama", head="causal-lm", V=1000, H=64, L=8, A=8, G=4, F=96, gqa=True),
    "moe": model("mixtral", head="causal-lm", V=1000, H=64, L=8, A=8, G=4, N_e=4, k_e=2, F_e=48),
}
S, B, N = 32, 2, 4


def rank(m, **options):
    return ranks.per_rank(m.memory("bf16", "adam", **options))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_zero_divides_every_stage_as_the_zero_paper_does(kind, zero):
    m = KINDS[kind]
    r = rank(m, zero=zero, ranks=N, tensor_parallel=2, pipeline_parallel=2)
    for stage, split in zip(r.stages, Split(m, Layout(tensor=2, pipeline=2)).stages):
        psi = split.parameters
        expected = [16 * psi, 4 * psi + Fraction(12 * psi, N), 2 * psi + Fraction(14 * psi, N),
                    Fraction(16 * psi, N)][zero]
        assert stage.weights + stage.gradients + stage.optimizer == math.ceil(expected), (kind, stage.stage)


@pytest.mark.parametrize("kind", KINDS)
def test_distributed_optimizer_keeps_6_plus_12_over_n_bytes_a_parameter(kind):
    m = KINDS[kind]
    r = rank(m, ranks=N, tensor_parallel=2, pipeline_parallel=2, distributed_optimizer=True)
    for stage in r.stages:
        assert stage.weights + stage.gradients + stage.optimizer == math.ceil((6 + Fraction(12, N)) * stage.parameters)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("v", [1, 2])
def test_first_stage_activations_with_tensor_sequence_context_and_pipeline_parallelism(kind, v):
    m, t, c, p = KINDS[kind], 2, 2, 2
    r = rank(m, seq=S, batch=B, tensor_parallel=t, sequence_parallel=True, context_parallel=c,
             pipeline_parallel=p, virtual_stages=v if v > 1 else None, ranks=c)
    h, a, layers = 64, 8, 8
    local = S // c
    per_layer = Fraction(34 * local * B * h, t) + Fraction(5 * a * local * S * B, t)  # queries × all keys
    held = layers * (1 + Fraction(p - 1, p * v)) if v > 1 else layers
    assert r.stages[0].activations == math.ceil(held * per_layer)


def test_expert_parallel_divides_only_the_routed_experts():
    m = KINDS["moe"]
    whole, split = (Split(m, Layout(expert=e, data=4)).stages[0].share for e in (1, 4))
    experts = 8 * 4 * (2 * 48 * 64 + 64 * 48)  # L layers × N_e experts × gate_up and down
    assert whole.expert_trainable == experts and split.expert_trainable == experts // 4
    assert whole.parameters - split.parameters == experts - experts // 4
