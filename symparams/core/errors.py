"""The one exception type users see.

Every problem with user input (an unknown model, a size that is not a
positive integer, H not divisible by A, a malformed config.json, ...) raises
:class:`SymparamsError` with a one-line message naming the problem.  The
command line prints that line and exits with status 2.
"""

from __future__ import annotations


class SymparamsError(ValueError):
    """A problem with the input, described in one line."""

    def __init__(self, message: str):
        super().__init__(" ".join(printable(message).split()))


def printable(text) -> str:
    """``text`` safe for a terminal: control characters (escape sequences, bells, line breaks) become spaces."""
    return "".join(c if c.isprintable() else " " for c in str(text))


SymparamsError.__module__ = "symparams"  # tracebacks name it where users import it from
