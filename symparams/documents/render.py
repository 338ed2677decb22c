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

import re
from functools import lru_cache

import jinja2
import jinja2.sandbox

from ..analysis.variables import as_model
from ..core.errors import SymparamsError
from ..core.files import read_text
from .bounded import run_bounded
from .commonmark import closing_strong
from .context import context
from .derivation import derive
from .diagram import diagram
from .environment import FORMATS, LANGS, TEMPLATES, latex_environment, markdown_environment, sandbox_environment
from .html import render_html
from .math_layout import display_tex, math_width

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


def _encodable(text: str) -> str:
    """``text`` if UTF-8 can write it; a lone surrogate (``{{ "%c" % 55296 }}``) cannot be in any file."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SymparamsError(f"the output holds U+{ord(text[exc.start]):04X}, a lone surrogate no UTF-8 text "
                             "can hold") from None
    return text


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
        return _encodable("".join(out))
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
    with the same data (``doc``, ``t``, ``lang``, ``title``, ``version``,
    ``diagram``: see :mod:`~symparams.documents.diagram`; ``table``, the summary table's layout) and the filters
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
    ctx = {**context(m, lang, title), **_version(), "diagram": diagram(derive(m), lang)}
    # the summary table's layout: a user's copy of the shipped template reads it as the shipped one does
    ctx["table"] = (summary_layout if format == "tex" else summary_layout_md)(ctx["doc"], ctx["t"])
    if template is not None:
        return _user_template(template, "tex" if format == "tex" else "md", ctx)
    if format == "tex":
        return latex_environment().get_template(TEMPLATES[format]).render(**ctx, format=format,
                                                                         numbered=numbered_tex)
    return closing_strong(markdown_environment().get_template(TEMPLATES[format]).render(**ctx, format=format))


@lru_cache(maxsize=1)
def _version() -> dict:
    """``{"version": …}``, the installed symparams' version (nothing when it is not installed).

    Looked up when a document is rendered, not when the package is imported: the plain CLI stays fast.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return {"version": version("symparams")}
    except PackageNotFoundError:
        return {}


def numbered_tex(parts, lhs: str, label: str) -> str:
    """The chain ``lhs = parts[0] = …`` as a numbered display labelled ``label`` (``\\eqref`` refers to
    it): one ``equation``, broken into ``aligned`` rows where :func:`display_tex` would break it."""
    shown = display_tex(parts, lhs)
    if shown.startswith("\\["):
        body = shown[2:-2].strip()
    else:
        body = shown.replace("\\begin{align*}", "\\begin{aligned}").replace("\\end{align*}", "\\end{aligned}")
    return f"\\begin{{equation}}\\label{{{label}}}\n{body}\n\\end{{equation}}"


# -- the summary table's columns (LaTeX) ------------------------------------------------------------------

#: A4 with 2.5 cm margins, in pt; the table's \small (labels, counts) and \footnotesize (formulas)
_TEXT_WIDTH = 455.0
_SMALL, _FOOTNOTE = 10.0, 9.0
#: the gaps between the five columns (0.3 em, 0.8 em, then two of 2 × \tabcolsep = 8 pt)
_GAPS = 0.3 * _SMALL + 0.8 * _SMALL + 2 * 8.0
#: a label may take this share of the line, and as much as leaves the formulas this room (in pt); a longer
#: label wraps, with a hanging indent
_LABEL_MAX = 0.45 * _TEXT_WIDTH
_FORMULA_MIN = 90.0
_MATH = re.compile(r"(\$[^$]+\$)")


#: Latin Modern Roman's widths in em (cmr10's metrics): a capital or an "&" is half as wide again as the
#: 0.5 em of an average lower-case letter, so a label such as "Add & Norm: LayerNorm" measured at 0.5 em a
#: letter came out 10 pt short and wrapped
_EM = {**dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (.75, .708, .722, .764, .681, .653, .785, .75, .361, .514, .778, .625,
                                               .917, .75, .778, .681, .778, .736, .556, .722, .75, .75, 1.028, .75,
                                               .75, .611))),
       **dict(zip("abcdefghijklmnopqrstuvwxyz", (.5, .556, .444, .556, .444, .306, .5, .556, .278, .306, .528, .278,
                                               .833, .556, .5, .556, .528, .392, .394, .389, .556, .528, .722, .528,
                                               .528, .444))),
       " ": .333, "&": .778, ":": .278, ",": .278, ".": .278, "(": .389, ")": .389, "-": .333, "/": .5, "'": .278}
#: bold (cmbx10) is about 15 % wider
_BOLD = 1.15


def _text_em(text: str, bold: bool = False) -> float:
    """Approximate width in em of a catalog title (mini-markup): CJK 1 em, Latin letters by their widths in
    Latin Modern (:data:`_EM`; 0.5 em for any other)."""
    width = 0.0
    for piece in _MATH.split(text):
        if piece.startswith("$") and piece.endswith("$") and len(piece) > 1:
            width += math_width(piece[1:-1])
            continue
        for ch in piece.replace("**", "").replace("`", ""):
            width += 1.0 if ord(ch) >= 0x2E80 else _EM.get(ch, 0.5) * (_BOLD if bold else 1.0)
    return width


def _label_pt(row: dict) -> float:
    bold = row["level"] == 1
    return _SMALL * (_text_em(row["title"], bold) + (0 if bold else 1.0))  # a part is indented 1 em


def summary_layout(doc: dict, t: dict) -> dict:
    """How the LaTeX summary table sets its columns: the label column as wide as its widest label (so no
    label wraps, up to 45 % of the line, or more where the formulas left in the table need less), and which
    formulas are too wide for what is left (``t`` is the catalog: the labels of the total rows and the
    formula column's heading).

    A formula too wide for its cell is shown below the table as a numbered equation, and the cell refers
    to it.  Returns ``label`` (a TeX length), ``refs`` (per summary row: "" or the label of its equation),
    ``total_ref`` and ``active_ref`` (the same for the total rows; the total's equation is always shown)
    and ``notes`` (the rows' equations: label, title, formula), in the order of the table.
    """
    rows = doc["summary"]
    totals = [t["summary"]["total"], t["summary"]["trainable"]] + ([t["summary"]["active"]] if doc["shows_active"]
                                                                  else [])
    wanted = max([_label_pt(r) for r in rows] + [_SMALL * _text_em(title, True) for title in totals]) * 1.06 + 2
    repeat = max((math_width("\\times " + r["repeat"]) * _SMALL for r in rows if r["repeat"]), default=0.0)
    digits = max(len(r["count"]) for r in rows + [{"count": doc["total"]}])
    count = digits * 0.575 * _SMALL  # the total is bold: its digits are 0.575 em wide
    others = repeat + count + 3.6 * _SMALL + _GAPS  # 3.6 em: a share, "100.00%"
    label = max(6 * _SMALL, min(_LABEL_MAX, wanted, _TEXT_WIDTH - others - _FORMULA_MIN))
    room = _TEXT_WIDTH - label - others
    formulas = [("" if r["tied_to"] else r["formula"]) for r in rows] + [doc["closed_formula"]] \
        + ([doc["active_formula"]] if doc["shows_active"] else [])
    kept = [_FOOTNOTE * math_width(f) for f in formulas if f and _FOOTNOTE * math_width(f) <= room]
    # what the kept formulas (and the column's heading) leave unused goes to a label that would wrap
    needed = max(kept + [_SMALL * _text_em(t["summary"]["formula"])])
    label = min(wanted, label + max(0.0, room - needed))

    def too_wide(formula: str) -> bool:
        return bool(formula) and math_width(formula) * _FOOTNOTE > room

    notes = []
    refs = []
    for k, r in enumerate(rows, 1):
        refs.append(f"eq:summary-{k}" if not r["tied_to"] and too_wide(r["formula"]) else "")
        if refs[-1]:
            notes.append({"label": refs[-1], "title": r["title"], "formula": r["formula"]})
    active_ref = "eq:active" if doc["shows_active"] and too_wide(doc["active_formula"]) else ""
    return {"label": f"{label:.1f}pt", "refs": refs, "total_ref": "eq:total" if too_wide(doc["closed_formula"]) else "",
            "active_ref": active_ref, "notes": notes}


#: GitHub's Markdown column (about 880 px of 16 px text) and a table cell's padding (13 px each side), in em;
#: measured in Chromium, KaTeX sets math 1.4 times as wide as :func:`math_width` and a sans-serif label is
#: 1.15 times :func:`_text_em`'s Latin Modern
_MD_WIDTH, _MD_PAD, _KATEX, _SANS = 55.0, 1.6, 1.4, 1.15


def summary_layout_md(doc: dict, t: dict) -> dict:
    """Which formulas of the Markdown summary table are set below it, as :func:`summary_layout` does for LaTeX:
    a browser fits a table too wide for the page by wrapping its text cells (KaTeX's math does not wrap), so a
    label such as "词嵌入（Token Embedding）" broke over two lines beside a long formula.  What the labels,
    counts and shares leave of the page is the formula column's; a formula wider than that is set
    below the table, its cell naming it ``(1)``, ``(2)``, …  Returns ``refs`` (per row: "" or its number),
    ``total_ref``, ``active_ref`` and ``notes`` (number, title, formula)."""
    rows = doc["summary"]
    label = max(_SANS * _text_em(r["label"], r["level"] == 1) + (0 if r["level"] == 1 else 1) for r in rows)
    repeat = max((_KATEX * math_width("\\times " + r["repeat"]) for r in rows if r["repeat"]), default=0.0)
    # the counts' digits (the total's bold) and the widest share ("0.0000011%"), about 0.65 em a character
    count = 0.65 * (len(doc["total"]) + max(len(r["share"]) for r in rows + [{"share": "100.00%"}]))
    room = _MD_WIDTH - 5 * _MD_PAD - label - repeat - count
    notes, refs = [], []

    def ref(title: str, formula: str) -> str:
        if not formula or _KATEX * math_width(formula) <= room:
            return ""
        notes.append({"number": str(len(notes) + 1), "title": title, "formula": formula})
        return notes[-1]["number"]

    refs = [ref(r["title"], "" if r["tied_to"] else r["formula"]) for r in rows]
    total_ref = ref(t["summary"]["total"], doc["closed_formula"])
    active_ref = ref(t["summary"]["active"], doc["active_formula"]) if doc["shows_active"] else ""
    return {"refs": refs, "total_ref": total_ref, "active_ref": active_ref, "notes": notes}

