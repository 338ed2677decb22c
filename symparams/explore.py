"""Inverse solving and sweeps (issue 5). Placeholder until implemented."""

from __future__ import annotations

from .errors import SymparamsError


def cmd_solve(m, args) -> None:
    raise SymparamsError("solve is not available yet")


def cmd_sweep(m, args) -> None:
    raise SymparamsError("sweep is not available yet")
