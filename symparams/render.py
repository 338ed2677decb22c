"""Derivation documents (issue 3). Placeholder until implemented."""

from __future__ import annotations

from .errors import SymparamsError


def render(m, format: str = "md", lang: str = "en", title: str | None = None, template: str | None = None) -> str:
    """The derivation document of model ``m`` as text."""
    raise SymparamsError("derivation documents are not available yet")
