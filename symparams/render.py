"""Derivation documents: Jinja environments, filters and :func:`render`.

One template per format (``templates/markdown/document.md.j2``,
``templates/latex/document.tex.j2``) and one string catalog per language
(``templates/i18n/en.json``, ``zh.json``).  The templates lay out the data of
a :class:`~symparams.derivation.Derivation`; they do no arithmetic.

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
>>> print(escape_tex("100% #1 {x} $y$"))
100\\% \\#1 \\{x\\} \\$y\\$
>>> print(escape_md("$x$ _a_ #1"))
\\$x\\$ \\_a\\_ \\#1
"""

from __future__ import annotations

import importlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox

from .errors import SymparamsError

FORMATS = ("md", "tex", "html")
LANGS = ("en", "zh")
TEMPLATES = {"md": "markdown/document.md.j2", "tex": "latex/document.tex.j2"}


# -- where the templates live -------------------------------------------------------

@lru_cache(maxsize=1)
def template_root():
    """The installed ``symparams.templates`` package (or ``templates/`` of a source checkout)."""
    try:
        from importlib.resources import files

        root = files("symparams.templates")
        if root.joinpath("i18n", "en.json").is_file():
            return root
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parent.parent / "templates"


def _read(name: str) -> str:
    return template_root().joinpath(*name.split("/")).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def catalog(lang: str) -> dict:
    """The string catalog of ``lang`` (``en`` or ``zh``)."""
    if lang not in LANGS:
        raise SymparamsError(f"unknown language {lang!r} (languages: {', '.join(LANGS)})")
    return json.loads(_read(f"i18n/{lang}.json"))


# -- escaping -------------------------------------------------------------------------------

_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_\allowbreak{}",
    "~": r"\textasciitilde{}",
    "%": r"\%",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r"\textquotedbl{}",
    "\n": " ",
    "\r": " ",
    "\t": " ",
}
#: symbols a Latin text font may lack, set in math instead (Greek letters are added below)
_TEX_MATH_CHARS = {
    "≠": r"\neq", "≤": r"\leq", "≥": r"\geq", "≈": r"\approx", "→": r"\to", "←": r"\leftarrow",
    "∞": r"\infty", "±": r"\pm", "∂": r"\partial", "∑": r"\sum", "√": r"\surd", "∈": r"\in",
    "⋅": r"\cdot", "∣": r"\mid",
}
_GREEK = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi o pi rho varsigma sigma " \
         "tau upsilon phi chi psi omega".split()
for _i, _name in enumerate(_GREEK):
    if _name not in ("o", "varsigma"):
        _TEX_MATH_CHARS[chr(0x03B1 + _i)] = "\\" + _name
for _c, _cmd in _TEX_MATH_CHARS.items():
    _TEX_ESCAPES[_c] = r"\ensuremath{" + _cmd + "}"
_TEX_RE = re.compile("|".join(re.escape(c) for c in _TEX_ESCAPES))
#: every key is one character, so a translation table does what ``_TEX_RE.sub`` does, faster
_TEX_TABLE = str.maketrans(_TEX_ESCAPES)
_CODE_TABLE = str.maketrans({**_TEX_ESCAPES, **{c: _TEX_ESCAPES.get(c, c) + r"\allowbreak{}" for c in ".-_/"}})


def escape_tex(text: Any) -> str:
    """``text`` as literal LaTeX text: every special character replaced by its text command."""
    return str(text).translate(_TEX_TABLE)


def code_tex(text: Any) -> str:
    """``text`` in ``\\texttt``, escaped, with break points after ``.``, ``-``, ``_`` and ``/``."""
    return r"\texttt{" + str(text).translate(_CODE_TABLE) + "}"


_MD_SPECIAL = set("\\`*_{}[]<>#+!|$~^&")
_MD_TABLE = str.maketrans({c: "\\" + c for c in _MD_SPECIAL})
_MD_LEADING = re.compile(r"^(\s*)([-+=>]|\d+[.)])")


def escape_md(text: Any, line_start: bool = True) -> str:
    """``text`` as literal Markdown (GitHub) text: special punctuation backslash-escaped.

    With ``line_start`` (the text may begin a line) a leading ``-``, ``+``,
    ``=``, ``>`` or ``1.`` is escaped too, so it cannot start a list or a quote.
    """
    text = " ".join(str(text).split())
    out = text.translate(_MD_TABLE)
    mo = _MD_LEADING.match(out) if line_start else None
    if mo:
        lead = mo.group(2)
        out = mo.group(1) + lead[:-1] + "\\" + lead[-1] + out[mo.end():]
    return out


# -- prose: catalog strings with $math$, `code`, **bold** and [[placeholders]] --------------

_SEGMENT = re.compile(r"(\$[^$]+\$|`[^`]+`|\*\*[^*]+\*\*)")
_HOLE = re.compile(r"\[\[(\w+)\]\]")


def _fill(text: str, values: dict, escape) -> str:
    def hole(mo):
        key = mo.group(1)
        if key not in values:
            raise SymparamsError(f"catalog string needs a value for [[{key}]]: {text[:60]!r}")
        return escape(values[key])
    return _HOLE.sub(hole, text)


def _prose(text: str, values: dict, fmt: str) -> str:
    """Our catalog text for ``fmt``: TeX-escaped (Markdown: as written), holes escaped, math untouched."""
    own = escape_tex if fmt == "tex" else str
    out = []
    for seg in _SEGMENT.split(str(text)):
        if not seg:
            continue
        if seg.startswith("$") and seg.endswith("$") and len(seg) > 1:
            out.append("$" + _fill(seg[1:-1], values, str) + "$")
        elif seg.startswith("`") and seg.endswith("`"):
            code = _fill(seg[1:-1], values, str)
            out.append(code_tex(code) if fmt == "tex" else "`" + code.replace("`", "") + "`")
        elif seg.startswith("**") and seg.endswith("**"):
            inner = _prose(seg[2:-2], values, fmt)
            out.append(r"\textbf{" + inner + "}" if fmt == "tex" else "**" + inner + "**")
        else:
            parts = _HOLE.split(seg)
            for i, part in enumerate(parts):
                if i % 2 == 0:
                    out.append(own(part))
                elif part in values:
                    at_start = not out and i == 1 and not parts[0]
                    out.append(escape_tex(values[part]) if fmt == "tex" else escape_md(values[part], at_start))
                else:
                    raise SymparamsError(f"catalog string needs a value for [[{part}]]: {str(text)[:60]!r}")
    return "".join(out)


@lru_cache(maxsize=4096)
def _prose_cached(text: str, fmt: str, values: tuple) -> str:
    return _run(_program(text, fmt), dict(values))


@lru_cache(maxsize=2048)
def _program(text: str, fmt: str) -> tuple:
    """:func:`_prose` of ``text`` parsed once: literal pieces and the holes the values fill.

    Steps: ``(0, text)`` literal; ``(1, name, context, tex)`` a hole in prose, escaped for ``fmt``;
    ``(2, inner, lead, tail, tex)`` math (``$…$``) or code, filled by :func:`_fill`;
    ``(3, program, lead, tail)`` bold.  (:func:`_prose` is the reference; the values are strings.)
    """
    own = escape_tex if fmt == "tex" else str
    steps: list = []
    for seg in _SEGMENT.split(str(text)):
        if not seg:
            continue
        if seg.startswith("$") and seg.endswith("$") and len(seg) > 1:
            steps.append((2, seg[1:-1], "$", "$", False))
        elif seg.startswith("`") and seg.endswith("`"):
            steps.append((2, seg[1:-1], None, None, fmt == "tex"))
        elif seg.startswith("**") and seg.endswith("**"):
            lead, tail = (r"\textbf{", "}") if fmt == "tex" else ("**", "**")
            steps.append((3, _program(seg[2:-2], fmt), lead, tail))
        else:
            parts = _HOLE.split(seg)
            for i, part in enumerate(parts):
                if i % 2 == 0:
                    steps.append((0, own(part)))
                else:  # never at the start of the text: the part before it was appended first
                    steps.append((1, part, str(text)[:60], fmt == "tex"))
    return tuple(steps)


def _run(program: tuple, values: dict) -> str:
    out = []
    for step in program:
        kind = step[0]
        if kind == 0:
            out.append(step[1])
        elif kind == 1:
            if step[1] not in values:
                raise SymparamsError(f"catalog string needs a value for [[{step[1]}]]: {step[2]!r}")
            value = values[step[1]]
            out.append(escape_tex(value) if step[3] else escape_md(value, False))
        elif kind == 2:
            filled = _fill(step[1], values, str)
            if step[2] is not None:
                out.append(step[2] + filled + step[3])
            elif step[4]:
                out.append(code_tex(filled))
            else:
                out.append("`" + filled.replace("`", "") + "`")
        else:
            out.append(step[2] + _run(step[1], values) + step[3])
    return "".join(out)


def prose_tex(text, **values) -> str:
    """Catalog text as LaTeX (see :func:`_prose`)."""
    return _prose_cached(str(text), "tex", tuple(sorted((k, str(v)) for k, v in values.items())) if values else ())


def prose_md(text, **values) -> str:
    """Catalog text as Markdown (see :func:`_prose`)."""
    return _prose_cached(str(text), "md", tuple(sorted((k, str(v)) for k, v in values.items())) if values else ())


# -- display math --------------------------------------------------------------------------------

#: widths in em of 11 pt math; a rough measure, enough to break lines before they overflow
_OPS = {r"\times": 1.25, r"\cdot": 0.75, r"\mid": 0.9, r"\partial": 0.55, r"\quad": 1.0, r"\qquad": 2.0,
        r"\in": 1.2, r"\neq": 1.35, r"\rho": 0.5}
_LINE_EM = 33.0


def _group(s: str, i: int) -> tuple[str, int]:
    """The brace group starting at ``s[i] == '{'``: (contents, index after it)."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return s[i + 1:j], j + 1
    return s[i + 1:], len(s)


_COMMAND = re.compile(r"\\([a-zA-Z]+|.)")


@lru_cache(maxsize=8192)
def math_width(s: str) -> float:
    """Approximate width of LaTeX math ``s`` in em."""
    w, i = 0.0, 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            mo = _COMMAND.match(s, i)
            cmd = mo.group(0)
            i += len(cmd)
            if cmd == r"\frac":
                num, i = _group(s, i)
                den, i = _group(s, i)
                w += max(math_width(num), math_width(den)) + 0.2
            elif cmd in (r"\left", r"\right", r"\bigl", r"\bigr", r"\Bigl", r"\Bigr"):
                continue
            elif cmd in (r"\text", r"\mathrm", r"\operatorname"):
                body, i = _group(s, i)
                w += 0.5 * len(body)
            elif cmd == r"\,":
                w += 0.17
            else:
                w += _OPS.get(cmd, 0.6)
        elif c in "^_":
            i += 1
            if i < len(s) and s[i] == "{":
                body, i = _group(s, i)
            else:
                body, i = s[i:i + 1], i + 1
            w += 0.7 * math_width(body)
        elif c == "{":
            body, i = _group(s, i)
            w += 0.28 if body == "," else math_width(body)
        elif c in "+-=<>":
            w += 1.3
            i += 1
        elif c in "()[],":
            w += 0.4
            i += 1
        elif c == " ":
            i += 1
        else:
            w += 0.55
            i += 1
    return w


def _breakable(s: str) -> str:
    """``\\left( … \\right)`` made into fixed-size delimiters, so a line may end between them.

    Plain parentheses where nothing tall sits inside; ``\\Bigl( … \\Bigr)``
    around fractions.
    """
    if r"\frac" in s:
        pairs = ((r"\left(", r"\Bigl("), (r"\right)", r"\Bigr)"), (r"\left[", r"\Bigl["), (r"\right]", r"\Bigr]"))
    else:
        pairs = ((r"\left(", "("), (r"\right)", ")"), (r"\left[", "["), (r"\right]", "]"))
    for a, b in pairs:
        s = s.replace(a, b)
    return s


def inline_tex(s: str) -> str:
    """Math for a table cell: plain delimiters, so TeX may break the line after any + (fractions are small)."""
    for a, b in ((r"\left(", "("), (r"\right)", ")"), (r"\left[", "["), (r"\right]", "]")):
        s = s.replace(a, b)
    return s


def _split(s: str, ops=(" + ", " - ")) -> list[str]:
    """``s`` cut before each top-level (brace depth 0) operator in ``ops``."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0:
            for op in ops:
                if s.startswith(op, i) and i > start:
                    out.append(s[start:i])
                    start = i + 1
                    break
        i += 1
    out.append(s[start:])
    return [p.strip() for p in out if p.strip()]


def _lines(s: str, width: float) -> list[str]:
    """``s`` broken into lines no wider than ``width`` em (at + and -, else at × and ·)."""
    if math_width(s) <= width:
        return [s]
    s = _breakable(s)
    lines: list[str] = []
    for term in _split(s):
        if math_width(term) > width:  # one long product: break it at its factors
            pieces = _split(term, (r" \times ", r" \cdot "))
        else:
            pieces = [term]
        for piece in pieces:
            if lines and math_width(lines[-1] + " " + piece) <= width:
                lines[-1] = lines[-1] + " " + piece
            else:
                lines.append(piece)
    return lines


def display_tex(parts, lhs: str = "") -> str:
    """A chain ``lhs = parts[0] = parts[1] = …`` as LaTeX display math that fits the line.

    Short chains are one ``\\[ … \\]``; long ones an ``align*`` with one
    part per line, a long part broken after its terms.
    """
    return _display_tex(tuple(parts), lhs)


@lru_cache(maxsize=4096)
def _display_tex(parts: tuple, lhs: str) -> str:
    parts = [p for i, p in enumerate(parts) if p and (i == 0 or p != parts[i - 1])]
    chain = " = ".join(([lhs] if lhs else []) + parts)
    if math_width(chain) <= _LINE_EM:
        return "\\[\n  " + chain + "\n\\]"
    rows = []
    for k, part in enumerate(parts):
        first = k == 0 and not lhs
        lines = _lines(part, _LINE_EM - (0 if first else 1.4) - 1.2)
        for j, line in enumerate(lines):
            if j > 0:
                rows.append("&\\quad " + line)
            elif first:
                rows.append("&" + line)
            else:
                rows.append("&= " + line)
    head = (lhs + " ") if lhs else ""
    return "\\begin{align*}\n  " + head + " \\\\\n  ".join(rows) + "\n\\end{align*}"


def display_md(parts, lhs: str = "") -> str:
    """A chain ``lhs = parts[0] = …`` as one GitHub display-math line."""
    parts = [p for i, p in enumerate(parts) if p and (i == 0 or p != parts[i - 1])]
    return "$$" + " = ".join(([lhs] if lhs else []) + parts) + "$$"


# -- environments ------------------------------------------------------------------------------------

def _loader():
    return jinja2.FunctionLoader(lambda name: _read(name))


def _common_filters(env, fmt: str) -> None:
    env.filters["tex"] = escape_tex
    env.filters["md"] = lambda text: escape_md(text, line_start=False)  # templates never start a line with it
    env.filters["prose"] = prose_tex if fmt == "tex" else prose_md
    env.filters["display"] = display_tex if fmt == "tex" else display_md
    env.filters["code"] = code_tex if fmt == "tex" else (lambda text: "`" + str(text).replace("`", "") + "`")
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
    _common_filters(env, fmt)
    return env


def plain(text: str) -> str:
    """Catalog mini-markup reduced to plain text (for Mermaid labels and PDF bookmarks)."""
    return str(text).replace("$", "").replace("`", "").replace("**", "").replace('"', "'")


# -- the context ------------------------------------------------------------------------------------

@lru_cache(maxsize=8192)
def _share_text(q) -> str:
    from .format import percent

    return percent(q)


def _title_of(keys, names, family: str, t: dict) -> tuple[str, str]:
    """(title, about) in the catalog's mini-markup for an item with title ``keys``.

    Several keys with as many names are merged siblings (query, key, value):
    their titles are listed.  Two keys for one name are a chain (task head →
    classifier): "Task head: Classifier".  A key missing from the catalog
    shows the module's name.
    """
    blocks = t["blocks"]
    titles, abouts = [], []
    for key, name in zip(keys, list(names) + [names[-1]] * len(keys)):
        entry = blocks.get(f"{family}/{key}") or blocks.get(key)
        if entry is None:
            titles.append("`" + name.rsplit(".", 1)[-1] + "`")
        else:
            titles.append(entry["title"])
            if entry.get("about"):
                abouts.append(entry["about"])
    titles = list(dict.fromkeys(titles))
    sep = t["colon"] if len(names) == 1 and len(keys) == 2 else t["list_sep"]
    return sep.join(titles), t["sp"].join(dict.fromkeys(abouts))


_TITLES: dict = {}


def _title_cached(keys: tuple, names: tuple, family: str, t: dict) -> tuple[str, str]:
    """:func:`_title_of` for tuples, memoized per catalog."""
    key = (id(t), keys, names, family)
    hit = _TITLES.get(key)
    if hit is None or hit[0] is not t:
        if len(_TITLES) > 8192:
            _TITLES.clear()
        hit = _TITLES[key] = (t, _title_of(keys, names, family, t))
    return hit[1]


def _item_base(i, seen: set) -> tuple:
    """The language-independent part of an item's data; ``seen`` holds the title keys (and
    "per_head") already explained.

    Returns ``(head, repeated, body, children)``: the keys before the title, whether the item's
    about text was already given (then it is left out), the keys after it, the children's bases.
    """
    from .derivation import math_count
    from .format import thousands

    repeated = i.keys in seen  # explained once, at its first appearance
    seen.add(i.keys)
    explain_per_head = i.per_head and "per_head" not in seen
    if i.per_head:
        seen.add("per_head")
    chain = [i.formula]
    if i.collapsed:
        chain.append(i.collapsed)
    shown = i.untied if i.tied_to else i.count
    if i.substituted != str(shown):  # "H = 8192" needs no "= 8192" before "= 8,192"
        chain.append(i.substituted)
    chain.append(math_count(shown))
    total_chain = [i.total_formula, i.total_substituted, math_count(i.total)] if i.repeat_value != 1 \
        or i.repeat != 1 else []
    head = {"path": i.path, "block_path": i.block_path, "names": list(i.names), "keys": list(i.keys)}
    body = {
        "depth": i.depth, "leaf": i.leaf, "multiplicity": i.multiplicity,
        "repeat": "" if i.repeat == 1 else _latex(i.repeat), "repeat_value": i.repeat_value,
        "copies": "" if i.copies == 1 else _latex(i.copies), "copies_value": i.copies_value,
        "shape": i.shape, "shape_values": i.shape_values,
        "formula": i.formula, "collapsed": i.collapsed or "", "substituted": i.substituted,
        "count": thousands(i.count), "count_math": math_count(i.count),
        "total_formula": i.total_formula, "total_substituted": i.total_substituted,
        "total": thousands(i.total), "total_math": math_count(i.total),
        "contribution": thousands(i.contribution), "share": _share_text(i.share),
        "tied_to": i.tied_to or "", "untied": thousands(i.untied), "trainable": i.trainable,
        "per_head": i.per_head, "explain_per_head": explain_per_head, "cancels": i.cancels, "chain": chain,
        "total_chain": total_chain,
    }
    return head, repeated, body, [_item_base(c, seen) for c in i.children]


def _item_lang(base, i, d, t) -> dict:
    """An item as plain data: its base (:func:`_item_base`) with the title and about of ``t``."""
    head, repeated, body, children = base
    title, about = _title_cached(i.keys, i.names, d.family, t)
    return {**head, "title": title, "about": "" if repeated else about, **body,
            "children": [_item_lang(b, c, d, t) for b, c in zip(children, i.children)]}


def _latex(expr) -> str:
    from .derivation import latex

    return latex(expr)


_CONTEXTS: dict = {}
#: how many documents' data (model × language) :func:`context` keeps for the next format
_KEEP = 8


def context(m, lang: str = "en", title: str | None = None) -> dict:
    """The plain data a template sees: ``doc`` (the derivation), ``t`` (the catalog), ``lang``, ``title``.

    Plain means strings, numbers, booleans, lists and dicts: no SymPy object
    reaches a template (a sandboxed template could call its methods).
    """
    from .derivation import derive

    d = derive(m)
    key = (id(d), lang)
    doc = _CONTEXTS.get(key)
    if doc is None or doc[0] is not d:
        while len(_CONTEXTS) >= _KEEP:  # the oldest go: a run over many models need not keep every document
            del _CONTEXTS[next(iter(_CONTEXTS))]
        doc = _CONTEXTS[key] = (d, _doc(d, lang))
    return {"doc": doc[1], "t": catalog(lang), "lang": lang, "title": title, "model_name": d.name}


_BASES: dict = {}


def _base(d) -> tuple[list, list]:
    """What the documents of ``d`` in every language share: the items' and summary rows' data
    without their titles (see :func:`_item_base`), computed once per derivation."""
    from .format import thousands

    hit = _BASES.get(id(d))
    if hit is None or hit[0] is not d:
        while len(_BASES) >= _KEEP:
            del _BASES[next(iter(_BASES))]
        seen: set = set()
        items = [_item_base(s, seen) for s in d.sections]
        rows = [({"level": row.level, "path": row.path, "names": list(row.names)},
                 {"repeat": row.repeat, "repeat_value": row.repeat_value, "shape": row.shape,
                  "shape_values": row.shape_values, "formula": row.formula, "count": thousands(row.count),
                  "share": _share_text(row.share), "tied_to": row.tied_to or "", "trainable": row.trainable})
                for row in d.summary]
        hit = _BASES[id(d)] = (d, items, rows)
    return hit[1], hit[2]


def _doc(d, lang: str) -> dict:
    from .derivation import math_count
    from .format import thousands

    t = catalog(lang)
    other = "zh" if lang == "en" else "en"
    bases, rows = _base(d)
    sections = [_item_lang(b, i, d, t) for b, i in zip(bases, d.sections)]
    summary = []
    for row, (head, body) in zip(d.summary, rows):
        name_title, _ = _title_cached(row.keys, row.names, d.family, t)
        summary.append({**head, "title": name_title, **body})
    chart = [{"title": s["title"], "label": plain(s["title"]), "count": c.contribution, "share": s["share"],
              "share_number": s["share"][:-1]}
             for s, c in zip(sections, d.sections) if c.contribution > 0]
    p = d.proof
    proof = {
        "invariant": p.invariant, "has_heads": p.has_heads,
        "per_head": [{"lhs": lhs, "rhs": rhs, "paths": list(paths)} for lhs, rhs, paths in p.per_head],
        "written": p.written, "closed": p.closed, "derivative": p.derivative, "dependence": p.dependence or "",
        "conditions": [{"latex": c[0], "text": c[1] if lang == "en" else c[2]} for c in p.conditions],
        "heads": [str(a) for a in p.heads], "totals": [thousands(n) for n in p.totals],
        "counterexample": ([{"A": str(a), "total": thousands(n)} for a, n in p.counterexample]
                           if p.counterexample else []),
        "counterexample_source": p.counterexample_source,
        "counterexample_values": [{"symbol": k, "value": v} for k, v in p.counterexample_values],
        "fixed_ratio": None if p.fixed_ratio is None else {
            **{k: v for k, v in p.fixed_ratio.items() if k != "condition"},
            "condition": {"latex": p.fixed_ratio["condition"][0],
                          "text": p.fixed_ratio["condition"][1 if lang == "en" else 2]}},
    }
    notes = []
    for note in d.notes:
        a = note.article
        notes.append({
            "key": a.key, "file": a.file, "title": a.title, "about": getattr(a, lang),
            "preset": a.preset, "accounting": getattr(a, f"accounting_{lang}"),
            "claims": [{"what": getattr(c.claim, lang), "claimed": c.claimed_text, "right": c.right_text,
                        "status": c.status, "why": getattr(c.claim, f"why_{lang}")} for c in note.claims],
            "wrong": [{"what": getattr(c.claim, lang), "claimed": c.claimed_text, "right": c.right_text,
                       "why": getattr(c.claim, f"why_{lang}")} for c in note.wrong],
            "remarks": [r[0] if lang == "en" else r[1] for r in a.remarks],
        })
    related = [{**r, "accounting": r[f"accounting_{lang}"], "preset_total": thousands(r["preset_total"]),
                "total": thousands(r["total"]), "difference": thousands(r["difference"])} for r in d.related]
    largest = None
    if d.largest is not None:
        lt, _ = _title_of(d.largest.keys, d.largest.names, d.family, t)
        largest = {"title": lt, "names": list(d.largest.names), "share": _share_text(d.largest.share),
                   "contribution": thousands(d.largest.contribution)}
    biggest = max(d.sections, key=lambda s: s.contribution)
    doc = {
        "name": d.name, "family": d.family, "family_title": d.family_title.get(lang, d.family),
        "preset": d.preset or "", "preset_title": (d.preset_title or {}).get(lang, ""),
        "changes": [{"key": k, "before": b, "after": a} for k, b, a in d.changes],
        "head": d.head or "",
        "symbols": [{"name": s["name"], "latex": s["latex"], "meaning": s[lang], "value": s["value"],
                     "value_latex": s["value_latex"]} for s in d.symbols],
        "switch_names": [s["name"] for s in d.switches],
        "switches": [{"name": s["name"], "value": s["value"], "meaning": s[lang] or s[other] or s["name"]}
                     for s in d.switches],
        "sections": sections, "summary": summary, "chart": chart,
        "total": thousands(d.total), "total_math": math_count(d.total),
        "trainable": thousands(d.trainable), "trainable_math": math_count(d.trainable),
        "frozen": thousands(d.total - d.trainable), "all_trainable": d.total == d.trainable,
        "trainable_share": _share_text(__import__("sympy").Rational(d.trainable, d.total)),
        "closed_formula": d.closed_formula, "closed_substituted": d.closed_substituted,
        "proof": proof, "notes": notes, "related": related, "largest": largest,
        "biggest": {"title": _title_of(biggest.keys, biggest.names, d.family, t)[0],
                    "share": _share_text(biggest.share)},
        "outline": [dict(o, children=[dict(c, title=_title_of(c["keys"], c["names"], d.family, t)[0])
                                      for c in o["children"]]) for o in d.outline],
        "numbers": {o["id"]: o["number"] for o in d.outline},
    }
    return doc


# -- render -------------------------------------------------------------------------------------------------

def _html(m, lang, title):
    try:
        module = importlib.import_module("symparams.html")
    except ModuleNotFoundError:
        module = None
    render_html = getattr(module, "render_html", None)
    if render_html is None:
        raise SymparamsError("html documents are not available in this version (use --format md or tex)")
    return render_html(m, lang=lang, title=title)


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
        return _html(m, lang, title)
    ctx = context(m, lang, title)
    if template is not None:
        return _user_template(template, "tex" if format == "tex" else "md", ctx)
    env = latex_environment() if format == "tex" else markdown_environment()
    return env.get_template(TEMPLATES[format]).render(**ctx, format=format)
