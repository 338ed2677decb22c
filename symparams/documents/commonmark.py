"""Bold that CommonMark closes: a ``**`` run ends bold only where the rules of flanking allow it.

CommonMark lets ``**`` close bold only when it is *right-flanking*: not
after whitespace, and, when it comes after punctuation, only before
whitespace, punctuation or the end of the line.  Chinese text has no space
between words, so a bold title that ends with a full-width parenthesis runs
straight into the next word: in ``**嵌入层（Embedding）**总共`` the ``**`` after
``）`` comes before ``总`` and does not close, and GitHub shows the asterisks.
(The same holds for an opening ``**`` before punctuation after a letter.)

:func:`closing_strong` moves the punctuation at the edge of such a bold span
outside it: a parenthesised group whole (``**嵌入层**（Embedding）总共``), other
punctuation as a run.  The words stay the same; only the bold's extent
changes, and only where CommonMark would otherwise show the asterisks.
Code spans, inline math and fenced blocks are left as they are.

>>> closing_strong("**嵌入层（Embedding）**总共")
'**嵌入层**（Embedding）总共'
>>> closing_strong("**Embeddings (V + P)** total")  # a space after it: already closes
'**Embeddings (V + P)** total'
>>> closing_strong("注意**：重要**的")
'注意：**重要**的'
>>> closing_strong("**`layers.*`**总共")  # a code span is never cut: a space, as beside Latin text
'**`layers.*`** 总共'
"""

from __future__ import annotations

import re
import unicodedata

_PAIRS = {"）": "（", ")": "(", "」": "「", "】": "【", "》": "《", "]": "["}
#: what is not bold text: code spans and inline math, kept as they are
_PROTECTED = re.compile(r"(`+).*?\1|\$[^$\n]*\$")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")


def closing_strong(markdown: str) -> str:
    """``markdown`` with each bold span's edge punctuation moved outside it where CommonMark would not close it."""
    out, fenced = [], False
    for line in markdown.split("\n"):
        if line.startswith("```") or line == "$$":
            fenced = not fenced
            out.append(line)
        else:
            out.append(line if fenced else _line(line))
    return "\n".join(out)


#: what a code span or inline math is masked with: no space, no punctuation, no text a bold could hold
_MASK = "\ue000"


def _line(line: str) -> str:
    masked = _PROTECTED.sub(lambda m: _MASK * len(m.group(0)), line)
    for m in reversed(list(_STRONG.finditer(masked))):
        start, end = m.span()
        before = line[start - 1] if start else " "
        after = line[end] if end < len(line) else " "
        # a side that is code or math (its backtick or dollar is punctuation) is never cut: where a word runs
        # into it, a space goes between them, as Chinese text puts one beside Latin text
        code_first, code_last = masked[start + 2] == _MASK, masked[end - 3] == _MASK
        lead, body, trail = _edges(line[start + 2:end - 2], " " if code_first else before, " " if code_last else after)
        lead = " " if code_first and _joined(before) else lead
        trail = " " if code_last and _joined(after) else trail
        line = line[:start] + lead + "**" + body + "**" + trail + line[end:]
    return line


def _joined(ch: str) -> bool:
    """Whether ``ch`` runs into a bold span beside it (neither a space nor punctuation)."""
    return not (_space(ch) or _punctuation(ch))


def _edges(content: str, before: str, after: str) -> tuple[str, str, str]:
    """``content`` split into (punctuation to put before the span, the bold, punctuation to put after it); any
    space next to what moves goes with it, since bold cannot end or begin with a space."""
    lead = trail = ""
    if _punctuation(content[-1]) and not (_space(after) or _punctuation(after)):
        kept = content[:_trailing(content)]
        if kept.strip():
            content, trail = kept.rstrip(), content[len(kept.rstrip()):]
    if _punctuation(content[0]) and not (_space(before) or _punctuation(before)):
        cut = 0
        while cut < len(content) and _punctuation(content[cut]):
            cut += 1
        if content[cut:].strip():
            lead, content = content[:len(content) - len(content[cut:].lstrip())], content[cut:].lstrip()
    return lead, content, trail


def _trailing(content: str) -> int:
    """Where the punctuation at the end of ``content`` begins: a closing bracket's whole group, or the run."""
    closing = content[-1]
    if closing in _PAIRS:
        opening = content.rfind(_PAIRS[closing])
        if opening >= 0:
            return opening
    cut = len(content)
    while cut > 0 and _punctuation(content[cut - 1]):
        cut -= 1
    return cut


def _punctuation(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def _space(ch: str) -> bool:
    return ch in "\t\n\f\r" or unicodedata.category(ch) == "Zs"
