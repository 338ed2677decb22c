"""A quantized checkpoint's bytes of every preset in one process, beside the plain count.

For each preset, its count (the closed form evaluated) and then, timed apart, the
bytes of its GGUF q4_k file (``memory --dtype q4_k --optimizer none``): every
stored tensor's shape read off the tree, a row's fallback chosen, the
formula evaluated.  The ratio is the q4_k pass over the count pass.

    python benchmarks/bench_quantized.py [--check]

``--check`` exits 1 when the q4_k bytes take more than :data:`LIMIT` times the counts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout, installed or not

#: the q4_k pass may take this many times the count pass
LIMIT = 5


def timed(figure) -> tuple[int, float]:
    """``figure(model)`` of every preset, each model built anew: (presets, seconds)."""
    from symparams import model
    from symparams.families.presets import all_presets

    names = list(all_presets())
    start = time.perf_counter()
    for name in names:
        assert figure(model(name)) > 0
    return len(names), time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    import symparams  # noqa: F401  the import is not timed

    presets, counted = timed(lambda m: m.count)
    _, quantized = timed(lambda m: m.memory("q4_k", optimizer="none").weights)
    print(f"count of {presets} presets: {counted:.3f} s ({counted / presets * 1000:.1f} ms each)")
    print(f"q4_k GGUF bytes of {presets} presets: {quantized:.3f} s ({quantized / presets * 1000:.1f} ms each)")
    ratio = quantized / counted
    print(f"ratio, q4_k / count: {ratio:.1f}× {'ok' if ratio <= LIMIT else f'OVER {LIMIT}×'}")
    return 1 if (args.check and ratio > LIMIT) else 0


if __name__ == "__main__":
    sys.exit(main())
