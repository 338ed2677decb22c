"""One escape per target: user text made literal in LaTeX, Markdown and HTML.

Every name a user can choose (a preset, a config path, ``--title``) passes
through the escape of the format it lands in; math made by ``sympy.latex``
does not.

>>> print(escape_tex("100% #1 {x} $y$"))
100\\% \\#1 \\{x\\} \\$y\\$
>>> print(escape_md("$x$ _a_ #1"))
\\$x\\$ \\_a\\_ \\#1
>>> print(escape_html("<b> & co"))
&lt;b&gt; &amp; co
"""

from __future__ import annotations

import html
import re
from typing import Any

#: control characters (but tab, newline and return, which escapes turn into spaces): no format can show them,
#: and XeLaTeX stops on them, so every escape drops them
_CONTROL = {chr(c): "" for c in (*range(32), *range(127, 160)) if chr(c) not in "\t\n\r"}

_TEX_ESCAPES = {**_CONTROL,
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
#: every key is one character, so a translation table does what ``_TEX_RE.sub`` does, faster
_TEX_TABLE = str.maketrans(_TEX_ESCAPES)
_TEX_TABLE_NO_BREAKS = str.maketrans({**_TEX_ESCAPES, "_": r"\_"})
_CODE_TABLE = str.maketrans({**_TEX_ESCAPES, **{c: _TEX_ESCAPES.get(c, c) + r"\allowbreak{}" for c in ".-_/"}})


def escape_tex(text: Any, breaks: bool = True) -> str:
    """``text`` as literal LaTeX text: every special character replaced by its text command.

    ``breaks`` lets a line break after an underscore (documents); without it
    the text suits ``\\text{}`` in a notebook's math.
    """
    return str(text).translate(_TEX_TABLE if breaks else _TEX_TABLE_NO_BREAKS)


#: an option's hyphens: "-{}" keeps "--" two hyphens (never an en dash), and no break point
_OPTION_TABLE = str.maketrans({**_TEX_ESCAPES, "-": "-{}"})


def code_tex(text: Any) -> str:
    """``text`` in ``\\texttt``, escaped, with break points after ``.``, ``-``, ``_`` and ``/``; an option
    (``--lora-targets``) is one unbreakable box: broken after a hyphen it read as ``--`` and ``lora-`` on two
    lines, a reader could not tell which hyphens to type.

    >>> print(code_tex("memory --seq 512"))
    \\texttt{memory \\mbox{-{}-{}seq} 512}
    """
    words = str(text).split(" ")
    return r"\texttt{" + " ".join(r"\mbox{" + w.translate(_OPTION_TABLE) + "}" if w.startswith("-") and len(w) > 1
                                   else w.translate(_CODE_TABLE) for w in words) + "}"


def code_md(text: Any) -> str:
    """``text`` as Markdown inline code (a backtick inside would end it, so it is dropped)."""
    return "`" + str(text).translate(_CONTROL_TABLE).replace("`", "") + "`"


_MD_SPECIAL = set("\\`*_{}[]<>#+!|$~^&")
_MD_TABLE = str.maketrans({**_CONTROL, **{c: "\\" + c for c in _MD_SPECIAL}})
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


_CONTROL_TABLE = str.maketrans({**_CONTROL, "\r": " "})


def escape_html(text: Any, quote: bool = True) -> str:
    """``text`` as literal HTML (with ``quote``, quotes too, so it may stand in an attribute)."""
    return html.escape(str(text).translate(_CONTROL_TABLE), quote=quote)
