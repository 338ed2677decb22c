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

import contextlib
import io
import signal
import threading

import jinja2
import jinja2.sandbox

from ..analysis.variables import as_model
from ..core.errors import SymparamsError
from ..core.files import read_text
from .context import context
from .environment import FORMATS, LANGS, TEMPLATES, latex_environment, markdown_environment, sandbox_environment
from .html import render_html


def _user_template(path: str, fmt: str, ctx: dict) -> str:
    try:
        source = read_text(path, "template")
    except SymparamsError as exc:
        raise SymparamsError(f"cannot read template {exc}") from None
    env = sandbox_environment(fmt)
    try:
        return _bounded(env.from_string(source), ctx)
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


#: a user's template may run this long and write this much, no more
RENDER_SECONDS = 10
RENDER_BYTES = 16 << 20


def _bounded(template: jinja2.Template, ctx: dict) -> str:
    """The template rendered, stopped past :data:`RENDER_SECONDS` or :data:`RENDER_BYTES`."""
    out = io.StringIO()
    with _time_limit(RENDER_SECONDS):
        for chunk in template.generate(**ctx):
            if out.write(chunk) and out.tell() > RENDER_BYTES:
                raise jinja2.sandbox.SecurityError(f"the output is over {RENDER_BYTES >> 20} MiB")
    return out.getvalue()


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise a SecurityError in the block after ``seconds`` (where a timer signal can: the main thread)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise jinja2.sandbox.SecurityError(f"it ran for more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
