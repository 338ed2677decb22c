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
