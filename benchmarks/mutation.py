"""Mutation score of the suite: mutmut on the core, families and analysis modules, within a time budget.

mutmut 3 copies the source folder into ``mutants/`` beside the configuration it reads
(``pyproject.toml``'s ``[tool.mutmut]`` in the current directory), puts every mutant of a
function behind a trampoline, runs the tests once to learn which tests reach which function,
then runs, for each mutant, only those tests, with the mutant switched on.  Run in the checkout
itself, that goes wrong twice: the package is installed in editable mode, so a test run started
without ``mutants/`` first on the path imports the checkout and every mutant "survives"; and the
package's ``templates`` folder is a link, which mutmut's copy does not follow.  So this script
runs mutmut in a scratch copy of the repository (links followed, nothing of the checkout
touched), with a configuration of its own written there: one group of modules at a time, the
fast tests that concern them, one child process, and a time budget after which it stops.  The
results each mutant left in ``mutants/**/*.meta`` are then counted per module, and the surviving
mutants listed with their diffs (``mutmut show``).

    nice -n 19 python benchmarks/mutation.py core --minutes 30 [--keep /tmp/mutation-core]

Slow (a test run per mutant), so not part of CI (docs/development.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plant_wrong_terms import ROOT, copy_of_repository  # noqa: E402

#: each group: the modules mutated and the tests that may kill their mutants (fast ones, no TeX, browser or node)
GROUPS = {
    "core": (["symparams/core/*"], ["tests/core", "tests/test_package.py", "tests/documents/test_walk.py",
                                    "tests/families/test_bert_transformer.py", "tests/families/test_decoders.py",
                                    "tests/families/test_tied_shapes.py"]),
    "families": ([f"symparams/families/{name}.py" for name in
                  ("bert", "gpt2", "llama", "t5", "transformer", "encoder_parts", "seq2seq_parts", "classic_parts")],
                 ["tests/families/test_bert_transformer.py", "tests/families/test_tied_shapes.py"]),
    "analysis": ([f"symparams/analysis/{name}.py" for name in ("flops", "memory", "cache", "dtypes")],
                 ["tests/analysis/test_flops.py", "tests/analysis/test_memory.py", "tests/analysis/test_cache.py"]),
}

#: mutmut's exit codes, as its ``stats.status_by_exit_code`` reads them (33: no selected test reaches the mutant)
KILLED, SURVIVED, NO_TESTS = {1, 3}, {0}, {33}


def configuration(mutate: list[str], tests: list[str]) -> str:
    """The ``[tool.mutmut]`` table for one group (TOML, appended to the copy's pyproject.toml)."""
    def strings(items):
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"
    return "\n".join([
        "", "[tool.mutmut]",
        'source_paths = ["symparams"]',
        f"only_mutate = {strings(mutate)}",
        'do_not_mutate = ["symparams/templates/*"]',
        f"also_copy = {strings(['templates', 'docs', 'README.md', 'scripts'])}",
        f"pytest_add_cli_args_test_selection = {strings(tests)}",
        # the package's own doctests are collected from tests' paths only; xdist and the cache stay off
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:xdist", "-m", "not tex and not browser and not node"]',
        "mutate_only_covered_lines = true",
        'process_isolation = "forkserver"',
        # the tests build models while they are collected (parametrize lists): collected before a mutant is on,
        # they would hold the unmutated trees, so each mutant's run collects its tests afresh
        'forkserver_warmup = "none"',
        # mutmut limits a mutant's CPU time by its tests' measured time, which leaves out collecting them
        # (importing transformers, building the models): a margin for it, or every run "times out"
        "timeout_constant = 60",
        "use_git_change_detection = false",
        "",
    ])


def run_mutmut(copy: Path, names: list[str], minutes: float) -> None:
    """``mutmut run [names]`` with one child, stopped (the whole process group) when the budget is spent."""
    mutmut = Path(sys.executable).with_name("mutmut")
    # mutmut puts mutants/ first on its own path; the path given here is for the processes the tests start
    # (the CLI runner), which would otherwise import the checkout through its editable install
    environ = {**os.environ, "PYTHONPATH": str(copy.resolve() / "mutants")}
    with open(copy / "mutmut.log", "a", encoding="utf-8") as log:
        process = subprocess.Popen([str(mutmut), "run", "--max-children", "1", *names], cwd=copy, env=environ,
                                   start_new_session=True, stdout=log, stderr=log)
        try:
            process.wait(timeout=minutes * 60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait()


def generate(copy: Path, minutes: float) -> None:
    """Mutants written and the tests' reach recorded, no mutant run: mutmut does both before it looks for the
    mutants it is asked for, and stops when none has the name asked."""
    run_mutmut(copy, ["no-such-mutant"], minutes)


def sample(found: dict[str, dict[str, int | None]], size: int, seed: int) -> list[str]:
    """``size`` mutants drawn at random from all of them (mutmut alone runs the fastest first, which would
    leave the mutants of the widely used functions out of a budgeted run)."""
    names = sorted(name for codes in found.values() for name in codes)
    return sorted(random.Random(seed).sample(names, min(size, len(names))))


def results(copy: Path) -> dict[str, dict[str, int | None]]:
    """Each mutated module's mutants and their exit codes (None: not run before the budget ran out)."""
    found = {}
    for meta in sorted((copy / "mutants" / "symparams").rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        if codes:
            found[str(meta.relative_to(copy / "mutants"))[:-len(".meta")]] = codes
    return found


def score_lines(found: dict[str, dict[str, int | None]]) -> list[str]:
    lines, total = [], Counter()
    for module, codes in found.items():
        tally = Counter(_status(c) for c in codes.values())
        total += tally
        lines.append(_score(module, tally))
    return [*lines, _score("all", total)]


def _status(code: int | None) -> str:
    if code is None:
        return "not run"
    return "killed" if code in KILLED else "survived" if code in SURVIVED else "no tests" if code in NO_TESTS \
        else "other"


def _score(name: str, tally: Counter) -> str:
    """The score: killed of the mutants run, a mutant no test reaches counted as surviving (timeouts and
    crashes, "other", left out)."""
    tried = tally["killed"] + tally["survived"] + tally["no tests"]
    share = f"{100 * tally['killed'] // tried}%" if tried else "-"
    return (f"{name:40} killed {tally['killed']:4} survived {tally['survived']:4} no tests {tally['no tests']:3} "
            f"other {tally['other']:3} not run {tally['not run']:4}  score {share}")


def survivors(copy: Path, found: dict[str, dict[str, int | None]]) -> list[str]:
    """``mutmut show`` of every surviving mutant: its name and diff."""
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    shown = []
    for codes in found.values():
        for name, code in codes.items():
            if code in SURVIVED | NO_TESTS:
                shown.append(subprocess.run([mutmut, "show", name], cwd=copy, capture_output=True, text=True).stdout)
    return shown


def recheck(copy: Path, names: list[str], tests: list[str]) -> dict[str, bool]:
    """Each survivor run against ``tests`` (any of the suite's, the command line's processes included) with the
    mutant switched on: killed or not."""
    mutants = copy.resolve() / "mutants"
    killed = {}
    for name in names:
        environ = {**os.environ, "PYTHONPATH": str(mutants), "MUTANT_UNDER_TEST": name}
        run = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                              *tests], cwd=mutants, env=environ, capture_output=True, text=True)
        killed[name] = run.returncode != 0
        print(f"{'killed  ' if killed[name] else 'survived'} {name}", flush=True)
    return killed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("group", choices=GROUPS)
    ap.add_argument("--minutes", type=float, default=30, help="time budget of the mutmut run")
    ap.add_argument("--sample", type=int, default=150, help="mutants drawn at random and run (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--recheck", nargs="+", metavar="TEST",
                    help="in a kept folder: run each survivor against these tests instead of running mutmut")
    ap.add_argument("--keep", type=Path, help="run in this folder and keep it (to look at mutants afterwards)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="mutation-"))
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "pyproject.toml").exists():
        copy_of_repository(work)
        mutate, tests = GROUPS[args.group]
        with open(work / "pyproject.toml", "a", encoding="utf-8") as f:
            f.write(configuration(mutate, tests))
    if args.recheck:
        found = results(work)
        recheck(work, [name for codes in found.values() for name, code in codes.items()
                       if code in SURVIVED | NO_TESTS], args.recheck)
        return 0
    start = time.monotonic()
    generate(work, args.minutes)
    if not results(work):  # mutmut's first coverage run in a fresh folder can fail; its second has not
        generate(work, args.minutes - (time.monotonic() - start) / 60)
    if args.sample and not results(work):
        raise SystemExit(f"no mutants written in {work} (mutmut.log there says why)")
    drawn = sample(results(work), args.sample, args.seed) if args.sample else []
    run_mutmut(work, drawn, args.minutes - (time.monotonic() - start) / 60)
    found = results(work)
    if drawn:
        chosen = set(drawn)
        found = {module: {name: code for name, code in codes.items() if name in chosen}
                 for module, codes in found.items()}
    print(f"{args.group}: {time.monotonic() - start:.0f} s in {work}")
    print("\n".join(score_lines(found)))
    for diff in survivors(work, found):
        print(diff)
    return 0


if __name__ == "__main__":
    sys.exit(main())
