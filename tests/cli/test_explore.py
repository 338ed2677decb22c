"""``symparams solve`` and ``symparams sweep`` as commands (symparams.cli.explore): output, options, errors.

Every count expected here is written out by hand (tests/reference/counts.py);
the solving and the sweeping themselves are tested in tests/analysis/.
"""

import csv
import doctest
import json
import re
import shlex
import subprocess
import sys
from fractions import Fraction

import pytest

from tests.reference import ROOT
from tests.reference.cli_runner import command
from tests.reference.counts import bert, mixtral, nearest


def run(*args, prelude=""):
    """``symparams ARGS`` as a process forked from one that imported the package (see
    :mod:`tests.reference.cli_runner`), or, with a ``prelude`` to run first (e.g. to hide numpy), in a new
    interpreter."""
    if not prelude:
        return command(*args)
    code = f"{prelude}import sys; from symparams.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


# -- solve ----------------------------------------------------------------------------

def test_solve_prints_the_answer_and_its_neighbours():
    code, out, err = run("solve", "bert-base", "--set", "L=24", "--set", "A=16", "--target", "1e9", "--for", "H")
    assert code == 0 and err == ""
    assert "H = 1808 gives 1,001,384,304 parameters" in out
    assert "1792" in out and "1824" in out and "nearest" in out


def test_solve_json():
    code, out, _ = run("solve", "bert-base", "--set", "L=24", "--set", "A=16", "--target", "1_000_000_000",
                       "--for", "H", "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["symbol"], data["value"], data["count"], data["target"]) == ("H", 1808, 1_001_384_304, 10**9)
    assert data["below"] == {"value": 1792, "count": bert(1792, 24, 16), "difference": bert(1792, 24, 16) - 10**9}
    assert data["above"]["value"] == 1824 and data["step"] == 16
    assert data["values"] == {"V": 30522, "P": 512, "S": 2, "L": 24, "A": 16, "r": 4}


@pytest.mark.parametrize("args, message", [
    (("--target", "0", "--for", "H"), "target must be a positive whole number"),
    (("--target", "-5", "--for", "H"), "target must be a positive whole number"),
    (("--target", "1.5", "--for", "H"), "whole number of parameters"),
    (("--target", "lots", "--for", "H"), "whole number of parameters"),
    (("--target", "1e9", "--for", "Q"), "unknown symbol 'Q'"),
    (("--target", "1e9", "--for", "pooler"), "pooler is a switch of bert"),
    (("--target", "1e9", "--for", "G"), "symbol G is not used by bert-base"),
    (("--target", "1e9", "--for", "H", "--set", "H=1024"), "H is what --for solves"),
])
def test_solve_bad_input_is_one_line_and_exit_2(args, message):
    code, out, err = run("solve", "bert-base", *args)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_solve_other_symbols_need_values():
    code, _, err = run("solve", "bert", "--set", "V=30522", "--target", "1e9", "--for", "H")
    assert code == 2 and "no value for P, S, L, A, r" in err and err.count("\n") == 1


def test_the_presets_value_of_the_solved_symbol_does_not_get_in_the_way():
    # bert-base has H = 768, which 20 heads do not divide; solving for H drops that value
    code, out, err = run("solve", "bert-base", "--set", "A=20", "--target", "1e9", "--for", "H", "--json")
    best = nearest(range(20, 3000, 20), lambda h: bert(h, 12, 20), 10**9)
    assert code == 0 and err == ""
    assert (json.loads(out)["value"], json.loads(out)["count"]) == (best, bert(best, 12, 20))


def test_docs_explore_example_is_what_the_program_prints():
    doc = ROOT / "docs" / "explore.md"
    [block] = re.findall(r"```console\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
    command, *expected = block.rstrip("\n").splitlines()
    code, out, _ = run(*shlex.split(command[2:])[1:])
    assert code == 0 and out.rstrip("\n").splitlines() == expected
    assert doctest.testfile(str(doc), module_relative=False).failed == 0


# -- sweep ----------------------------------------------------------------------------

def test_sweep_table_csv_and_json(tmp_path):
    code, out, err = run("sweep", "bert-base", "--grid", "H=768:1024:128", "--grid", "L=12,24")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["H", "L", "parameters"]
    assert lines[1].split() == ["768", "12", f"{bert(768, 12):,}"]
    assert lines[2].split() == ["768", "24", f"{bert(768, 24):,}"]
    # H = 832, 896, 960, 1024 are not multiples of A = 12: the table's last line says so
    assert lines[-1] == ("2 of 6 points; left out 4 points where H/A is not a positive whole number "
                         "(with --head-width D, A follows H)") and err == ""

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


def test_sweep_of_a_mixture_of_experts_adds_the_active_count(tmp_path):
    grid = ("--grid", "L=16,32", "--grid", "k_e=2,9")  # k_e = 9 is more than the N_e = 8 experts: left out
    expected = [(n, 2, mixtral(n), mixtral(n, experts=2)) for n in (16, 32)]
    code, out, err = run("sweep", "mixtral-8x7b", *grid)
    lines = out.splitlines()
    assert code == 0 and err == "" and len({len(line) for line in lines[:-1]}) == 1, out
    assert lines[0].split() == ["L", "k_e", "parameters", "active"]
    assert [line.split() for line in lines[1:3]] == [[str(n), str(k), f"{c:,}", f"{a:,}"] for n, k, c, a in expected]
    assert lines[3] == "2 of 4 points; left out 2 points where N_e - k_e + 1 is not a positive whole number"

    path = tmp_path / "moe.csv"
    code, out, _ = run("sweep", "mixtral-8x7b", *grid, "--csv", str(path))
    assert code == 0 and f"wrote 2 rows to {path}" in out
    assert list(csv.reader(path.open())) == [["L", "k_e", "parameters", "active"],
                                             *[list(map(str, row)) for row in expected]]

    code, out, _ = run("sweep", "mixtral-8x7b", *grid, "--json")
    data = json.loads(out)
    assert data["rows"] == [{"L": n, "k_e": k, "parameters": c, "active": a} for n, k, c, a in expected]
    assert data["skipped"] == {"N_e - k_e + 1": 2} and data["dtype"] == "int64"


def test_sweep_of_a_mixture_of_experts_plots_one_line_per_value_of_the_second_key(tmp_path):
    path = tmp_path / "moe.svg"
    code, out, _ = run("sweep", "mixtral-8x7b", "--grid", "L=8:32:8", "--grid", "k_e=1,2", "--plot", str(path))
    assert code == 0 and f"drew 8 points into {path}" in out
    svg = path.read_text()
    assert svg.count("<!-- k_e = 1 -->") == svg.count("<!-- k_e = 2 -->") == 1  # the active count is no key


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
def test_sweep_bad_input_is_one_line_and_exit_2(args, message):
    code, out, err = run("sweep", "bert-base", *args)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_sweep_columns_of_ratios_align():
    code, out, err = run("sweep", "bert-base", "--grid", "r=3:4:1/4", "--grid", "L=1,12")
    lines = out.splitlines()
    assert code == 0 and len({len(line) for line in lines}) == 1, out
    assert lines[3] == "13/4   1   30,630,336"


def test_sweep_head_width_keeps_every_point_and_says_so_in_json():
    code, out, err = run("sweep", "bert-base", "--grid", "H=256:4096:256", "--grid", "L=6,12,24", "--head-width", "64")
    assert code == 0 and err == "" and len(out.splitlines()) == 1 + 48
    code, out, err = run("sweep", "bert-base", "--grid", "H=512:1024:512", "--head-width", "64", "--json")
    data = json.loads(out)
    assert data["head_width"] == 64 and "A" not in data["values"]
    assert [row["parameters"] for row in data["rows"]] == [bert(512, 12, A=8), bert(1024, 12, A=16)]
