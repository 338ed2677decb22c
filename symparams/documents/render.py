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

import jinja2
import jinja2.sandbox

from ..analysis.variables import as_model
from ..core.errors import SymparamsError
from ..core.files import read_text
from .bounded import run_bounded
from .context import context
from .environment import FORMATS, LANGS, TEMPLATES, latex_environment, markdown_environment, sandbox_environment
from .html import render_html

#: a user's template may run this long, use this much more memory and write this much, no more
RENDER_SECONDS = 5
RENDER_MEMORY = 256 << 20
RENDER_BYTES = 16 << 20


def _user_template(path: str, fmt: str, ctx: dict) -> str:
    try:
        source = read_text(path, "template")
    except SymparamsError as exc:
        raise SymparamsError(f"cannot read template {exc}") from None
    try:
        return run_bounded(lambda: _render_user(source, fmt, ctx), seconds=RENDER_SECONDS,
                           memory_bytes=RENDER_MEMORY, output_bytes=RENDER_BYTES)
    except SymparamsError as exc:
        raise SymparamsError(f"template {path}: {exc}") from None


def _render_user(source: str, fmt: str, ctx: dict) -> str:
    """The user's template rendered in the sandbox (in the bounded child); its failures as one line."""
    try:
        template = sandbox_environment(fmt).from_string(source)
        out, size = [], 0
        for chunk in template.generate(**ctx):
            out.append(chunk)
            size += len(chunk)
            if size > RENDER_BYTES:
                raise SymparamsError(f"the output is over {RENDER_BYTES >> 20} MiB")
        return "".join(out)
    except jinja2.TemplateSyntaxError as exc:
        raise SymparamsError(f"line {exc.lineno}: {exc.message}") from None
    except jinja2.sandbox.SecurityError as exc:
        raise SymparamsError(f"not allowed in the sandbox: {exc}") from None
    except jinja2.TemplateError as exc:
        raise SymparamsError(f"{exc.message or exc}") from None


def render(m, format: str = "md", lang: str = "en", title: str | None = None, template: str | None = None) -> str:
    """The derivation document of model ``m`` as text.

    ``format`` is ``md``, ``tex`` or ``html``; ``lang`` ``en`` or ``zh``;
    ``title`` replaces the default title (it is escaped for the format);
    ``template`` is the path of a user's Jinja template, rendered sandboxed
    with the same data (``doc``, ``t``, ``lang``, ``title``) and the filters
    ``tex``, ``md``, ``prose``, ``display``.
    """
    m = as_model(m)
    if template is not None and not isinstance(template, str):
        raise SymparamsError(f"a template is named by its path, not {type(template).__name__}")
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
