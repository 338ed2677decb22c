r"""The catalogs' mini-markup: ``$math$``, ```code```, ``**bold**`` and ``[[placeholders]]``.

Catalog strings (``templates/i18n/*.json``) are written once and shown in
every format; this module is their one renderer.  A string is parsed once
into a program of literal pieces, holes, math, code and bold
(:func:`_program`), then run with the values for the format asked for.
Values filling a hole in prose are user text, escaped for the format; math
passes through untouched.

>>> print(prose_tex("**[[model]]** has $n \\cdot d$ numbers", model="a_b"))
\textbf{a\_\allowbreak{}b} has $n \cdot d$ numbers
>>> print(prose_md("**[[model]]** has $n \\cdot d$ numbers", model="a_b"))
**a\_b** has $n \cdot d$ numbers
>>> print(prose_html("**[[model]]** has $n \\cdot d$ numbers", model="<x>"))
<strong>&lt;x&gt;</strong> has <i class="m">n · d</i> numbers
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..core.errors import SymparamsError
from .escape import code_md, code_tex, escape_html, escape_md, escape_tex

FORMATS = ("tex", "md", "html")
_SEGMENT = re.compile(r"(\$[^$]+\$|`[^`]+`|\*\*[^*]+\*\*)")
_HOLE = re.compile(r"\[\[(\w+)\]\]")


@lru_cache(maxsize=2048)
def _program(text: str) -> tuple:
    """``text`` parsed once: ``("text", s)``, ``("hole", name)``, ``("math", inner)``, ``("code", inner)``
    and ``("bold", program)`` steps (math and code keep their holes, filled when run)."""
    steps: list = []
    for seg in _SEGMENT.split(text):
        if not seg:
            continue
        if seg.startswith("$") and seg.endswith("$") and len(seg) > 1:
            steps.append(("math", seg[1:-1]))
        elif seg.startswith("`") and seg.endswith("`"):
            steps.append(("code", seg[1:-1]))
        elif seg.startswith("**") and seg.endswith("**"):
            steps.append(("bold", _program(seg[2:-2])))
        else:
            parts = _HOLE.split(seg)
            steps += [("text" if i % 2 == 0 else "hole", part) for i, part in enumerate(parts) if part or i % 2]
    return tuple(steps)


#: a size symbol as the code's plain texts write it: H, 2B, L_d, r, r_d
_SIZE = r"\d*[A-Z](?:_[a-z]+)?|r(?:_d)?"
#: a formula in sizes (``r·H``, ``E ≠ H``, ``L - L_f``) or a lone subscripted size (``L_d``)
_FORMULA = re.compile(rf"(?<![\w`$])(?:(?:{_SIZE})(?:\s*[·=≠+\-/]\s*(?:{_SIZE}))+|[A-Z]_[a-z]+|r_d)(?![\w`$])", re.ASCII)
#: a config field's or a module's name: ``type_vocab_size``, ``ln_attn``
_IDENTIFIER = re.compile(r"(?<![\w`$])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w`$])", re.ASCII)


def marked_up(text: str) -> str:
    """A plain text of the code (a symbol's or a switch's meaning, which the command line prints as it is)
    in the mini-markup: its formulas in sizes as math, its field and module names as code.  A name too short
    to tell from a word (T5's ``wi``) the text writes as code itself; a code span stays as it is.

    >>> marked_up("decoder intermediate size = r_d·H (encoder_ffn_dim ≠ decoder_ffn_dim)")
    'decoder intermediate size = $r_{d} H$ (`encoder_ffn_dim` ≠ `decoder_ffn_dim`)'
    >>> marked_up("K and V have G heads (false: D = H/A), E ≠ H")
    'K and V have G heads (false: $D = H/A$), $E \\\\neq H$'
    """
    return "".join(piece if i % 2 else _IDENTIFIER.sub(lambda mo: f"`{mo.group(0)}`", piece)
                   for i, piece in enumerate(_split_formulas(text)))


def _split_formulas(text: str) -> list[str]:
    """``text`` cut into plain pieces and (at odd places) its formulas, already as ``$math$``."""
    out, at = [], 0
    for mo in _FORMULA.finditer(text):
        out += [text[at:mo.start()], f"${_as_math(mo.group(0))}$"]
        at = mo.end()
    return out + [text[at:]]


def _as_math(formula: str) -> str:
    math = re.sub(r"([A-Za-z])_([a-z]+)", r"\1_{\2}", formula)
    return re.sub(r"\s*·\s*", " ", math).replace("≠", r"\neq")


def _fill(text: str, values: dict, context: str, escape=str) -> str:
    def hole(mo):
        return escape(_value(values, mo.group(1), context))
    return _HOLE.sub(hole, text)


def _value(values: dict, name: str, context: str) -> str:
    if name not in values:
        raise SymparamsError(f"catalog string needs a value for [[{name}]]: {context[:60]!r}")
    return values[name]


#: per format: (literal text, a hole's value, math, code, bold) — each a function of the filled text
_EMIT = {
    "tex": (escape_tex, escape_tex, lambda m: f"${m}$", code_tex, lambda b: r"\textbf{" + b + "}"),
    "md": (str, lambda v: escape_md(v, line_start=False), lambda m: f"${m}$", code_md, lambda b: f"**{b}**"),
    "html": (lambda t: escape_html_text(t), lambda v: escape_html_text(v),
             lambda m: f'<i class="m">{_math_text(escape_html_text(m))}</i>',
             lambda c: f"<code>{escape_html_text(c)}</code>", lambda b: f"<strong>{b}</strong>"),
}


def _run(program: tuple, fmt: str, values: dict, context: str) -> str:
    text, hole, math, code, bold = _EMIT[fmt]
    out = []
    for kind, arg in program:
        if kind == "text":
            out.append(text(arg))
        elif kind == "hole":
            out.append(hole(_value(values, arg, context)))
        elif kind == "math":
            out.append(math(_fill(arg, values, context)))
        elif kind == "code":
            out.append(code(_fill(arg, values, context)))
        else:
            out.append(bold(_run(arg, fmt, values, context)))
    return "".join(out)


@lru_cache(maxsize=4096)
def _prose(text: str, fmt: str, values: tuple) -> str:
    return _run(_program(text), fmt, dict(values), text)


def prose(text, fmt: str, **values) -> str:
    """Catalog text in ``fmt`` (``tex``, ``md`` or ``html``), its ``[[holes]]`` filled with ``values``."""
    return _prose(str(text), fmt, tuple(sorted((k, str(v)) for k, v in values.items())))


def prose_tex(text, **values) -> str:
    return prose(text, "tex", **values)


def prose_md(text, **values) -> str:
    return prose(text, "md", **values)


def prose_html(text, **values) -> str:
    """Catalog text as HTML (escaped text, ``<i class="m">`` math, ``<code>``, ``<strong>``)."""
    return prose(text, "html", **values)


def escape_html_text(text: str) -> str:
    """HTML text outside attributes: ``&``, ``<`` and ``>`` escaped (quotes may stay)."""
    return escape_html(text, quote=False)


#: LaTeX math commands a browser shows as characters
_TEX = {r"\cdot": "·", r"\times": "×", r"\top": "⊤", r"\to": "→", r"\mid": "∣", r"\partial": "∂", r"\gamma": "γ",
        r"\beta": "β", r"\alpha": "α", r"\rho": "ρ", r"\leq": "≤", r"\geq": "≥", r"\neq": "≠", r"\approx": "≈",
        r"\lceil": "⌈", r"\rceil": "⌉", r"\left": "", r"\right": "", r"\,": " ", r"\;": " ", r"\ ": " "}


def _math_text(tex: str) -> str:
    """A catalog's inline LaTeX as HTML text: fractions as a/b, sub- and superscripts as tags."""
    tex = re.sub(r"\\(?:text|mathrm|operatorname)\{([^{}]*)\}", r"\1", tex)  # first: n_{\text{layer}}
    tex = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", tex)
    tex = re.sub(r"([_^])(?:\{([^{}]*)\}|(\w))",
                 lambda mo: f"<{'sup' if mo.group(1) == '^' else 'sub'}>{mo.group(2) or mo.group(3)}"
                            f"</{'sup' if mo.group(1) == '^' else 'sub'}>", tex)
    for k in sorted(_TEX, key=len, reverse=True):
        tex = tex.replace(k, _TEX[k])
    return tex.replace("{", "").replace("}", "")


def plain(text: str) -> str:
    """Catalog mini-markup reduced to plain text (for Mermaid labels and PDF bookmarks)."""
    return str(text).replace("$", "").replace("`", "").replace("**", "").replace('"', "'")
