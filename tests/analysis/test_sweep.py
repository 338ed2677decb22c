"""symparams sweep: exact counts over grids, int64 only where provably safe, bounded chunks."""

import csv
import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from symparams import SymparamsError, model, sweep
from symparams.explore import INT64_MAX, parse_axis


def bert(H, L, A=12, V=30522, P=512, S=2, r=Fraction(4)):
    """BERT's count by hand, exact (Python integers)."""
    layer = 4 * (H * H + H) + 4 * H + 2 * (r * H) * H + r * H + H
    return int((V + P + S) * H + 2 * H + L * layer + H * H + H)


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


def test_cli_table_csv_and_json(tmp_path):
    code, out, err = run("sweep", "bert-base", "--grid", "H=768:1024:128", "--grid", "L=12,24")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["H", "L", "parameters"]
    assert lines[1].split() == ["768", "12", f"{bert(768, 12):,}"]
    assert lines[2].split() == ["768", "24", f"{bert(768, 24):,}"]
    assert "left out 4 points where H/A is not a positive whole number" in err

    path = tmp_path / "out.csv"
    code, out, _ = run("sweep", "bert-base", "--grid", "H=768:1024:128", "--grid", "L=12,24", "--csv", str(path))
    assert code == 0 and f"wrote 2 rows to {path}" in out
    rows = list(csv.reader(path.open()))
    assert rows == [["H", "L", "parameters"], ["768", "12", str(bert(768, 12))], ["768", "24", str(bert(768, 24))]]

    code, out, _ = run("sweep", "bert-base", "--grid", "r=3:4:1/2", "--grid", "H=768", "--json")
    data = json.loads(out)
    assert data["rows"] == [{"r": str(q) if Fraction(q).denominator > 1 else int(q), "H": 768,
                             "parameters": bert(768, 12, r=Fraction(q))} for q in (3, Fraction(7, 2), 4)]
    assert data["grid"]["r"] == {"start": 3, "stop": 4, "step": "1/2", "count": 3}
    assert data["skipped"] == {} and data["dtype"] == "int64"


def test_preset_value_of_a_grid_key_does_not_get_in_the_way():
    code, out, _ = run("sweep", "bert-base", "--set", "A=20", "--grid", "H=20,40", "--json")
    assert code == 0
    assert [r["parameters"] for r in json.loads(out)["rows"]] == [bert(20, 12, 20), bert(40, 12, 20)]


def test_plot_draws_an_svg(tmp_path):
    path = tmp_path / "plot.svg"
    code, out, _ = run("sweep", "bert-base", "--set", "A=16", "--grid", "H=256:1024:128", "--grid", "L=6,12,24",
                       "--plot", str(path))
    assert code == 0 and f"drew 21 points into {path}" in out
    svg = path.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "L = 6" in svg and "L = 24" in svg  # one line (legend entry) per value of the second key


def test_plot_without_matplotlib_is_one_line(tmp_path):
    code, out, err = run("sweep", "bert-base", "--grid", "H=768", "--plot", str(tmp_path / "p.svg"),
                         prelude="import sys; sys.modules['matplotlib'] = None; ")
    assert code == 2 and "--plot needs matplotlib" in err and err.count("\n") == 1


def test_without_numpy_the_pure_python_path_gives_the_same_answer():
    args = ("sweep", "bert-base", "--grid", "H=384:1152:192", "--grid", "r=3,43/16", "--json")
    code, with_numpy, _ = run(*args)
    code2, without, err = run(*args, prelude="import sys; sys.modules['numpy'] = None; ")
    assert code == code2 == 0, err
    a, b = json.loads(with_numpy), json.loads(without)
    assert b["dtype"] == "python" and a["dtype"] == "int64"
    assert a["rows"] == b["rows"] and a["skipped"] == b["skipped"]


@pytest.mark.parametrize("args, message", [
    (("--grid", "Q=1:4"), "unknown symbol 'Q'"),
    (("--grid", "G=1:4"), "symbol G is not used by bert-base"),
    (("--grid", "pooler=1,0"), "pooler is a switch of bert"),
    (("--grid", "H=1:4:2:8"), "a range is start:stop:step"),
    (("--grid", "H=a:4"), "H must be a positive whole number"),
    (("--grid", "H=1:4:0"), "the step must be positive"),
    (("--grid", "H=1:4:x"), "the step must be a positive whole number"),
    (("--grid", "H=12,,24"), "a list is a,b,c with no empty item"),
    (("--grid", "H=0:24"), "H must be a positive whole number"),
    (("--grid", "H"), "--grid takes KEY=SPEC"),
    (("--grid", "H=24:12"), "an empty grid: H has no values"),
    ((), "an empty grid"),
    (("--grid", "H=1:100000", "--grid", "L=1:100000"), "10,000,000,000 points, over 10^9; pass --force"),
    (("--grid", "H=768", "--set", "H=1024"), "H given both by --set and by --grid"),
    (("--grid", "H=768", "--grid", "H=1024"), "--grid H is given twice"),
    (("--grid", "H=768", "--plot", "x.png"), "give a path ending in .svg"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    code, out, err = run("sweep", "bert-base", *args)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


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
    code, _, err = run("sweep", "electra-small", "--grid", "H=128,256", "--grid", "E=128")
    assert "left out 1 points where E != H does not hold" in err
