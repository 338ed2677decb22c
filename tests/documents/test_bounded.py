"""The bounded child process that renders users' templates (symparams.documents.bounded)."""

import os
import resource
import time

import pytest

from symparams import SymparamsError
from symparams.documents.bounded import run_bounded

LIMITS = {"seconds": 3, "memory_bytes": 64 << 20, "output_bytes": 1 << 20}


def fail(exc):
    raise exc


def forever():
    while True:
        pass


def test_the_answer_comes_back_whole():
    text = "ünïcode \udc80 " + "x" * 300_000  # several pipe buffers, and a lone surrogate kept as it was
    assert run_bounded(lambda: text, **LIMITS) == text


def test_the_work_runs_in_another_process():
    assert run_bounded(lambda: str(os.getpid()), **LIMITS) != str(os.getpid())


@pytest.mark.parametrize("exc,message", [
    (SymparamsError("line 3: no such name"), "line 3: no such name"),
    (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
    (RecursionError("maximum recursion depth exceeded"), "RecursionError: maximum recursion depth exceeded"),
])
def test_an_exception_is_one_line(exc, message):
    with pytest.raises(SymparamsError) as info:
        run_bounded(lambda: fail(exc), **LIMITS)
    assert str(info.value) == message


def test_too_much_memory_is_stopped_and_the_parent_does_not_grow():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(SymparamsError, match="it needs more than 64 MiB of memory"):
        run_bounded(lambda: "x" * (1 << 30), **LIMITS)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 32 * 1024  # KB


def test_a_loop_is_killed_at_the_deadline():
    start = time.monotonic()
    with pytest.raises(SymparamsError, match="it ran for more than 0.5 s"):
        run_bounded(forever, **{**LIMITS, "seconds": 0.5})
    assert time.monotonic() - start < 2


def test_an_uninterruptible_big_integer_is_killed_too():
    start = time.monotonic()
    with pytest.raises(SymparamsError, match="it ran for more than 0.5 s|it needs more than"):
        run_bounded(lambda: str((3 ** 10**8) % 7), **{**LIMITS, "seconds": 0.5, "memory_bytes": 1 << 30})
    assert time.monotonic() - start < 2


def test_too_much_output_is_refused():
    with pytest.raises(SymparamsError, match="the output is over 1 MiB"):
        run_bounded(lambda: "x" * (2 << 20), **LIMITS)


def test_a_child_that_dies_is_one_line():
    with pytest.raises(SymparamsError, match="it stopped without an answer"):
        run_bounded(lambda: os.kill(os.getpid(), 9), **LIMITS)
