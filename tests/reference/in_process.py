"""``python -m symparams ARGS`` run in the tests' own process: what a bad input does to the command line needs no
process of its own.

A bad size, an unknown model, a misspelt option or an unwritable output is
found by argument parsing and the library's checks, and answered with one
line on stderr and a status; a process of its own adds nothing to that
answer but its start-up.  :func:`run_in_process` runs ``symparams/__main__.py``
(``sys.exit(main())``) here, set up as ``python -m symparams`` would set up
its process:

* ``sys.argv`` as Python decodes its command line (:func:`os.fsdecode`);
* the case's working directory, which ``-m`` also puts first on ``sys.path``;
* stdin empty (``/dev/null``); stdout and stderr text streams over byte
  buffers, with the encoding and error handlers this interpreter gave its own
  standard streams (the locale's: what a child process would get);
* the end of a script as the interpreter ends it: ``SystemExit``'s code
  (``None`` 0, a number itself, anything else printed and 1), an uncaught
  exception's traceback printed and status 1, and the final flush of stdout
  (status 120 when it fails).

The promise's bounds are checked here too, differently from a process:

* time: at the deadline ``SIGALRM`` raises :class:`CaseDeadline` (a
  ``BaseException``, which no ``except Exception`` swallows) in the case's
  code; the case is then reported as timed out, as a killed process is.
  Signals reach only the main thread, so only there is a case interrupted;
  elsewhere its time is still measured and a slow case still fails;
* memory: how far the process's peak resident set size rose above its size
  when the case began (Linux's high-water mark, ``VmHWM``, reset for the case
  through ``/proc/self/clear_refs``), as a process reports its own peak: what
  Python objects and C libraries (big integers, the allocator's arenas) took.
  Memory an earlier case freed but the allocator kept for reuse is not
  counted again, so the figure can be lower than a fresh process's by what the
  allocator holds; a bomb (hundreds of MB) still shows.  (:mod:`tracemalloc`,
  the other way to measure it, made the table's in-process cases four times
  slower.)  A user's template runs in a bounded child process
  (``documents/bounded.py``) in either case.

What a case shares with the other cases of this process and a fresh one would
not have: warm caches (the same model built, the same template compiled, in
an earlier case).  A case that needs a cold process, a signal, a fresh
environment or a bound only a process can enforce (a memory bomb, a
3,000-digit size) is run by :func:`tests.reference.cli_runner.run_forked`;
the bad-input table also runs a sample of its in-process cases forked and
checks that both give the same answer.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import signal
import sys
import threading
import time
import traceback

from tests.reference.cli_runner import Outcome, text


class CaseDeadline(BaseException):
    """The case ran past its deadline (raised by ``SIGALRM`` in the case's code)."""


def run_in_process(args, cwd, seconds: float, *, traced: bool = True) -> Outcome:
    """``python -m symparams *args`` in ``cwd``, run in this process; stopped at ``seconds`` where a signal can
    reach it.  ``peak_kb`` is how far the resident set rose above its size at the start (kB), unless not
    ``traced``: then ``None``."""
    import symparams.cli  # noqa: F401 (imported before ``main`` runs, as by ``python -m``: not the case's memory)

    out, err = io.BytesIO(), io.BytesIO()
    stdout = _text_stream(out, sys.__stdout__)
    stderr = _text_stream(err, sys.__stderr__)
    started = time.monotonic()
    with _as_main(args, cwd, stdout, stderr), _deadline(seconds), _resident_peak(traced) as peak:
        code, timed_out = _run_main(stderr)
    code = _flushed(code, stdout, stderr)
    return Outcome(code, out.getvalue(), err.getvalue(), time.monotonic() - started, timed_out, peak())


def command_here(*args, cwd=None, seconds: float = 120) -> tuple[int, str, str]:
    """``python -m symparams ARGS`` run in this process (not traced) in ``cwd`` (the current folder): its status and
    its stdout and stderr as text, as :func:`tests.reference.cli_runner.command` gives them for a forked run.  For
    cases that need no process of their own, where a process would pay for importing torch again."""
    outcome = run_in_process([str(a) for a in args], cwd or os.getcwd(), seconds, traced=False)
    assert not outcome.timed_out, f"symparams {args} still running after {seconds} s"
    return outcome.code, text(outcome.out), text(outcome.err)


def _text_stream(buffer, like) -> io.TextIOWrapper:
    return io.TextIOWrapper(buffer, encoding=like.encoding, errors=like.errors, newline="\n")


def _run_main(stderr) -> tuple[int, bool]:
    """The status ``runpy`` running ``symparams.__main__`` ends with, and whether the deadline stopped it."""
    try:
        runpy.run_module("symparams", run_name="__main__", alter_sys=False)
    except SystemExit as exc:
        return _exit_status(exc.code, stderr), False
    except CaseDeadline:
        return -signal.SIGALRM, True
    except BaseException:  # noqa: BLE001 (what the interpreter does with an uncaught exception)
        traceback.print_exc(file=stderr)
        return 1, False
    return 0, False


def _exit_status(code, stderr) -> int:
    """The process status ``sys.exit(code)`` gives, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=stderr)
    return 1


def _flushed(code: int, stdout, stderr) -> int:
    """The interpreter's last act: flush stdout (a failure there makes the status 120) and stderr."""
    try:
        stdout.flush()
    except Exception:  # noqa: BLE001 (Python reports any failure of that flush the same way)
        code = 120
    stderr.flush()
    return code


@contextlib.contextmanager
def _as_main(args, cwd, stdout, stderr):
    """This process set up as ``python -m symparams ARGS`` in ``cwd``; everything restored afterwards."""
    saved = sys.argv, sys.path[0], sys.stdin, sys.stdout, sys.stderr, os.getcwd()
    os.chdir(cwd)
    sys.argv = ["symparams", *[os.fsdecode(os.fsencode(a)) for a in args]]
    sys.path[0] = os.getcwd()
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding=sys.__stdin__.encoding if sys.__stdin__ else "utf-8")
    sys.stdout, sys.stderr = stdout, stderr
    try:
        yield
    finally:
        sys.argv, sys.path[0], sys.stdin, sys.stdout, sys.stderr, cwd = saved
        os.chdir(cwd)


@contextlib.contextmanager
def _deadline(seconds: float):
    """``SIGALRM`` after ``seconds`` raises :class:`CaseDeadline` in the main thread; nothing elsewhere."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise CaseDeadline

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _resident_peak(measured: bool):
    """``peak()``: how far (kB) the resident set size rose within the block above its size at the start."""
    if not measured:
        yield lambda: None
        return
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # the high-water mark starts again from the present size
    start = _status_kb("VmRSS")
    result = {}
    try:
        yield lambda: result["peak_kb"]
    finally:
        result["peak_kb"] = max(0, _status_kb("VmHWM") - start)


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")
