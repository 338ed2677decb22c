"""What the tests compare symparams with, and where the shipped files are.

:mod:`tests.reference.hf` builds transformers models on PyTorch's meta device
and compares them with a symparams model tensor by tensor;
:mod:`tests.reference.decoders` writes the transformers configs of GPT-2,
LLaMA and T5 models.  Both import torch and transformers, so only the tests
that cross-check import them; this module imports nothing heavy.
:mod:`tests.reference.cli_runner` runs ``python -m symparams`` command lines
as processes forked from a runner that has imported the package once.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent            # the checkout: README.md, docs/, pyproject.toml
FIXTURES = TESTS / "fixtures"  # published config.json files, one folder per checkpoint
JS = TESTS / "js"              # the Node checks of the Markdown documents
