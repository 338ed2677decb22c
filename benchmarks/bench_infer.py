"""Inference of one model type, and a cold ``count --config`` of an inferred type, each against a baseline.

Two measures, each beside a baseline measured in the same run:

* inferring a type (``symparams infer TYPE``, every class the generator infers, in one process with torch and
  transformers imported once): the median and the maximum over a few types, against one meta-device build of
  the same types' default configs (what a peer that builds the model pays per configuration);
* a cold ``python -m symparams count --config`` of a config.json whose type no hand-written family reads (the
  data file is read lazily), against ``python -c "import sympy"``, run side by side ``--rounds`` times; the
  medians are compared.  Limit (``--check``): 1.3 × the baseline.  The inference times are reported only:
  they follow the machine's load too closely for a limit.

    python benchmarks/bench_infer.py [--rounds 15] [--types gpt2,llama,olmo] [--check]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OLMO = ROOT / "tests" / "fixtures" / "allenai" / "OLMo-1B-hf.json"
LIMIT = 1.3
TYPES = "gpt2,llama,olmo,bert,t5"


def timed(argv) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def cold_count(rounds: int) -> tuple[float, float]:
    """Medians of a cold ``count --config`` of OLMo-1B and of ``import sympy``, side by side."""
    count = ["-m", "symparams", "count", "--config", str(OLMO)]
    baseline = ["-c", "import sympy"]
    timed(count), timed(baseline)  # warm the file cache
    ours, base = [], []
    for _ in range(rounds):
        base.append(timed(baseline))
        ours.append(timed(count))
    return statistics.median(ours), statistics.median(base)


def inference(types: list[str]) -> dict[str, tuple[float, float]]:
    """Each type → (seconds to infer its classes, seconds of one meta build of each class's default config)."""
    import torch
    import transformers

    from scripts.infer_formulas import text_types
    from symparams.analysis.inference import AUTO_CLASSES, infer

    classes = text_types()
    out = {}
    for model_type in types:
        start = time.perf_counter()
        for cls in classes[model_type]:
            infer(model_type, cls, verify_configurations=10)
        inferring = time.perf_counter() - start
        start = time.perf_counter()
        for cls in classes[model_type]:
            with torch.device("meta"):
                getattr(transformers, AUTO_CLASSES[cls]).from_config(transformers.AutoConfig.for_model(model_type))
        out[model_type] = (inferring, time.perf_counter() - start)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--types", default=TYPES, help="comma-separated model types to infer")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    ours, base = cold_count(args.rounds)
    ratio = ours / base
    ok = ratio <= LIMIT
    print(f"cold count --config OLMo-1B (inferred): median {ours * 1000:.0f} ms against import sympy "
          f"{base * 1000:.0f} ms, ratio {ratio:.3f} (limit {LIMIT}) {'ok' if ok else 'TOO SLOW'}")
    times = inference(args.types.split(","))
    for model_type, (inferring, build) in times.items():
        print(f"infer {model_type}: {inferring:.1f} s, {inferring / build:.0f} × one build of its default config "
              f"({build * 1000:.0f} ms)")
    spent = [t for t, _ in times.values()]
    print(f"inferring one type: median {statistics.median(spent):.1f} s, max {max(spent):.1f} s over {len(spent)} "
          f"types (reported, no limit)")
    return 1 if (args.check and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
