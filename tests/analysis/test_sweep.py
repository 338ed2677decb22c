"""Sweeps: exact counts over grids, int64 only where provably safe, bounded chunks.

The command line's ``symparams sweep`` (table, CSV, JSON, plot) is tested in tests/cli/test_explore.py.
"""

import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from symparams import SymparamsError, model
from symparams.analysis.sweep import INT64_MAX, Sweep, parse_axis, sweep
from symparams.families.presets import all_presets
from tests.reference.counts import bert, mixtral


def run(*args, prelude=""):
    code = f"{prelude}import sys; from symparams.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_every_point_equals_the_model_and_the_hand_count():
    s = sweep(model("bert-base"), H="384:1152:192", L="1,6,24", r="3,43/16,4")
    rows = list(s)
    assert len(s) == 5 * 3 * 3 and s.dtype == "int64"
    expected = [(h, n, q, bert(h, n, r=Fraction(q))) for h in range(384, 1153, 192) for n in (1, 6, 24)
                for q in (3, Fraction(43, 16), 4) if h % 12 == 0 and (Fraction(q) * h).denominator == 1]
    assert rows == expected
    for h, n, q, count in rows[::7]:
        assert count == model("bert-base", H=h, L=n, r=str(q)).count


def test_ranges_include_stop_and_lists_keep_order():
    assert parse_axis("H", "256:1024:256").values() == [256, 512, 768, 1024]
    assert parse_axis("H", "256:1000:256").values() == [256, 512, 768]
    assert parse_axis("L", "3:6").values() == [3, 4, 5, 6]
    assert parse_axis("L", "12,6,24").values() == [12, 6, 24]
    assert parse_axis("r", "1/2:2:1/2").values() == [Fraction(1, 2), 1, Fraction(3, 2), 2]
    assert parse_axis("L", range(2, 8, 3)).values() == [2, 5]


def test_int64_right_below_two_to_the_63():
    # V so large that the count at (H=768, L=12) is the last value int64 holds without wrapping
    v_max = 30522 + (INT64_MAX - bert(768, 12)) // 768
    s = sweep(model("bert-base"), V=f"{v_max - 2}:{v_max}", L="11,12")
    assert s.dtype == "int64" and s.bound <= INT64_MAX
    rows = list(s)
    assert rows == [(v, n, bert(768, n, V=v)) for v in range(v_max - 2, v_max + 1) for n in (11, 12)]
    assert INT64_MAX - 768 < rows[-1][-1] <= INT64_MAX


def test_python_integers_above_two_to_the_63_never_wrap():
    v_max = 30522 + (INT64_MAX - bert(768, 12)) // 768
    s = sweep(model("bert-base"), V=f"{v_max - 1}:{v_max + 3}", L="12")
    assert s.dtype == "object" and s.bound > INT64_MAX
    rows = list(s)
    assert rows == [(v, 12, bert(768, 12, V=v)) for v in range(v_max - 1, v_max + 4)]
    assert rows[-1][-1] > INT64_MAX and all(type(c) is int for *_, c in rows)
    # what a silent int64 wrap would have given is negative; nothing of the kind comes out
    assert all(c > 0 for *_, c in rows)


def test_far_beyond_int64():
    s = sweep(model("bert-base"), H=str(12 * 10**6), L=str(10**12))
    [(h, n, count)] = list(s)
    assert s.dtype == "object" and count == bert(12 * 10**6, 10**12) and count > 2**80


def test_chunks_bound_memory_and_do_not_change_the_result():
    grid = dict(H="64:2048:64", L="1:48", A="1,2,4,8,16")
    whole = list(sweep(model("bert-base"), **grid))
    small = sweep(model("bert-base"), chunk=777, **grid)
    sizes = [len(c) for c in small.chunks()]
    assert max(sizes) <= 777 and len(sizes) == -(-len(small) // 777)
    assert list(small) == whole
    assert len(whole) == 32 * 48 * 5  # every H here is a multiple of every A


def test_constraints_are_filtered_and_counted():
    s = sweep(model("bert-base"), H="760:780:4", A="8,12")
    rows = list(s)
    assert rows == [(h, a, bert(h, 12, a)) for h in range(760, 781, 4) for a in (8, 12) if h % a == 0]
    assert s.skipped() == {"H/A": 12 - len(rows)}
    # r·H must be whole: H = 770 with r = 43/16 is not
    t = sweep(model("bert-base", A=2), H="768,770", r="43/16")
    assert [row[:2] for row in t] == [(768, Fraction(43, 16))]
    assert t.skipped() == {"H*r": 1}


def test_counts_array_is_exact():
    counts = sweep(model("bert-base"), L="1:100").counts()
    assert isinstance(counts, np.ndarray) and counts.dtype == np.int64
    assert counts.tolist() == [bert(768, n) for n in range(1, 101)]


def test_without_numpy_the_pure_python_path_gives_the_same_answer():
    args = ("sweep", "bert-base", "--grid", "H=384:1152:192", "--grid", "r=3,43/16", "--json")
    code, with_numpy, _ = run(*args)
    code2, without, err = run(*args, prelude="import sys; sys.modules['numpy'] = None; ")
    assert code == code2 == 0, err
    a, b = json.loads(with_numpy), json.loads(without)
    assert b["dtype"] == "python" and a["dtype"] == "int64"
    assert a["rows"] == b["rows"] and a["skipped"] == b["skipped"]


def test_force_allows_a_huge_grid_without_evaluating_it():
    s = sweep(model("bert-base"), force=True, H="1:100000", L="1:100000")
    assert len(s) == 10**10
    with pytest.raises(SymparamsError, match="over 10\\^9"):
        sweep(model("bert-base"), H="1:100000", L="1:100000")


def test_other_symbols_need_values():
    with pytest.raises(SymparamsError, match="no value for P, S, L, A, r, needed to sweep"):
        sweep(model("bert", V=30522), H="768")


def electra_small(H, E):
    """ELECTRA-small by hand: embeddings of width E, the projection E→H, 12 layers of width H (r = 4)."""
    return (30522 + 512 + 2) * E + 2 * E + E * H + H + 12 * (12 * H * H + 13 * H)


def test_a_piecewise_constraint_is_checked_per_point():
    # ELECTRA's projection exists only when E ≠ H: points with E = H are left out, with or without NumPy
    s = sweep(model("electra-small"), H="128:512:128", E="128,256")
    expected = [(h, e, electra_small(h, e)) for h in (128, 256, 384, 512) for e in (128, 256) if h != e]
    assert list(s) == expected
    assert s.skipped() == {"E != H": 2} and s.labels["E != H"] == "condition"
    code, out, err = run("sweep", "electra-small", "--grid", "H=128:512:128", "--grid", "E=128,256", "--json",
                         prelude="import sys; sys.modules['numpy'] = None; ")
    assert code == 0, err
    data = json.loads(out)
    assert [(r["H"], r["E"], r["parameters"]) for r in data["rows"]] == expected and data["dtype"] == "python"
    code, out, _ = run("sweep", "electra-small", "--grid", "H=128,256", "--grid", "E=128")
    assert out.splitlines()[-1] == "1 of 2 points; left out 1 point where E != H does not hold"


@pytest.mark.parametrize("kwargs,needle", [
    (dict(chunk="x", H="768"), "chunk must be a whole number of points"),
    (dict(chunk=0, H="768"), "chunk must be a whole number of points"),
    (dict(H=b"12"), "not bytes"),
    (dict(H="768:9" + "9" * 4400 + ":12"), "more than 1000 digits"),
])
def test_wrong_sweep_arguments_are_symparams_errors(kwargs, needle):
    with pytest.raises(SymparamsError, match=needle):
        sweep(model("bert-base"), **kwargs)


def test_a_fixed_head_width_lets_a_follow_h():
    m = model("bert-base")
    s = sweep(m, H="256:4096:256", L="6,12,24", head_width=64)
    rows = list(s)
    assert len(rows) == 16 * 3 and s.skipped() == {}  # with A = 12 fixed, 33 of these 48 points are left out
    assert sweep(m, H="256:4096:256", L="6,12,24").skipped() == {"H/A": 33}
    for h, layers, count in rows:
        assert count == bert(h, layers, A=h // 64) == m.subs(H=h, L=layers, A=h // 64).count
    assert list(sweep(m, H="100:200:50", head_width=64)) == [] and \
        sweep(m, H="100:200:50", head_width=64).skipped() == {"H/64": 3}


@pytest.mark.parametrize("kwargs,needle", [
    (dict(H="768", head_width=0), "the head width must be a positive whole number"),
    (dict(A="4,8", head_width=64), "A follows H with a fixed head width"),
])
def test_a_head_width_that_cannot_be_held(kwargs, needle):
    with pytest.raises(SymparamsError, match=needle):
        sweep(model("bert-base"), **kwargs)


# -- the active count of a mixture of experts -----------------------------------------

ROUTED = [name for name in all_presets() if model(name).routed]


def test_there_are_presets_with_routed_experts():
    assert {"mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b"} <= set(ROUTED)


@pytest.mark.parametrize("name", ROUTED)
@pytest.mark.parametrize("numpy", [True, False])
def test_active_column_equals_the_models_active_count_at_every_point(name, numpy):
    m = model(name)
    v = {s.name: int(x) for s, x in m.values.items()}
    s = Sweep(m, {"L": f"{v['L'] - 1}:{v['L'] + 1}", "k_e": f"1,{v['k_e']},{v['N_e'] + 1}", "V": str(v["V"] + 5)},
              numpy=numpy)
    rows = list(s)
    assert s.routed and s.columns == ("L", "k_e", "V", "parameters", "active")
    assert len(rows) == 3 * 2 and s.skipped() == {"N_e - k_e + 1": 3}  # k_e above N_e is left out
    for n, k, vocab, count, active in rows:
        point = model(name, L=n, k_e=k, V=vocab)
        assert (count, active) == (point.count, point.active) and active < count
    assert list(s.active_counts()) == [active for *_, active in rows]


def test_mixtral_active_column_is_the_hand_count():
    s = sweep(model("mixtral-8x7b"), L="16,32", k_e="1,2")
    assert list(s) == [(n, k, mixtral(n), mixtral(n, experts=k)) for n in (16, 32) for k in (1, 2)]
    assert list(s)[-1][-2:] == (46_571_720_704, 12_748_853_248)  # the base model of Mixtral-8x7B


def test_active_counts_beyond_int64_are_python_integers():
    s = sweep(model("mixtral-8x7b"), H=str(2**31), k_e="1,2")
    assert s.dtype == "object" and s.active_bound > INT64_MAX
    assert list(s) == [(2**31, k, mixtral(32, H=2**31), mixtral(32, experts=k, H=2**31)) for k in (1, 2)]


def test_a_model_without_routed_experts_has_no_active_column():
    s = sweep(model("bert-base"), L="12,24")
    assert not s.routed and s.columns == ("L", "parameters") and s.active_bound is None
    assert all(len(row) == 2 for row in s)
    with pytest.raises(SymparamsError, match="bert-base has no routed experts"):
        s.active_counts()


@pytest.mark.parametrize("spec,needle", [("1:0:1", "H=1:0:1: the stop: H must be a positive whole number, not '0'"),
                                         ("0:4:1", "H=0:4:1: the start: H must be"),
                                         ("1:x", "H=1:x: the stop:")])
def test_a_bad_end_of_a_range_is_named_start_or_stop(spec, needle):
    with pytest.raises(SymparamsError) as caught:
        parse_axis("H", spec)
    assert needle in str(caught.value)
