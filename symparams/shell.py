"""The interactive shell (issue 5). Placeholder until implemented."""

from __future__ import annotations

from .errors import SymparamsError


def cmd_shell(m, args) -> None:
    raise SymparamsError("the shell is not available yet")
