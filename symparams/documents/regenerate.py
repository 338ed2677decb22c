"""Regenerate ``docs/``: a derivation document for every preset, format and language.

    python -m symparams.documents.regenerate            # write docs/<preset>.<lang>.<md|tex>
    python -m symparams.documents.regenerate --check    # exit 1 and name the files that drifted

The file names are ``<preset>.<lang>.<ext>`` (``bert-base.zh.md``); the
presets are whatever :func:`symparams.families.presets.all_presets` holds.  Documents of
presets that no longer exist count as drift too.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

FORMATS = ("md", "tex")
LANGS = ("en", "zh")
_GENERATED = re.compile(r"^(?P<preset>.+)\.(?P<lang>en|zh)\.(?P<ext>md|tex)$")


def default_dir() -> Path:
    """``docs/`` of the source checkout this module runs from (else of the working directory)."""
    here = Path(__file__).resolve().parent.parent.parent
    return here / "docs" if (here / "pyproject.toml").is_file() else Path.cwd() / "docs"


def documents() -> dict[str, str]:
    """File name → text of every generated document."""
    import gc

    from ..families.lookup import model
    from ..families.presets import all_presets
    from .render import render

    # A batch of many documents allocates many long-lived SymPy objects; the cyclic collector
    # re-scanning the modules imported so far each time buys nothing, so those are frozen first.
    gc.freeze()
    out = {}
    for name in all_presets():
        m = model(name)
        for fmt in FORMATS:
            for lang in LANGS:
                out[f"{name}.{lang}.{fmt}"] = render(m, format=fmt, lang=lang)
    return out


def drift(directory: Path, docs: dict[str, str] | None = None) -> list[str]:
    """Problems between ``directory`` and freshly rendered documents (empty: none)."""
    docs = documents() if docs is None else docs
    problems = []
    for name, text in docs.items():
        path = directory / name
        if not path.is_file():
            problems.append(f"missing: {name}")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"changed: {name}")
    for path in sorted(directory.glob("*.*.*")):
        if _GENERATED.match(path.name) and path.name not in docs:
            problems.append(f"stale: {path.name}")
    return problems


def write(directory: Path, docs: dict[str, str] | None = None) -> list[Path]:
    """Write every document into ``directory`` and remove stale ones; return the paths written."""
    docs = documents() if docs is None else docs
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in docs.items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    for path in directory.glob("*.*.*"):
        if _GENERATED.match(path.name) and path.name not in docs:
            path.unlink()
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m symparams.documents.regenerate", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report drift (exit status 1 when any)")
    ap.add_argument("--out", type=Path, default=None, help="the docs folder (default: docs/ of the checkout)")
    args = ap.parse_args(argv)
    directory = args.out or default_dir()
    if args.check:
        problems = drift(directory)
        for p in problems:
            print(p)
        return 1 if problems else 0
    written = write(directory)
    print(f"{len(written)} document(s) written to {directory}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
