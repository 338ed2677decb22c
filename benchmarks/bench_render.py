"""Rendering every document in one process, against rendering one document.

Each round starts two fresh processes side by side (so machine load hits
both alike): one renders a single document (bert-base, Markdown, English),
the other every preset × {md, tex} × {en, zh}, as ``python -m symparams.documents.regenerate``
does.  Medians of wall-clock and CPU time are compared.

    python benchmarks/bench_render.py [--rounds 7] [--check] [--base REV]

``--check`` exits 1 when a further document costs more than 2 % of a first
one (wall clock: (all − one) / (documents − 1) against one): rendering
scales with the number of presets, and each one after the first must stay
cheap (the model trees, proofs and templates are built once and shared).  ``--base REV`` also renders every document with
revision REV of this repository (exported with ``git archive``), side by
side, and prints how long this checkout takes against it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from revision import ROOT, export

ONE = """
from symparams import model
from symparams.documents.render import render
render(model("bert-base"), format="md", lang="en")
"""

ALL = """
try:
    from symparams.documents.regenerate import documents
except ModuleNotFoundError:  # a revision before the package had layers
    from symparams.docs import documents
n = len(documents())
print(n)
"""


def timed(code: str, root: Path = ROOT) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of a fresh ``python -c code`` importing symparams from ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--base", help="also time every document at this revision, side by side")
    args = ap.parse_args()
    if args.base:
        with tempfile.TemporaryDirectory() as tmp:
            export(args.base, Path(tmp))
            against_base(Path(tmp), args.base, args.rounds)
    timed(ONE), timed(ALL)  # warm the file cache
    one, every = [], []
    count = ""
    for _ in range(args.rounds):
        one.append(timed(ONE))
        w, c, count = timed(ALL)
        every.append((w, c, count))
    one_wall = statistics.median(w for w, _, _ in one)
    one_cpu = statistics.median(c for _, c, _ in one)
    all_wall = statistics.median(w for w, _, _ in every)
    all_cpu = statistics.median(c for _, c, _ in every)
    print(f"one document (bert-base, md, en):   median wall {one_wall:.3f} s, CPU {one_cpu:.3f} s")
    print(f"all {count} documents in one process: median wall {all_wall:.3f} s, CPU {all_cpu:.3f} s")
    further = (all_wall - one_wall) / max(int(count) - 1, 1)
    print(f"ratio all/one: wall {all_wall / one_wall:.2f}x, CPU {all_cpu / one_cpu:.2f}x; each further document "
          f"{further * 1000:.1f} ms, {further / one_wall:.1%} of the first (limit 2%); {args.rounds} rounds")
    ok = further <= 0.02 * one_wall
    if args.check and not ok:
        print("FAIL: over the limit")
        return 1
    return 0


def against_base(base: Path, rev: str, rounds: int) -> None:
    """Every document rendered by the checkout and by revision ``rev`` (exported at ``base``), alternately."""
    timed(ALL, base), timed(ALL)
    before, after = [], []
    for _ in range(rounds):
        before.append(timed(ALL, base)[0])
        after.append(timed(ALL)[0])
    old, new = statistics.median(before), statistics.median(after)
    print(f"all documents at {rev}: median wall {old:.3f} s; this checkout: {new:.3f} s; "
          f"ratio {new / old:.2f}x; {rounds} rounds")


if __name__ == "__main__":
    sys.exit(main())
