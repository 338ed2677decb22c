"""Derivation documents: :func:`render` a model as Markdown, LaTeX or the live HTML page.

One template per format (``templates/markdown/document.md.j2``,
``templates/latex/document.tex.j2``, ``templates/html/page.html.j2``) and one string catalog per language
(``templates/i18n/en.json``, ``zh.json``).  The templates lay out the data of
a :class:`~symparams.documents.derivation.Derivation`; they do no arithmetic.

* LaTeX uses TeX-friendly delimiters (``\\VAR{…}``, ``\\BLOCK{…}``, ``\\#{…}``,
  line statements ``%-``), ``StrictUndefined`` and ``trim_blocks``.
* User-given text (``--title``, a model or file name) goes through an
  explicit escape filter (``tex`` or ``md``); math made by ``sympy.latex``
  passes through untouched.
* ``--template PATH`` renders a user's template in Jinja's
  ``SandboxedEnvironment``; it sees plain data only (strings, numbers,
  lists, dicts), never SymPy objects.

>>> from symparams import model
>>> text = render(model("bert-base"), format="md")
>>> "109,482,240" in text and "```mermaid" in text
True
"""

from __future__ import annotations

from pathlib import Path

import jinja2
import jinja2.sandbox

from ..core.errors import SymparamsError
from .context import context
from .environment import FORMATS, LANGS, TEMPLATES, latex_environment, markdown_environment, sandbox_environment
from .html import render_html


def _user_template(path: str, fmt: str, ctx: dict) -> str:
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise SymparamsError(f"cannot read template {path}: {reason}") from None
    env = sandbox_environment(fmt)
    try:
        return env.from_string(source).render(**ctx)
    except jinja2.TemplateSyntaxError as exc:
        raise SymparamsError(f"template {path}, line {exc.lineno}: {exc.message}") from None
    except jinja2.sandbox.SecurityError as exc:
        raise SymparamsError(f"template {path}: not allowed in the sandbox: {exc}") from None
    except jinja2.TemplateError as exc:
        raise SymparamsError(f"template {path}: {exc.message or exc}") from None
    except SymparamsError as exc:
        raise SymparamsError(f"template {path}: {exc}") from None
    except Exception as exc:  # a user's template may fail in any way; one line, no traceback
        raise SymparamsError(f"template {path}: {type(exc).__name__}: {exc}") from None


def render(m, format: str = "md", lang: str = "en", title: str | None = None, template: str | None = None) -> str:
    """The derivation document of model ``m`` as text.

    ``format`` is ``md``, ``tex`` or ``html``; ``lang`` ``en`` or ``zh``;
    ``title`` replaces the default title (it is escaped for the format);
    ``template`` is the path of a user's Jinja template, rendered sandboxed
    with the same data (``doc``, ``t``, ``lang``, ``title``) and the filters
    ``tex``, ``md``, ``prose``, ``display``.
    """
    if format not in FORMATS:
        raise SymparamsError(f"unknown format {format!r} (formats: {', '.join(FORMATS)})")
    if lang not in LANGS:
        raise SymparamsError(f"unknown language {lang!r} (languages: {', '.join(LANGS)})")
    if format == "html" and template is None:
        return render_html(m, lang=lang, title=title)
    ctx = context(m, lang, title)
    if template is not None:
        return _user_template(template, "tex" if format == "tex" else "md", ctx)
    env = latex_environment() if format == "tex" else markdown_environment()
    return env.get_template(TEMPLATES[format]).render(**ctx, format=format)
