"""HuggingFace config.json import (issue 4). Placeholder until implemented."""

from __future__ import annotations

from .errors import SymparamsError


def load(path: str, head: str | None = None, overrides: dict[str, str] | None = None):
    """A :class:`~symparams.model.Model` from the ``config.json`` at ``path``."""
    raise SymparamsError("config.json import is not available yet")
