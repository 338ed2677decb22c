"""The package's layers import only downward, and no modules import each other in a cycle.

core ← families ← analysis ← documents ← cli: a module imports its own
layer or lower ones, at the top of the file or inside a function alike.  The
exceptions are the documented call-time hooks in the style of SymPy's
``Printable._repr_latex_``: the Model's analysis methods (``prove``,
``flops``, ...) reach the analysis layer, one module each, and
:func:`symparams.core.display.presentation` the documents layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import symparams

PACKAGE = Path(symparams.__file__).parent
LAYERS = ("core", "families", "analysis", "documents", "cli")

#: (importer, imported, function): the only imports allowed to point upward
HOOKS = {
    ("symparams.core.model", "symparams.analysis.proof", "prove"),
    ("symparams.core.model", "symparams.analysis.flops", "flops"),
    ("symparams.core.model", "symparams.analysis.memory", "memory"),
    ("symparams.core.model", "symparams.analysis.cache", "kv_cache"),
    ("symparams.core.model", "symparams.analysis.adapters", "lora"),
    ("symparams.core.model", "symparams.analysis.explain", "explain"),
    ("symparams.core.display", "symparams.documents.notebook", "presentation"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The ``symparams`` modules an ``ImportFrom`` names (a name may be a module or an attribute)."""
    if node.level:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("symparams"):
        return []
    modules = [f"{target}.{alias.name}" for alias in node.names]
    modules = [m for m in modules if (PACKAGE.parent / Path(*m.split("."))).with_suffix(".py").is_file()]
    # ``from package import module`` imports the module; anything else imports ``target`` itself
    return modules if len(modules) == len(node.names) else [target, *modules]


def imports() -> list[tuple[str, str, str | None]]:
    """Every import between symparams modules: (importer, imported, enclosing function or None)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {id(n): f.name for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                     for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = _resolve(importer, path.name == "__init__.py", node)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("symparams")]
            else:
                continue
            found += [(importer, t, functions.get(id(node))) for t in targets]
    return found


def layer(module: str) -> int:
    """0 for core … 4 for cli; 5 for the package's top (``symparams``, ``symparams.__main__``)."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS)


def upward(found) -> list[str]:
    return [f"{a} imports {b}" + (f" (in {fn}())" if fn else "") for a, b, fn in found
            if layer(b) > layer(a) and (a, b, fn) not in HOOKS]


def cycles(found) -> list[list[str]]:
    """Cycles among modules (the hooks left out), each as a path a → … → a."""
    graph: dict[str, set[str]] = {}
    for a, b, fn in found:
        if (a, b, fn) not in HOOKS and a != b and not a.startswith(b + "."):  # a package's own __init__
            graph.setdefault(a, set()).add(b)
    out, state = [], {}

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                out.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return out


def test_every_layer_is_a_folder_of_the_package():
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()) == \
        sorted(LAYERS)


def test_imports_point_downward_but_for_the_documented_hooks():
    found = imports()
    assert upward(found) == []
    hooks_used = {(a, b, fn) for a, b, fn in found if (a, b, fn) in HOOKS}
    assert hooks_used == HOOKS  # every hook exists where the documentation says


def test_no_module_imports_itself_through_others():
    assert cycles(imports()) == []


def test_the_checks_catch_an_upward_import_and_a_cycle():
    found = imports() + [("symparams.documents.notebook", "symparams.cli.commands", "heading"),
                         ("symparams.cli.commands", "symparams.documents.notebook", None)]
    assert upward(found) == ["symparams.documents.notebook imports symparams.cli.commands (in heading())"]
    assert any({"symparams.cli.commands", "symparams.documents.notebook"} <= set(c) for c in cycles(found))


def test_lazy_imports_are_seen_with_their_function():
    found = imports()
    assert ("symparams.cli.commands", "symparams.documents.render", "cmd_derive") in found
