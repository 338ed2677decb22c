"""Each preset's document rendered once per test process.

A document takes a fraction of a second to a second to render, and many test files read the same ones
(every preset's Markdown in both languages); rendering is a pure function of the preset, the format and
the language, so each worker keeps what it rendered.  Tests of rendering itself (titles, templates,
options, bad input) call :func:`symparams.documents.render.render` directly.
"""

from __future__ import annotations

from functools import lru_cache

from symparams import model
from symparams.documents.context import context
from symparams.documents.derivation import derive
from symparams.documents.render import render


@lru_cache(maxsize=None)
def document(name: str, format: str = "md", lang: str = "en") -> str:
    """The preset ``name``'s document as ``render`` writes it."""
    return render(model(name), format=format, lang=lang)


@lru_cache(maxsize=None)
def derived(name: str, head: str | None = None):
    """The preset ``name``'s derivation (with ``head``), as ``derive`` makes it."""
    return derive(model(name, head=head))


@lru_cache(maxsize=None)
def document_context(name: str, lang: str = "en") -> dict:
    """What the templates of the preset ``name``'s document are given."""
    return context(model(name), lang)
