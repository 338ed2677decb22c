"""The command line: ``symparams COMMAND ...``, a thin layer over the library.

Every problem with the input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import threading
from typing import Sequence

from ..core.errors import SymparamsError
from .commands import HANDLERS
from .parser import build_parser, command_named, joined_values


def main(argv: Sequence[str] | None = None) -> int:
    argv = joined_values(sys.argv[1:] if argv is None else argv)
    parser = build_parser(HANDLERS, only=command_named(argv))
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            raise SymparamsError(f"name a command: {', '.join(parser.commands)} (`symparams --help` says what each does)")
        with _terminated_on_sigterm():
            status = args.func(args)  # audit: 2 when the checkpoint disagrees with the formula
    except _Terminated:  # kill, timeout, a CI runner: the same clean stop as Ctrl-C
        print("symparams: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except SymparamsError as exc:
        print(f"symparams: error: {_clipped(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:  # Ctrl-C: no traceback, and no file half written (see cli.output)
        print("symparams: interrupted", file=sys.stderr)
        return 130
    return status if isinstance(status, int) else 0


def _clipped(message: str) -> str:
    """``message`` with any very long run of characters (a 100,000-character name the user typed, echoed back)
    cut to its start and its length, so the error stays one readable line."""
    return re.sub(r"[^\s'\"]{200,}", lambda m: f"{m[0][:60]}… ({len(m[0]):,} characters)", message)


class _Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C, so files being written are removed (see cli.output)."""


@contextlib.contextmanager
def _terminated_on_sigterm():
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
