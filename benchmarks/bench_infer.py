"""Inference of a few model types, each against one meta-device build of its default configs.

Inferring a type (every class the generator infers, 10 verification configurations, in one process with torch
and transformers imported once) is compared with one meta-device build of the same type's default configs (what
a peer that builds the model pays per configuration); the median and the maximum over the types are reported,
without a limit: they follow the machine's load too closely for one.  The cold ``count --config`` of an
inferred type is measured by bench_cli.py, beside the other cold commands.

    python benchmarks/bench_infer.py [--types gpt2,llama,olmo]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TYPES = "gpt2,llama,olmo,bert,t5"


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
    ap.add_argument("--types", default=TYPES, help="comma-separated model types to infer")
    args = ap.parse_args()
    times = inference(args.types.split(","))
    for model_type, (inferring, build) in times.items():
        print(f"infer {model_type}: {inferring:.1f} s, {inferring / build:.0f} × one build of its default config "
              f"({build * 1000:.0f} ms)")
    spent = [t for t, _ in times.values()]
    print(f"inferring one type: median {statistics.median(spent):.1f} s, max {max(spent):.1f} s over {len(spent)} "
          f"types (reported, no limit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
