"""Display math that fits the page: LaTeX chains broken into lines, table cells that may wrap."""

from __future__ import annotations

import re
from functools import lru_cache

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


#: fixed delimiter sizes by level: plain, \bigl, \Bigl, \biggl, \Biggl
_SIZES = ("", r"\bigl", r"\Bigl", r"\biggl", r"\Biggl")
_LEFT = re.compile(r"\\left([(\[])|\\right([)\]])")


def _breakable(s: str) -> str:
    """``\\left( … \\right)`` made into fixed-size delimiters, so a line may end between them.

    Each pair is sized by what it holds: plain parentheses around plain
    terms, ``\\Bigl`` around a fraction, and one size more than the largest
    pair inside, so nesting stays visible.
    """
    #: stack: (index in out of an opening, level of the largest pair inside it, index where its body starts)
    out, stack = [], []
    pos = 0
    for mo in _LEFT.finditer(s):
        out.append(s[pos:mo.start()])
        pos = mo.end()
        if mo.group(1):
            stack.append((len(out), -1, len(out) + 1))
            out.append(mo.group(1))  # sized when its pair closes
            continue
        if not stack:  # unbalanced: leave it as it was
            out.append(mo.group(0))
            continue
        at, inner, body = stack.pop()
        level = inner + 1
        if r"\frac" in "".join(out[body:]):
            level = max(level, 2)
        level = min(level, len(_SIZES) - 1)
        out[at] = _SIZES[level] + out[at]
        out.append((_SIZES[level][:-1] + "r" if level else "") + mo.group(2))
        if stack:
            o_at, o_inner, o_body = stack[-1]
            stack[-1] = (o_at, max(o_inner, level), o_body)
    out.append(s[pos:])
    for at, _, _ in stack:  # an opening without its closing: keep \left
        out[at] = r"\left" + out[at]
    return "".join(out)


def _depths(s: str):
    """(index, brace depth, parenthesis depth) for every character of ``s``, the depths before it."""
    braces = parens = 0
    for i, c in enumerate(s):
        yield i, braces, parens
        if c == "{":
            braces += 1
        elif c == "}":
            braces -= 1
        elif braces == 0 and c in "([" and s[i - 1:i] != "\\":
            parens += 1
        elif braces == 0 and c in ")]" and s[i - 1:i] != "\\":
            parens -= 1


#: a parenthesized sum narrower than this (em) is never cut: ``(L - L_f)`` stays on one line
_SHORT_GROUP_EM = 8.0


def _split(s: str, ops=(" + ", " - "), depth: int = 0) -> list[str]:
    """``s`` cut before each operator in ``ops`` outside braces, ``depth`` parentheses deep
    (never inside a short parenthesized group)."""
    out, start = [], 0
    for i, braces, parens in _depths(s):
        if braces == 0 and parens == depth and i > start and any(s.startswith(op, i) for op in ops) \
                and (depth == 0 or not _in_short_group(s, i)):
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return [p.strip() for p in out if p.strip()]


def _in_short_group(s: str, i: int) -> bool:
    """Whether position ``i`` of ``s`` stands in a parenthesized group, with none inside it, narrower than
    :data:`_SHORT_GROUP_EM`."""
    opened = max(s.rfind("(", 0, i), s.rfind("[", 0, i))
    closes = [at for at in (s.find(")", i), s.find("]", i)) if at >= 0]
    if opened < 0 or not closes:
        return False
    closed = min(closes)
    if max(s.rfind(")", opened, i), s.rfind("]", opened, i)) >= 0 or \
            min((at for at in (s.find("(", i, closed), s.find("[", i, closed)) if at >= 0), default=closed) < closed:
        return False  # a group inside: the sum is long
    return math_width(s[opened:closed + 1]) < _SHORT_GROUP_EM


_PLUS = (" + ", " - ")
_TIMES = (r" \times ", r" \cdot ")


def _pieces(s: str) -> list[str]:
    """``s`` cut at its outermost + and −, else at those one parenthesis deeper (a long sum in
    parentheses is broken inside them, ``L \\cdot (a + b)`` never between ``L`` and its sum), and
    only where no sum is left at its outermost × and · (one piece if nothing cuts it)."""
    deepest = max((p for _, b, p in _depths(s) if b == 0), default=0)
    for ops in (_PLUS, _TIMES):
        for depth in range(deepest + 1):
            pieces = _split(s, ops, depth)
            if len(pieces) > 1:
                return pieces
    return [s]


def _atoms(s: str, width: float) -> list[str]:
    """``s`` cut at its outermost operators (:func:`_pieces`), and each piece wider than ``width``
    cut again, deeper: the pieces lines are made of."""
    if math_width(s) <= width:
        return [s]
    pieces = _pieces(s)
    if len(pieces) == 1:
        return pieces
    return [atom for piece in pieces for atom in _atoms(piece, width)]


def _pack(s: str, width: float) -> list[str]:
    """``s`` (delimiters already fixed-size) in lines no wider than ``width`` where it can be:
    its pieces (:func:`_atoms`) set one after the other, a new line where the next would not fit."""
    lines: list[str] = []
    for atom in _atoms(s, width):
        if lines and math_width(lines[-1] + " " + atom) <= width:
            lines[-1] = lines[-1] + " " + atom
        else:
            lines.append(atom)
    return lines


#: the penalty of a line break after a + or − in a table cell, by how deep in parentheses it stands
_CELL_BREAKS = (r"\allowbreak ", r"\penalty300 ", r"\penalty600 ", r"\penalty900 ")


@lru_cache(maxsize=8192)
def inline_tex(s: str) -> str:
    """Math for a table cell: plain delimiters, and a break allowed after each + and −, the more
    willingly the fewer parentheses it stands in (``\\allowbreak`` outermost, then ``\\penalty300``, …).

    A cell that sets ``\\binoppenalty`` high breaks after a ``\\cdot`` only where no sum is left.
    """
    for a, b in ((r"\left(", "("), (r"\right)", ")"), (r"\left[", "["), (r"\right]", "]")):
        s = s.replace(a, b)
    out, last = [], 0
    for i, braces, parens in _depths(s):
        if braces == 0 and i > 0 and (s.startswith(" + ", i) or s.startswith(" - ", i)):
            out.append(s[last:i + 2])
            out.append(_CELL_BREAKS[min(parens, len(_CELL_BREAKS) - 1)])
            last = i + 3
    out.append(s[last:])
    return "".join(out)


def _lines(s: str, width: float) -> list[str]:
    """``s`` broken into lines no wider than ``width`` em: at its outermost + and −, else × and ·,
    else inside its parentheses (whose sizes are then fixed)."""
    if math_width(s) <= width:
        return [s]
    return _pack(_breakable(s), width)


def _rows(parts: tuple, lhs: str, width: float) -> list[str] | None:
    """The rows of an aligned chain ``lhs = parts[0] = …`` (``&=`` before each part, ``&\\quad``
    before each continued line); None when the chain fits on one line."""
    chain = " = ".join(([lhs] if lhs else []) + list(parts))
    if math_width(chain) <= width:
        return None
    rows = []
    indent = math_width(lhs) + 1.4 if lhs else 0.0  # every row starts where the first part starts, after "lhs ="
    for k, part in enumerate(parts):
        first = k == 0 and not lhs
        lines = _lines(part, width - (0 if first else max(indent, 1.4)) - 1.2)
        for j, line in enumerate(lines):
            if j > 0:
                rows.append("&\\quad " + line)
            elif first:
                rows.append("&" + line)
            else:
                rows.append("&= " + line)
    if lhs:
        rows[0] = lhs + " " + rows[0]
    return rows


def _dedup(parts) -> tuple:
    return tuple(p for i, p in enumerate(parts) if p and (i == 0 or p != parts[i - 1]))


def display_tex(parts, lhs: str = "") -> str:
    """A chain ``lhs = parts[0] = parts[1] = …`` as LaTeX display math that fits the line.

    Short chains are one ``\\[ … \\]``; long ones an ``align*`` with one
    part per line, a long part broken after its terms.
    """
    return _display_tex(_dedup(list(parts)), lhs)


@lru_cache(maxsize=4096)
def _display_tex(parts: tuple, lhs: str) -> str:
    rows = _rows(parts, lhs, _LINE_EM)
    if rows is None:
        return "\\[\n  " + " = ".join(([lhs] if lhs else []) + list(parts)) + "\n\\]"
    return "\\begin{align*}\n  " + " \\\\\n  ".join(rows) + "\n\\end{align*}"


#: the Markdown page's line, in em of its display math (GitHub's column is about 830 px, its math ~19 px an em)
MD_LINE_EM = 36.0


def display_md(parts, lhs: str = "") -> str:
    """A chain ``lhs = parts[0] = …`` as GitHub display math: one ``$$…$$`` line when it is short,
    else a ``$$`` block holding an ``aligned`` environment broken as :func:`display_tex` breaks it
    (one row a line, each ``\\\\`` ending its line; no row starts with a Markdown marker)."""
    return _display_md(_dedup(list(parts)), lhs)


@lru_cache(maxsize=4096)
def _display_md(parts: tuple, lhs: str) -> str:
    rows = _rows(parts, lhs, MD_LINE_EM)
    if rows is None:
        return "$$" + " = ".join(([lhs] if lhs else []) + list(parts)) + "$$"
    return "$$\n\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}\n$$"
