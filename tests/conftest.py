"""Shared test configuration: the markers of the tests that need an outside tool.

``crosscheck`` (transformers on the meta device) is registered in
pyproject.toml; the markers below say which tests need a tool outside Python.
They only label tests (``-m "not tex"`` deselects them when asked): nothing
is skipped, and a missing tool is a failure.

The helpers the tests share live in the :mod:`tests.reference` package
(``from tests.reference.hf import assert_matches``), imported like any
package from the checkout's root.
"""

import gc
import os
import sys

import pytest

# the suite never reaches the network: huggingface_hub (a hub id's config.json) reads its cache only; set before
# any test imports the library, which reads it then, and inherited by every process a test starts
os.environ["HF_HUB_OFFLINE"] = "1"
# one thread per process: the tests' tensors are tiny, and the workers already fill the cores; with torch's default
# (a thread per core in each worker) its threads wait on each other, and a tiny forward pass took 0.7 s, not 3 ms
os.environ.setdefault("OMP_NUM_THREADS", "1")

MARKERS = (
    "tex: compiles LaTeX documents (needs TeX Live: latexmk, xelatex, ctex, pgfplots, and pdftotext)",
    "browser: runs the live HTML page in headless Chromium (needs chromium)",
    "node: checks Markdown documents with Node (needs node and `npm install` in tests/js)",
)


def pytest_configure(config):
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    # the tests make SymPy expressions and transformers modules by the million, most short-lived, while the
    # session keeps rendered documents and built models: with the default thresholds the cyclic collector
    # scanned the kept ones over and over (11 to 14 % of a worker's time); it still runs, less often
    gc.set_threshold(100_000, 20, 20)
    if "torch" in sys.modules:  # imported before this file was: the variable above came too late for it
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


@pytest.fixture(scope="session", autouse=True)
def _command_runners():
    """The processes that fork the CLI tests' command lines (tests/reference/cli_runner.py) stop with the run."""
    yield
    from tests.reference.cli_runner import close_runners

    close_runners()


@pytest.fixture(autouse=True)
def _no_dispatch_mode_left():
    """A test that leaves a torch dispatch mode entered (a tracer's recorder) would make every later FLOP count of
    its worker record through it: the test that leaves one fails, not a later one."""
    yield
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch._C, "_len_torch_dispatch_stack"):
        left = torch._C._len_torch_dispatch_stack()
        assert left == 0, f"{left} torch dispatch mode(s) left entered"
