"""Sweep speed and memory, side by side with transformers in the same run.

1. Rate: a BERT sweep over about 10^7 configurations (H × L × A × V),
   evaluated chunk by chunk; configurations per second.
2. Speed-up: a sample of the same configurations built with transformers'
   ``BertModel`` on PyTorch's meta device and counted
   (``sum(p.numel() for p in model.parameters())``), against the sweep's time
   per configuration.  The sample's counts are checked against the sweep's.
3. Memory: peak resident memory (``ru_maxrss``) of a fresh process that
   sweeps 10^7 points, through the API and through the command line writing
   CSV.

    python benchmarks/bench_sweep.py [--sample 8] [--check]

``--check`` exits 1 unless: rate ≥ 10^6 configurations/s, speed-up ≥ 10^5,
peak memory < 1 GiB.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("symparams") is None:  # run from a checkout: use it, here and in the subprocesses
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

#: 125 · 100 · 8 · 100 = 10^7 configurations (A = 128 divides only half the H: those are left out)
GRID_10M = {"H": "64:8000:64", "L": "1:100", "A": "1,2,4,8,16,32,64,128", "V": "30423:30522"}

MEMORY_SCRIPT = """
import resource, sys
from symparams import model, sweep
grid = {grid!r}
s = sweep(model("bert-base"), **grid)
n = 0
top = 0
for chunk in s.chunks():
    n += len(chunk)
    if len(chunk):
        top = max(top, int(chunk.counts.max()))
print(len(s), n, top, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

BASELINE_SCRIPT = """
import resource
import numpy, symparams
symparams.model("bert-base")
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

CLI_SCRIPT = """
import resource, runpy, sys
sys.argv = ["symparams", "sweep", "bert-base", *{grid_args!r}, "--csv", {path!r}]
try:
    runpy.run_module("symparams", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def sweep_rate(grid) -> tuple[int, int, float, float]:
    from symparams import model, sweep

    start = time.perf_counter()
    s = sweep(model("bert-base"), **grid)
    prepared = time.perf_counter()
    n = 0
    for chunk in s.chunks():
        n += len(chunk)
    done = time.perf_counter()
    return len(s), n, prepared - start, done - prepared


def transformers_sample(grid, k: int, seed: int = 0):
    """(configurations, seconds per configuration, their counts) built with transformers on the meta device."""
    import torch
    import transformers

    from symparams.analysis.sweep import parse_axis

    transformers.logging.set_verbosity_error()
    rng = random.Random(seed)
    axes = {key: parse_axis(key, spec).values() for key, spec in grid.items()}
    configs = []
    while len(configs) < k:
        point = {key: rng.choice(values) for key, values in axes.items()}
        if point["H"] % point["A"] == 0:
            configs.append(point)
    counts = []
    start = time.perf_counter()
    for p in configs:
        config = transformers.BertConfig(vocab_size=p["V"], hidden_size=p["H"], num_hidden_layers=p["L"],
                                         num_attention_heads=p["A"], intermediate_size=4 * p["H"])
        with torch.device("meta"):
            module = transformers.BertModel(config)
        counts.append(sum(t.numel() for t in module.parameters()))
    elapsed = time.perf_counter() - start
    return configs, elapsed / k, counts


def peak_memory(script: str) -> str:
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return proc.stdout.split()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=8, help="configurations built with transformers")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--skip-cli", action="store_true", help="skip the 10^7-row CSV run")
    args = ap.parse_args()

    # Memory first, while this process is small: Linux carries ru_maxrss over fork and exec, so a
    # child of a process that has loaded torch would report torch's memory as its own.
    total, seen, top, rss = peak_memory(MEMORY_SCRIPT.format(grid=GRID_10M))
    api_mib = int(rss) / 1024
    cli_mib = None
    if not args.skip_cli:
        grid_args = [a for key, spec in GRID_10M.items() for a in ("--grid", f"{key}={spec}")]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sweep.csv")
            start = time.perf_counter()
            [rss] = peak_memory(CLI_SCRIPT.format(grid_args=grid_args, path=path))[-1:]
            seconds = time.perf_counter() - start
            size = os.path.getsize(path)
        cli_mib = int(rss) / 1024
    [baseline] = peak_memory(BASELINE_SCRIPT)

    from symparams import model

    points, kept, prep, elapsed = sweep_rate(GRID_10M)
    rate = points / elapsed
    per_config = elapsed / points
    print(f"sweep: {points:,} BERT configurations ({kept:,} admissible) in {elapsed:.3f} s "
          f"(+ {prep:.3f} s to prepare): {rate:,.0f} configurations/s")

    configs, hf_per_config, hf_counts = transformers_sample(GRID_10M, args.sample)
    ours = [model("bert-base", H=p["H"], L=p["L"], A=p["A"], V=p["V"]).count for p in configs]
    assert ours == hf_counts, (ours, hf_counts)
    speedup = hf_per_config / per_config
    print(f"transformers (meta device): {hf_per_config * 1e3:.1f} ms per configuration over {args.sample} "
          f"configurations (counts identical to symparams')")
    print(f"speed-up per configuration: {speedup:,.0f}x")

    print(f"peak memory, {int(total):,}-point sweep through the API: {api_mib:,.0f} MiB (largest count {int(top):,}; "
          f"importing symparams and numpy alone: {int(baseline) / 1024:,.0f} MiB)")
    if cli_mib is not None:
        print(f"peak memory, the same sweep written as CSV by the command line: {cli_mib:,.0f} MiB "
              f"({size / 2**20:,.0f} MiB of CSV in {seconds:.1f} s)")

    print(json.dumps({"rate": round(rate), "speedup": round(speedup), "api_peak_mib": round(api_mib),
                      "cli_peak_mib": None if cli_mib is None else round(cli_mib)}))
    if args.check:
        ok = rate >= 1e6 and speedup >= 1e5 and api_mib < 1024 and (cli_mib is None or cli_mib < 1024)
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
