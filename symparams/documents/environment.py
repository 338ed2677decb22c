"""Where templates and catalogs come from, and the Jinja environments that render them."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files

import jinja2
import jinja2.sandbox

from ..core.errors import SymparamsError
from .escape import code_md, code_tex, escape_html, escape_md, escape_tex
from .markup import prose_html, prose_md, prose_tex
from .math_layout import display_md, display_tex, inline_tex

FORMATS = ("md", "tex", "html")
LANGS = ("en", "zh")
TEMPLATES = {"md": "markdown/document.md.j2", "tex": "latex/document.tex.j2"}


# -- where the templates live -------------------------------------------------------

def read_template(name: str) -> str:
    """The text of ``templates/NAME``, read from the installed package (the wheel ships the folder
    as ``symparams.templates``)."""
    return files("symparams.templates").joinpath(*name.split("/")).read_text(encoding="utf-8")


@lru_cache(maxsize=len(LANGS))
def catalog(lang: str) -> dict:
    """The string catalog of ``lang`` (``en`` or ``zh``)."""
    if lang not in LANGS:
        raise SymparamsError(f"unknown language {lang!r} (languages: {', '.join(LANGS)})")
    return json.loads(read_template(f"i18n/{lang}.json"))


def _loader():
    return jinja2.FunctionLoader(read_template)


def _common_filters(env, fmt: str) -> None:
    env.filters["tex"] = escape_tex
    env.filters["md"] = lambda text: escape_md(text, line_start=False)  # templates never start a line with it
    env.filters["prose"] = prose_tex if fmt == "tex" else prose_md
    env.filters["display"] = display_tex if fmt == "tex" else display_md
    env.filters["code"] = code_tex if fmt == "tex" else code_md
    env.filters["breakable"] = inline_tex if fmt == "tex" else str
    env.filters["letter"] = lambda n: "abcdefghijklmnopqrstuvwxyz"[(int(n) - 1) % 26]


class _Environment(jinja2.Environment):
    """Our templates read plain dicts: ``x.key`` looks the key up first (Jinja tries the attribute first)."""

    def getattr(self, obj, attribute):
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


@lru_cache(maxsize=None)
def latex_environment() -> jinja2.Environment:
    """The Jinja environment for LaTeX: ``\\VAR{}``, ``\\BLOCK{}``, ``\\#{}``, ``%-`` line statements."""
    env = _Environment(
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        line_statement_prefix="%-", line_comment_prefix="%#",
        trim_blocks=True, lstrip_blocks=True, autoescape=False, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined, loader=_loader())
    _common_filters(env, "tex")
    return env


@lru_cache(maxsize=None)
def markdown_environment() -> jinja2.Environment:
    """The Jinja environment for Markdown (default delimiters)."""
    env = _Environment(trim_blocks=True, lstrip_blocks=True, autoescape=False, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, loader=_loader())
    _common_filters(env, "md")
    return env


@lru_cache(maxsize=None)
def html_environment() -> jinja2.Environment:
    """The Jinja environment for the HTML page: user text is escaped explicitly (``|html``), as in
    the other formats; the page's prose, MathML and script arrive as HTML."""
    env = _Environment(autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                       loader=_loader())
    env.filters["html"] = escape_html
    env.filters["prose"] = prose_html
    return env


class _Sandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """The sandbox for users' templates, with a cap on huge powers and repetitions."""

    intercepted_binops = frozenset({"**", "*"})

    def call_binop(self, context, operator, left, right):
        if operator == "**" and isinstance(right, int) and abs(right) > 1000:
            raise jinja2.sandbox.SecurityError("exponent too large")
        if operator == "*":
            for a, b in ((left, right), (right, left)):
                if isinstance(a, (str, list, tuple)) and isinstance(b, int) and b * max(len(a), 1) > 10**6:
                    raise jinja2.sandbox.SecurityError("repetition too large")
        return super().call_binop(context, operator, left, right)


def sandbox_environment(fmt: str) -> jinja2.sandbox.SandboxedEnvironment:
    env = _Sandbox(undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=True, keep_trailing_newline=True)
    del env.globals["lipsum"]  # lipsum(10**9) would write gigabytes of filler
    _common_filters(env, fmt)
    return env
