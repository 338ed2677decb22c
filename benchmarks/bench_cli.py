"""Cold-process speed of the command line, as a ratio to ``import sympy``.

Each round runs the baseline (``python -c "import sympy"``) and each
command side by side, so machine load affects both alike; the medians are
compared.  ``--check`` exits 1 when a ratio exceeds its limit.

    python benchmarks/bench_cli.py [--rounds 15] [--check]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"

#: name → (argv after ``python``, limit as a multiple of the baseline)
COMMANDS = {
    "count bert-base": (["-m", "symparams", "count", "bert-base"], 1.3),
    "count --config bert-base-uncased": (
        ["-m", "symparams", "count", "--config", str(FIXTURES / "bert-base-uncased" / "config.json")], 1.3),
    # a family of the later modules, by preset and by config: one family module is imported, not all of them
    "count llama-3-8b": (["-m", "symparams", "count", "llama-3-8b"], 1.3),
    "count --config Mixtral-8x7B": (
        ["-m", "symparams", "count", "--config", str(FIXTURES / "mistralai" / "Mixtral-8x7B-v0.1")], 1.3),
    # a type no hand-written family reads: the data file of inferred formulas is read, lazily
    "count --config OLMo-1B (inferred)": (
        ["-m", "symparams", "count", "--config", str(FIXTURES / "allenai" / "OLMo-1B-hf.json")], 1.3),
}


def timed(argv) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    baseline_argv = ["-c", "import sympy"]
    for argv, _ in COMMANDS.values():  # warm the file cache
        timed(argv)
    timed(baseline_argv)
    samples = {"baseline": []} | {name: [] for name in COMMANDS}
    for _ in range(args.rounds):
        samples["baseline"].append(timed(baseline_argv))
        for name, (argv, _) in COMMANDS.items():
            samples[name].append(timed(argv))
    where = subprocess.run([sys.executable, "-c", "import symparams; print(symparams.__file__)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    print(f"symparams imported from {where}")
    base = statistics.median(samples["baseline"])
    print(f"baseline python -c 'import sympy': median {base * 1000:.0f} ms over {args.rounds} rounds")
    failed = False
    for name, (_, limit) in COMMANDS.items():
        med = statistics.median(samples[name])
        ratio = med / base
        ok = ratio <= limit
        failed |= not ok
        print(f"symparams {name}: median {med * 1000:.0f} ms, ratio {ratio:.3f} (limit {limit}) "
              f"{'ok' if ok else 'TOO SLOW'}")
    return 1 if (failed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
