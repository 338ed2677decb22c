"""Proving every family in one process: the head-count proof of one representative each.

The representative is the family's first preset, else the first fixture
config.json of its ``model_type``, else the family itself (symbolic).  Each
proof builds its model and runs :func:`symparams.analysis.proof.prove` with values
(so the numeric witness or counterexample is computed too).  The import of
symparams and the proving are timed apart; the limit applies to both
together (2 s), and ``--check`` exits 1 above it.

    python benchmarks/bench_prove.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

LIMIT = 2.0
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
sys.path.insert(0, str(ROOT))  # the checkout, installed or not


def representatives():
    """(family name, what to load) for every family."""
    from symparams.families.presets import all_presets
    from symparams.families.registry import all_families

    presets = {}
    for p in all_presets().values():
        presets.setdefault(p.family, p.name)
    configs = {}
    for path in sorted(FIXTURES.rglob("config.json")):
        configs.setdefault(json.loads(path.read_text()).get("model_type"), str(path))
    out = []
    for fam in all_families().values():
        config = next((configs[t] for t in fam.config_types if t in configs), None)
        out.append((fam.name, presets.get(fam.name) or config or fam.name))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    start = time.perf_counter()
    from symparams import model  # noqa: E402  (timed apart)

    imported = time.perf_counter()
    todo = representatives()
    rows = []
    for fam, name in todo:
        t0 = time.perf_counter()
        proof = model(name).prove()
        rows.append((fam, name, proof.invariant, time.perf_counter() - t0))
    proving = time.perf_counter() - imported
    total = proving + (imported - start)
    width = max(len(f) for f, *_ in rows)
    for fam, name, invariant, seconds in rows:
        shown = Path(name).parent.name if name.endswith(".json") else name
        verdict = "invariant" if invariant else "depends on A"
        print(f"  {fam:<{width}}  {shown:<28} {verdict:<13} {seconds * 1000:7.1f} ms")
    ok = total < LIMIT
    print(f"import symparams: {imported - start:.3f} s; proving {len(rows)} families (models built, proofs, "
          f"witnesses, every family module imported): {proving:.3f} s")
    print(f"together: {total:.3f} s (limit {LIMIT} s) {'ok' if ok else 'TOO SLOW'}")
    return 1 if (args.check and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
