"""The catalogs' mini-markup: ``$math$``, ```code```, ``**bold**`` and ``[[placeholders]]``.

Catalog strings (``templates/i18n/*.json``) are written once and shown in
every format; this module is their one renderer.  A string is parsed once
into a program of literal pieces and holes (:func:`_program`), then run with
the values for the format asked for.  Values filling a hole in prose are user
text, escaped for the format; math passes through untouched.

>>> prose_tex("**[[model]]** has $n \\cdot d$ numbers", model="a_b")
'\\textbf{a\\_\\allowbreak{}b} has $n \\cdot d$ numbers'
>>> prose_md("**[[model]]** has $n \\cdot d$ numbers", model="a_b")
'**a\\_b** has $n \\cdot d$ numbers'
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..core.errors import SymparamsError
from .escape import code_tex, escape_md, escape_tex

_SEGMENT = re.compile(r"(\$[^$]+\$|`[^`]+`|\*\*[^*]+\*\*)")
_HOLE = re.compile(r"\[\[(\w+)\]\]")


def _fill(text: str, values: dict, escape) -> str:
    def hole(mo):
        key = mo.group(1)
        if key not in values:
            raise SymparamsError(f"catalog string needs a value for [[{key}]]: {text[:60]!r}")
        return escape(values[key])
    return _HOLE.sub(hole, text)


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


def plain(text: str) -> str:
    """Catalog mini-markup reduced to plain text (for Mermaid labels and PDF bookmarks)."""
    return str(text).replace("$", "").replace("`", "").replace("**", "").replace('"', "'")
