"""Count the tests' equality asserts whose two sides both come from symparams only.

Such an assert (``m.count == sum(m.components.values())``) holds the package to itself: it notices an
inconsistency, never a formula that is wrong everywhere.  A heuristic, per test function: a name is
*ours* when it is imported from ``symparams`` or assigned from an expression holding ours and nothing
from the outside (torch, transformers, peft, gguf, safetensors, the reference builders of
``tests/reference``); an assert ``a == b`` is counted when both sides hold ours and nothing else.  A
test's parameters are neither, so parametrized comparisons are not counted: the figure is a floor.

    python benchmarks/self_comparisons.py [-v]    # -v: each assert, file:line
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = ("torch", "transformers", "peft", "gguf", "safetensors", "numpy", "huggingface_hub", "json",
           "tests.reference.hf", "tests.reference.decoders", "tests.reference.llama_like", "tests.reference.moe",
           "tests.reference.inferred_builds", "tests.reference.tiny_checkpoint")


def imported_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names imported from symparams, names imported from the outside)."""
    ours, outside = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            pairs = [(node.module, a.asname or a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            pairs = [(a.name, (a.asname or a.name).split(".")[0]) for a in node.names]
        else:
            continue
        for module, name in pairs:
            if module.startswith("symparams"):
                ours.add(name)
            elif module.startswith(OUTSIDE):
                outside.add(name)
    return ours, outside


def source_of(expr: ast.AST, ours: set[str], outside: set[str]) -> str:
    names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    return "outside" if names & outside else "ours" if names & ours else "other"


def tainted(function: ast.FunctionDef, ours: set[str], outside: set[str]) -> tuple[set[str], set[str]]:
    """The names of ``function`` that hold our values and the outside's (two passes: a name assigned later
    in the body may feed an earlier loop's)."""
    ours, outside = set(ours), set(outside)
    for _ in range(2):
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                value, targets = node.value, node.targets
            elif isinstance(node, ast.For):
                value, targets = node.iter, [node.target]
            else:
                continue
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            source = source_of(value, ours, outside)
            if source != "other":
                (outside if source == "outside" else ours).update(names)
    return ours, outside


def self_comparisons(path: Path) -> tuple[int, list[ast.Assert]]:
    """(equality asserts in the tests of ``path``, those comparing ours with ours)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    ours, outside = imported_names(tree)
    total, found = 0, []
    for function in ast.walk(tree):
        if not (isinstance(function, ast.FunctionDef) and function.name.startswith("test")):
            continue
        mine, theirs = tainted(function, ours, outside)
        for node in ast.walk(function):
            test = getattr(node, "test", None) if isinstance(node, ast.Assert) else None
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                total += 1
                if all(source_of(side, mine, theirs) == "ours" for side in (test.left, test.comparators[0])):
                    found.append(node)
    return total, found


def main() -> int:
    verbose = "-v" in sys.argv
    total, per_file = 0, Counter()
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        asserts, found = self_comparisons(path)
        total += asserts
        per_file[str(path.relative_to(ROOT))] = len(found)
        for node in found if verbose else ():
            print(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node.test)[:100]}")
    print(f"{sum(per_file.values())} of {total} equality asserts compare the package with itself")
    for name, count in per_file.most_common():
        if count:
            print(f"{count:5} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
