"""Solving for a symbol: the admissible value nearest a target, checked against brute force.

The command line's ``symparams solve`` is tested in tests/cli/test_explore.py.
"""

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from symparams import SymparamsError, model
from symparams.analysis.solve import solve
from tests.reference.counts import bert, nearest


def test_bert_hidden_size_nearest_a_billion_at_24_layers_16_heads():
    # N(H) = 289 H² + 31351 H at L = 24, r = 4 and bert-base's vocabulary; H runs over multiples of 16
    count = lambda h: 289 * h * h + 31351 * h  # noqa: E731
    assert all(count(h) == bert(h, 24, 16) for h in (16, 768, 1808))
    best = nearest(range(16, 4000, 16), count, 10**9)
    s = solve(model("bert-base", L=24, A=16), 10**9, "H")
    assert (s.value, s.count) == (best, count(best)) == (1808, 1_001_384_304)
    assert s.below == (1792, count(1792)) and s.above == (1824, count(1824))
    assert s.step == 16 and s.difference == count(1808) - 10**9


@settings(max_examples=40, deadline=None)
@given(target=st.integers(min_value=1, max_value=3 * 10**9), heads=st.sampled_from([1, 4, 12, 16, 20]),
       layers=st.integers(min_value=1, max_value=30))
def test_solving_for_h_equals_brute_force(target, heads, layers):
    s = solve(model("bert-base", H=None, L=layers, A=heads), target, "H")
    # every multiple of A up to well past the target (the count grows with H)
    limit = heads
    while bert(limit, layers, heads) < 2 * target:
        limit += heads
    best = nearest(range(heads, limit + heads, heads), lambda h: bert(h, layers, heads), target)
    assert (s.value, s.count) == (best, bert(best, layers, heads))
    assert s.below == (None if best == heads else (best - heads, bert(best - heads, layers, heads)))
    assert s.above == (best + heads, bert(best + heads, layers, heads))


@settings(max_examples=30, deadline=None)
@given(target=st.integers(min_value=1, max_value=10**10))
def test_solving_for_layers_equals_brute_force(target):
    s = solve(model("bert-base"), target, "L")
    best = nearest(range(1, target // 7_000_000 + 3), lambda n: bert(768, n), target)
    assert (s.value, s.count) == (best, bert(768, best))


def test_solving_for_vocabulary():
    s = solve(model("bert-base"), 200_000_000, "V")
    best = nearest(range(1, 200_000), lambda v: bert(768, 12, V=v), 200_000_000)
    assert (s.value, s.count) == (best, bert(768, 12, V=best))
    assert s.step == 1 and s.below[0] == best - 1


def test_solving_for_the_ratio_steps_over_multiples_of_one_over_h():
    # r·H must be whole, so r runs over k/768; the answer is an exact fraction
    s = solve(model("bert-base"), 150_000_000, "r")
    best = nearest([Fraction(k, 768) for k in range(1, 20 * 768)], lambda q: bert(768, 12, r=q), 150_000_000)
    assert s.value == best and s.count == bert(768, 12, r=best)
    assert s.step == Fraction(1, 768)
    assert solve(model("bert-base"), 150_000_000, "r").to_dict()["value"] == f"{best.numerator}/{best.denominator}"


def test_rational_ratio_and_heads_combine_into_one_step():
    # r = 43/16 needs H a multiple of 16, A = 24 a multiple of 24: H runs over multiples of 48
    m = model("bert-base", r="43/16", A=24)
    s = solve(m, 500_000_000, "H")
    best = nearest(range(48, 6000, 48), lambda h: bert(h, 12, 24, r=Fraction(43, 16)), 500_000_000)
    assert s.step == 48 and s.value == best
    assert s.count == m.subs(H=best).count


def test_a_target_below_everything_gives_the_smallest_value():
    s = solve(model("bert-base", A=16), 1, "H")
    assert s.value == 16 and s.below is None and s.above[0] == 32


def test_a_tie_goes_to_the_smaller_value():
    per_layer = bert(768, 13) - bert(768, 12)
    s = solve(model("bert-base"), bert(768, 12) + per_layer // 2, "L")
    assert per_layer % 2 == 0 and s.value == 12


def test_solving_for_heads_says_the_count_does_not_depend_on_them():
    with pytest.raises(SymparamsError, match="does not depend on A: every admissible A gives 109,482,240"):
        solve(model("bert-base"), 10**9, "A")


def test_a_value_ruled_out_by_a_piecewise_constraint_is_stepped_over():
    # ELECTRA-small (H = 256): E = 256 would drop the projection, so E = H is not admissible
    def count(e):
        return (30522 + 512 + 2) * e + 2 * e + e * 256 + 256 + 12 * (12 * 256 * 256 + 13 * 256)

    m = model("electra-small")
    s = solve(m, count(256), "E")
    best = nearest([e for e in range(1, 1000) if e != 256], count, count(256))
    assert (s.value, s.count) == (best, count(best)) == (255, count(255))  # a tie with 257: the smaller
    assert s.above == (257, count(257))


def test_heads_of_a_grouped_query_model_run_over_a_finite_set():
    # LLaMA-3-8B: K and V have G heads of width H/A, so the count falls as A grows; A must divide H and
    # be a multiple of G: a finite set, every member compared exactly
    m = model("llama-3-8b")
    heads = []
    for a in range(1, 4097):
        try:
            heads.append((a, model("llama-3-8b", A=a).count))
        except SymparamsError:
            pass
    for target in (m.count + 10**8, 7_300_000_000, 10**9):
        s = solve(model("llama-3-8b", A=None), target, "A")
        best = min(heads, key=lambda p: (abs(p[1] - target), p[0]))
        assert (s.value, s.count) == best and s.step is None
        i = heads.index(best)
        assert s.below == (heads[i - 1] if i else None)
        assert s.above == (heads[i + 1] if i + 1 < len(heads) else None)




def test_solve_takes_a_models_name_and_refuses_anything_else():
    assert solve("bert-base", 200_000_000, "L").value == solve(model("bert-base"), 200_000_000, "L").value == 25
    with pytest.raises(SymparamsError, match="a model or a model's name is needed, not int"):
        solve(3, 1, "H")
    with pytest.raises(SymparamsError, match="unknown model 'bert-huge'"):
        solve("bert-huge", 1, "H")


def test_a_target_python_writes_as_a_float_must_be_whole():
    assert solve(model("bert-base"), 2e8, "L").target == 200_000_000
    with pytest.raises(SymparamsError, match="the target must be a whole number of parameters"):
        solve(model("bert-base"), 2.5, "L")
