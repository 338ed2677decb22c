"""LaTeX sources compiled by XeLaTeX (latexmk), in parallel, once per test process.

Several test files compile the same documents (BERT-base in both languages is checked for errors, overfull
boxes and the article's figures, and for how full its pages are); a source compiled once is kept by its text.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

_COMPILED: dict[str, tuple[int, str, Path]] = {}
_WORK: list[Path] = []


def compile_all(sources: dict[str, str]) -> dict[str, tuple[int, str, Path]]:
    """name → (latexmk's return code, the log, the PDF's path) for each LaTeX source."""
    for tool in ("latexmk", "xelatex", "pdftotext"):
        assert shutil.which(tool), f"{tool} is needed (texlive-xetex, latexmk, poppler-utils)"
    keys = {name: hashlib.sha256(source.encode("utf-8")).hexdigest()[:20] for name, source in sources.items()}
    procs = {}
    for name, source in sources.items():
        key = keys[name]
        if key in _COMPILED or key in procs:
            continue
        folder = _work() / key
        folder.mkdir()
        (folder / "doc.tex").write_text(source, encoding="utf-8")
        procs[key] = subprocess.Popen(
            ["latexmk", "-xelatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
            cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for key, proc in procs.items():
        rc = proc.wait(timeout=600)
        folder = _work() / key
        _COMPILED[key] = (rc, (folder / "doc.log").read_text(encoding="utf-8", errors="replace"), folder / "doc.pdf")
    return {name: _COMPILED[key] for name, key in keys.items()}


def _work() -> Path:
    if not _WORK:
        _WORK.append(Path(tempfile.mkdtemp(prefix="symparams-latex-")))
        atexit.register(shutil.rmtree, _WORK[0], True)
    return _WORK[0]
