"""Plant wrong terms where the numbers users see come from, and count how many the suite notices.

Each planted error goes into a copy of the repository, and the tests that could
notice it run there (stopping at the first failure):

* ``data``: in the shipped inferred formulas (``families/data/inferred.json``),
  one parameter of an exact entry counted once more (its instance count plus
  one), for types no hand-written family reads: what ``count --config`` of
  those types prints comes from nowhere else.  The type's case of
  tests/families/test_shipped_builds.py (a live build) must fail, naming it.
* ``family``: in a hand-written family module, one size a block is built with
  written one larger (``linear("dense", H, inter)`` → ``inter + 1``), as a
  slip in a formula would be.

A planted error is *caught* when the run fails.  Slow (a test run per planted
error), so not in CI; ``mutmut`` on the core modules is the other half of the
measure (docs/development.md).

    python benchmarks/plant_wrong_terms.py [--data olmo,granite,mamba] [--families bert,gpt2] [--per-family 4]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("symparams/families/data/inferred.json")
COPIED = ("symparams", "tests", "templates", "docs", "scripts", "pyproject.toml", "README.md")
#: the test that compares each type's shipped formulas with a live build, one case per type
SHIPPED_TEST = ("tests/families/test_shipped_builds.py::"
                "test_every_exact_class_counts_each_tensor_as_transformers_builds_it")


def copy_of_repository(into: Path) -> Path:
    """The files the tests read, copied (node packages linked, not copied)."""
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
        else:
            shutil.copy2(source, into / name)
    modules = ROOT / "tests" / "js" / "node_modules"
    if modules.exists():
        (into / "tests" / "js" / "node_modules").symlink_to(modules)
    return into


def run_tests(copy: Path, tests: list[str], select: str | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests]
    if select:
        argv += ["-k", select]
    environ = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run(argv, cwd=copy, env=environ, capture_output=True, text=True)


def plant_in_data(copy: Path, model_type: str) -> str:
    """One more instance of the first parameter of ``model_type``'s first exact entry; what was planted."""
    path = copy / DATA
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        if f'"model_type":{json.dumps(model_type)},' not in line:
            continue
        entry = json.loads(line.rstrip(","))
        if not entry["exact"]:
            continue
        name, count, *_ = entry["parameters"][0]
        entry["parameters"][0][1] = [["1", [], []], *_terms(count)]
        lines[i] = json.dumps(entry, separators=(",", ":")) + ("," if line.rstrip().endswith(",") else "")
        path.write_text("\n".join(lines))
        return f"{model_type} {entry['class']}: {name} counted once more"
    raise SystemExit(f"no exact entry of {model_type} in the data")


def _terms(count) -> list:
    """A count as the data's list of terms (a whole number or a symbol's name as one term)."""
    if isinstance(count, int):
        return [[str(count), [], []]]
    if isinstance(count, str):
        return [["1", [[count, 1]], []]]
    return list(count)


def sizes_in_build(source: str) -> list[ast.expr]:
    """The sizes a family module passes to the blocks it builds its tree of (``linear("dense", H, inter)``'s
    ``H`` and ``inter``): every argument of a call that is not a string, a flag or a keyword."""
    return [arg for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id in BUILDERS
            for arg in node.args if not (isinstance(arg, ast.Constant) and not isinstance(arg.value, int))]


#: the functions of symparams.core.blocks a family builds its parameters with
BUILDERS = {"linear", "embedding", "layer_norm", "rms_norm", "per_head_linear", "parameter", "tensor"}


def plant_in_family(copy: Path, family: str, size: ast.expr) -> str:
    """``size`` written one larger in ``family``'s module; what was planted."""
    path = copy / "symparams" / "families" / f"{family}.py"
    lines = path.read_text().split("\n")
    line = lines[size.lineno - 1]
    if size.end_lineno != size.lineno:
        raise ValueError("a size written over several lines")
    written = line[size.col_offset:size.end_col_offset]
    lines[size.lineno - 1] = line[:size.col_offset] + f"({written} + 1)" + line[size.end_col_offset:]
    path.write_text("\n".join(lines))
    return f"{family}.py:{size.lineno}:{size.col_offset + 1}: {written} → {written} + 1 in {line.strip()}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="olmo,granite,mamba", help="model types no family reads")
    ap.add_argument("--families", default="bert,gpt2,llama,t5", help="family modules to plant in")
    ap.add_argument("--per-family", type=int, default=4, help="planted sizes per family module")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    caught, planted, missed = 0, 0, []
    for model_type in filter(None, args.data.split(",")):
        with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
            copy = copy_of_repository(Path(tmp))
            what = plant_in_data(copy, model_type)
            result = run_tests(copy, [f"{SHIPPED_TEST}[{model_type}]"])
            failed, named = result.returncode != 0, f"[{model_type}]" in result.stdout
            print(f"data   {what}: {'caught' if failed else 'MISSED'}{', the failure names it' if named else ''}")
            planted, caught = planted + 1, caught + failed
            missed += [] if failed else [what]
    rng = random.Random(args.seed)
    for family in filter(None, args.families.split(",")):
        source = (ROOT / "symparams" / "families" / f"{family}.py").read_text()
        sizes = [s for s in sizes_in_build(source) if s.end_lineno == s.lineno]
        for size in rng.sample(sizes, min(args.per_family, len(sizes))):
            with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
                copy = copy_of_repository(Path(tmp))
                what = plant_in_family(copy, family, size)
                result = run_tests(copy, ["tests/families", "tests/core"], select=family.replace("_", "-"))
                failed = result.returncode != 0
                print(f"family {what}: {'caught' if failed else 'MISSED'}")
                planted, caught = planted + 1, caught + failed
                missed += [] if failed else [what]
    print(f"caught {caught} of {planted} planted wrong terms")
    for what in missed:
        print(f"  missed: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
