"""The most loaded rank's memory against the formulas of its sources.

* Megatron-LM's ``megatron/training/theoretical_memory_usage.py``
  (``compute_weight_and_optimizer_memory``: 6 + 12/N bytes a parameter with
  the distributed optimizer; ``compute_activation_memory``: the first stage's
  transformer layers, ``s·b·h·(18 + 4·F/h)·L / T`` with sequence parallelism
  and selective recomputation, times ``1 + (P − 1)/(P·V)`` interleaved or
  ``min(1, M/P)``), their arithmetic run here on the same arguments; its
  embedding and output-layer terms are left out, as our convention says;
* Megatron's schedules (``megatron/core/pipeline_parallel/schedules.py``):
  stage r's warm-up micro-batches ``P − r − 1`` (1F1B) or ``2·(P − r − 1) +
  (V − 1)·P`` (interleaved, at most ``M·V``), plus the one of the steady state;
* the ZeRO paper's per-rank forms (Rajbhandari et al. 2020, Figure 1):
  ``(2 + 2 + K)·Ψ``, ``(2 + 2)·Ψ + K·Ψ/N``, ``2·Ψ + (2 + K)·Ψ/N``, ``(2 + 2 + K)·Ψ/N`` with K = 12;
* Korthikanti et al. 2022, Table 2, per tensor-parallel rank, its sequence divided by C.
Each stage's parameters Ψ are checked against transformers' tensors in ``test_parallel.py``.
"""

import math
from fractions import Fraction

import pytest

from symparams import SymparamsError, model
from symparams.analysis import ranks
from symparams.analysis.parallel import Layout, Split

GPT = model("gpt2", head="causal-lm", V=1000, P=64, H=64, L=24, A=8, r=4)  # F = 4h: Megatron's 18 + 4F/h = 34
LLAMA = model("llama", head="causal-lm", V=1000, H=64, L=8, A=8, G=4, F=96, gqa=True)
MIXTRAL = model("mixtral", head="causal-lm", V=1000, H=64, L=4, A=8, G=4, N_e=4, k_e=2, F_e=48)
S, B = 32, 2


def per_rank(m, optimizer="adam", **options):
    return ranks.per_rank(m.memory("bf16", optimizer, **options))


@pytest.mark.parametrize("t, p, n", [(2, 1, 4), (2, 4, 8), (1, 2, 3)])
def test_distributed_optimizer_is_megatrons_6_plus_12_over_n_bytes_a_parameter(t, p, n):
    r = per_rank(GPT, ranks=n, tensor_parallel=t, pipeline_parallel=p, distributed_optimizer=True)
    best = r.most_loaded
    assert best.weights + best.gradients + best.optimizer == math.ceil((6 + Fraction(12, n)) * best.parameters)
    assert best.parameters == max(s.parameters for s in Split(GPT, Layout(tensor=t, pipeline=p)).stages)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_zero_stages_divide_each_stage_as_the_zero_paper_does(zero):
    n = 16
    r = per_rank(LLAMA, zero=zero, ranks=n, tensor_parallel=2, pipeline_parallel=2)
    for stage in r.stages:
        psi = stage.parameters
        expected = [(2 + 2 + 12) * psi, 4 * psi + Fraction(12 * psi, n), 2 * psi + Fraction(14 * psi, n),
                    Fraction(16 * psi, n)][zero]
        assert psi % n == 0 and stage.weights + stage.gradients + stage.optimizer == expected
        assert stage.activations == 0


def megatron_first_stage_activations(s, b, h, ffn, layers, t, p, v=None, m=None) -> Fraction:
    """``compute_activation_memory``'s transformer-layer terms, as Megatron computes them (exactly)."""
    memory = Fraction(s * b * h) * (18 + Fraction(4 * ffn, h)) * layers
    if v is not None:
        memory *= 1 + Fraction(p - 1, p * v)
    if v is None and p > 1 and m is not None:
        memory *= min(1, Fraction(m, p))
    return memory / t


@pytest.mark.parametrize("t, p, v, m", [(2, 1, None, None), (2, 2, None, None), (4, 4, None, 2), (2, 4, 2, None),
                                        (2, 3, 2, None), (8, 2, 3, None)])
def test_first_stage_activations_are_megatrons_theoretical_memory(t, p, v, m):
    r = per_rank(GPT, seq=S, batch=B, tensor_parallel=t, sequence_parallel=True, recompute="selective",
                 pipeline_parallel=p, virtual_stages=v, micro_batches=m)
    expected = megatron_first_stage_activations(S, B, 64, 4 * 64, 24, t, p, v, m)
    assert r.stages[0].activations == math.ceil(expected)


def megatron_in_flight(p, rank, v, m):
    """The micro-batches (model chunks with V > 1) stage ``rank`` holds: its warm-up ones and one more."""
    if v == 1:
        warmup = p - rank - 1
        return min(warmup + 1, m) if m else warmup + 1
    warmup = (p - rank - 1) * 2 + (v - 1) * p
    return min(warmup + 1, m * v) if m else warmup + 1


@pytest.mark.parametrize("p, v, m", [(4, 1, None), (4, 1, 3), (2, 2, None), (4, 2, 4), (3, 2, 1)])
def test_each_stage_keeps_the_micro_batches_megatrons_schedule_keeps_in_flight(p, v, m):
    r = per_rank(LLAMA if p != 3 else GPT, seq=S, batch=B, tensor_parallel=2, recompute="selective",
                 pipeline_parallel=p, virtual_stages=v, micro_batches=m)
    layers = 8 if p != 3 else 24
    one_layer = Fraction(S * B * 64) * (10 + Fraction(24, 2))  # Table 2, selective, tensor parallel 2
    for stage in r.stages:
        chunk = Fraction(layers, p * v)
        assert stage.activations == math.ceil(megatron_in_flight(p, stage.stage, v, m) * chunk * one_layer)


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_context_parallel_keeps_its_share_of_the_sequence(recompute):
    c, t = 4, 2
    r = per_rank(LLAMA, seq=S, batch=B, tensor_parallel=t, context_parallel=c, recompute=recompute)
    s, h, a = S // c, 64, 8  # each rank's tokens
    table2 = {"none": s * B * h * (10 + Fraction(24, t)) + Fraction(5 * a * S * S * B, t * c),  # its queries × all keys
              "selective": s * B * h * (10 + Fraction(24, t)), "full": 2 * s * B * h}[recompute]
    assert r.stages[0].activations == math.ceil(8 * table2)
    assert r.weights == 2 * Split(LLAMA, Layout(tensor=t)).stages[0].parameters  # weights are not divided by C


def test_expert_parameters_share_their_optimizer_state_among_the_expert_data_parallel_ranks():
    n, e = 8, 4
    r = per_rank(MIXTRAL, zero=1, ranks=n, expert_parallel=e)
    share = Split(MIXTRAL, Layout(expert=e, data=n)).stages[0].share
    experts = 4 * (4 // e) * (2 * 48 * 64 + 64 * 48)  # L layers × the rank's experts × gate_up and down
    assert share.expert_trainable == experts
    assert r.optimizer == math.ceil(12 * (Fraction(share.parameters - experts, n) + Fraction(experts, n // e)))


def test_serving_splits_the_cache_by_key_value_heads_and_stages():
    r = per_rank(LLAMA, optimizer="none", seq=S, batch=B, tensor_parallel=2, pipeline_parallel=2)
    g, d, layers = 4, 8, 8  # key/value heads, head width, layers
    assert r.most_loaded.kv_cache == 2 * (g // 2) * d * (layers // 2) * S * B * 2
    assert (r.gradients, r.optimizer, r.most_loaded.activations) == (0, 0, 0)


@pytest.mark.parametrize("m, options, needle", [
    (LLAMA, dict(tensor_parallel=3), "attention heads A = 8"),
    (LLAMA, dict(tensor_parallel=8), "key/value heads G = 4"),
    (LLAMA, dict(pipeline_parallel=16), "layers L = 8"),
    (LLAMA, dict(pipeline_parallel=4, virtual_stages=4), "P·V = 16"),
    (LLAMA, dict(context_parallel=5, seq=S), "sequence length s = 32"),
    (MIXTRAL, dict(expert_parallel=3, ranks=3), "experts N_e = 4"),
    (MIXTRAL, dict(expert_parallel=4, ranks=2), "data-parallel ranks N·C = 2"),
    (LLAMA, dict(expert_parallel=2, ranks=2), "has none"),
    (LLAMA, dict(distributed_optimizer=True, zero=2), "not both"),
    (LLAMA, dict(virtual_stages=2), "P > 1"),
    (LLAMA, dict(sequence_parallel=True), "T > 1"),
    (model("t5", V=100, H=32, L=2, A=4, D=8, F=48, B=8), dict(pipeline_parallel=2), "run of consecutive layers"),
])
def test_a_layout_that_does_not_divide_is_refused_naming_the_condition(m, options, needle):
    with pytest.raises(SymparamsError, match=needle.replace("(", r"\(")):
        per_rank(m, **options).total


@pytest.mark.parametrize("options, needle", [
    (dict(pipeline_parallel=0), "'0'"), (dict(pipeline_parallel="x"), "'x'"),
    (dict(pipeline_parallel=2, virtual_stages=1.5), "'1.5'"), (dict(micro_batches=-1), "'-1'"),
    (dict(expert_parallel=True), "True"), (dict(distributed_optimizer="maybe"), "'maybe'"),
    (dict(pad_vocabulary=2), "not 2"), (dict(pipeline=2), "'pipeline'"),
])
def test_a_layout_option_of_the_wrong_kind_is_refused_naming_it(options, needle):
    with pytest.raises(SymparamsError, match=needle):
        per_rank(LLAMA, **options)


@pytest.mark.parametrize("option", ["distributed_optimizer", "micro_batches", "zero"])
def test_flops_refuse_what_only_memory_takes(option):
    with pytest.raises(SymparamsError, match=option):
        LLAMA.flops(S, **{option: 2})


@pytest.mark.parametrize("options", [dict(tensor_parallel=2, pipeline_parallel=2, zero=3, ranks=4),
                                     dict(tensor_parallel=4, sequence_parallel=True, pipeline_parallel=2,
                                          virtual_stages=2, distributed_optimizer=True, ranks=2)])
def test_the_formulas_are_the_figures_before_rounding(options):
    """Each part's formula, at the model's values, s and b, rounds up to the part (a formula wrong by a term
    of the layout, a stage or a share fails here)."""
    import sympy as sp

    from symparams.core.compute import BATCH, SEQ

    r = per_rank(LLAMA, seq=S, batch=B, **options)
    values = {**LLAMA.values, SEQ: S, BATCH: B}
    for part in ("weights", "gradients", "optimizer", "activations"):
        exact = sp.sympify(r.formulas[part]).xreplace(values)
        assert math.ceil(Fraction(int(exact.p), int(exact.q))) == getattr(r.most_loaded, part)
