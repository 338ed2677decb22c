"""Run untrusted work (a user's template) in a forked child with bounded time, memory and output.

Jinja's sandbox stops a template from reaching Python's internals, but not
from asking for a 1 GB string (``"x".center(10**9)``, ``a ~ a ~ a``, ``"%*d"``)
or a big-integer power that no signal can interrupt.  A child process can be
bounded where the interpreter cannot: its address space is capped with
``RLIMIT_AS``, its CPU time with ``RLIMIT_CPU``, and the parent kills it at
the deadline and reads at most the allowed output.  The parent never grows.

Where ``fork`` is missing (Windows), the work runs in this process unbounded;
without ``/proc`` (macOS) memory is not capped.
"""

from __future__ import annotations

import math
import os
import resource
import select
import signal
import time
from collections.abc import Callable

from ..core.errors import SymparamsError

_OK, _ERROR = b"o", b"e"


def run_bounded(produce: Callable[[], str], *, seconds: float, memory_bytes: int, output_bytes: int) -> str:
    """``produce()``, run in a child process; a :class:`SymparamsError` if it breaks a bound or raises one.

    ``produce`` may raise :class:`SymparamsError`; its message is raised
    again here.  Any other exception becomes a one-line error naming it.
    """
    if not hasattr(os, "fork"):
        return produce()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns
        os.close(read_end)
        _child(produce, write_end, seconds, memory_bytes, output_bytes)
    os.close(write_end)
    try:
        reply = _collect(read_end, seconds, output_bytes)
    finally:
        os.close(read_end)
        killed = _reap(pid)
    if reply[:1] == _OK:
        return reply[1:].decode("utf-8", "surrogatepass")
    if reply[:1] == _ERROR:
        raise SymparamsError(reply[1:].decode("utf-8", "replace"))
    if killed == signal.SIGXCPU:
        raise SymparamsError(f"it ran for more than {seconds:g} s")
    raise SymparamsError(f"it stopped without an answer (more than {memory_bytes >> 20} MiB of memory?)")


def _collect(fd: int, seconds: float, output_bytes: int) -> bytes:
    """Everything the child writes, until it closes its end; an error past the deadline or the size."""
    deadline = time.monotonic() + seconds
    chunks, size = [], 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise SymparamsError(f"it ran for more than {seconds:g} s")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > output_bytes + 1 + 4 * 1024:  # the status byte and an error message's worth
            raise SymparamsError(f"the output is over {output_bytes >> 20} MiB")


def _reap(pid: int) -> int:
    """Kill the child if it still runs and wait for it; the signal that ended it, or 0."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


def _child(produce, fd: int, seconds: float, memory_bytes: int, output_bytes: int) -> None:
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        _lower_limit(resource.RLIMIT_CPU, math.ceil(seconds) + 1)
        if (size := _address_space()) is not None:
            _lower_limit(resource.RLIMIT_AS, size + memory_bytes)
        reply = _OK + _answer(produce, memory_bytes, output_bytes)
    except SymparamsError as exc:
        reply = _ERROR + str(exc).encode("utf-8", "replace")
    except MemoryError:
        reply = _ERROR + f"it needs more than {memory_bytes >> 20} MiB of memory".encode()
    except BaseException as exc:  # one line for the parent, whatever the user's code did
        reply = _ERROR + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
    try:
        _write_all(fd, reply)
        status = 0
    finally:
        os._exit(status)


def _answer(produce, memory_bytes: int, output_bytes: int) -> bytes:
    text = produce()
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > output_bytes:
        raise SymparamsError(f"the output is over {output_bytes >> 20} MiB")
    return data


def _lower_limit(kind: int, value: int) -> None:
    """Set both limits of ``kind`` to ``value``, or leave them where they are already lower."""
    _, hard = resource.getrlimit(kind)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (value, value))


def _address_space() -> int | None:
    """This process's virtual memory size in bytes (a forked child starts there); None without /proc."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
