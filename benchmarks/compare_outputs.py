"""Every user-visible output, before and after a change: they must be byte-identical.

    python benchmarks/compare_outputs.py --base REV    # snapshot REV and the working tree, diff them
    python benchmarks/compare_outputs.py --snapshot    # print this checkout's snapshot as JSON

The snapshot runs the command line in-process (``symparams.cli.main``) for
every preset: ``count`` (table and ``--json``, every head), ``formula``
(text and ``--latex``), ``prove`` (text and ``--json``), ``derive --format
html`` in both languages; ``formula``/``prove`` of every family; ``list``;
worked ``solve`` and ``sweep`` examples; and the notebook displays
(``_repr_latex_``, ``_repr_markdown_``, ``_repr_html_``) of a model, its
breakdown and its proof.  The Markdown and LaTeX documents are compared by
the ``docs/`` drift test.

``--base REV`` exports REV with ``git archive`` into a temporary folder,
takes both snapshots in fresh processes (the working tree's as installed,
``pip install -e .``, so its templates are found as package data) and prints every case that differs
(exit status 1), or how many cases are identical (exit status 0).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from revision import ROOT, export


def _run(argv: list[str]) -> dict:
    from symparams.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return {"status": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _cases() -> list[list[str]]:
    from symparams import model

    presets = [line.split()[0] for line in _run(["list"])["stdout"].splitlines()
               if line.startswith("  ")]
    families = []
    seen_family = False
    for line in _run(["list"])["stdout"].splitlines():
        if line == "families:":
            seen_family = True
        elif seen_family and line.startswith("  "):
            families.append(line.split()[0])
    presets = [p for p in presets if p not in families]
    cases = [["list"]]
    heads_done = set()
    for name in presets:
        cases += [["count", name], ["count", name, "--json"], ["formula", name], ["formula", name, "--latex"],
                  ["prove", name], ["prove", name, "--json"]]
        cases += [["derive", name, "--format", "html", "--lang", lang] for lang in ("en", "zh")]
        fam = model(name).family
        if fam.name not in heads_done:
            heads_done.add(fam.name)
            for head in fam.heads:
                cases += [["count", name, "--head", head], ["count", name, "--head", head, "--json"]]
    for fam in families:
        cases += [["formula", fam], ["formula", fam, "--latex"], ["prove", fam], ["prove", fam, "--json"]]
    cases += [
        ["solve", "bert-base", "--target", "1e9", "--for", "H", "--set", "L=24", "--set", "A=16"],
        ["solve", "bert-base", "--target", "2e8", "--for", "L", "--json"],
        ["solve", "llama-2-70b", "--target", "6e10", "--for", "A"],
        ["sweep", "bert-base", "--grid", "H=768:1024:64", "--grid", "L=12,24"],
        ["sweep", "bert-base", "--grid", "H=768:1024:64", "--json"],
        ["sweep", "llama-2-7b", "--grid", "r=2:4:1/4"],
        ["count", "bert-base", "--set", "H=1024", "--set", "A=16", "--set", "L=24"],
        ["formula", "bert", "--set", "r=4"],
        ["count", "nonexistent"],
        ["count", "bert-base", "--set", "H=770"],
    ]
    return cases


def _displays() -> dict:
    from symparams import model

    out = {}
    for name in ("bert-base", "llama-2-70b", "t5-small", "transformer-base-article"):
        m = model(name)
        for label, obj in (("model", m), ("breakdown", m.breakdown()), ("proof", m.prove())):
            for method in ("_repr_latex_", "_repr_markdown_", "_repr_html_"):
                out[f"{name} {label}.{method}"] = getattr(obj, method)()
    symbolic = model("bert", V=30522, P=512, S=2, r=4)
    out["bert(symbolic) model._repr_latex_"] = symbolic._repr_latex_()
    out["bert(symbolic) breakdown._repr_markdown_"] = symbolic.breakdown()._repr_markdown_()
    return out


def snapshot() -> dict:
    """Case → output, for this checkout."""
    out = {" ".join(argv): _run(argv) for argv in _cases()}
    out.update(_displays())
    return out


def _snapshot_of(source: Path, pythonpath: bool) -> dict:
    """The snapshot of the checkout at ``source``: imported from it (``pythonpath``), else as installed."""
    env = {**os.environ, "PYTHONPATH": str(source)} if pythonpath else dict(os.environ)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--snapshot"], cwd=source, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="the revision to compare the working tree with")
    ap.add_argument("--snapshot", action="store_true", help="print this checkout's snapshot as JSON")
    args = ap.parse_args(argv)
    if args.snapshot:
        json.dump(snapshot(), sys.stdout, ensure_ascii=False, indent=1, sort_keys=True)
        return 0
    if not args.base:
        ap.error("give --base REV or --snapshot")
    with tempfile.TemporaryDirectory() as tmp:
        export(args.base, Path(tmp))
        before = _snapshot_of(Path(tmp), pythonpath=True)
    after = _snapshot_of(ROOT, pythonpath=False)
    differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    for case in differ:
        print(f"differs: {case}")
    same = len(before.keys() & after.keys()) - len([k for k in differ if k in before and k in after])
    print(f"{same} cases identical, {len(differ)} differ ({args.base} → working tree)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
