"""``python -m symparams ARGS`` as a process of its own, for the cost of a fork instead of a start.

A fresh interpreter spends about half a second importing sympy and the
package before ``main`` runs; the bad-input table (tests/cli/test_bad_input_table.py)
runs hundreds of command lines.  :func:`run_forked` sends each one to a
*runner*, a process started once per thread of the tests that has imported
:mod:`symparams.cli` (and sympy with it: what ``python -m symparams`` imports
before ``main`` runs) and nothing else.  For each command line the runner
forks a child that becomes that command's process, as ``python -m`` would set
it up:

* a session of its own, so the runner kills its whole group at the deadline;
* the case's working directory, which is also ``sys.path[0]`` (``-m`` puts it there);
* stdin ``/dev/null``; stdout and stderr pipes, which the runner copies into
  files as they come, so that the runner (whose memory every later child
  starts from) never holds a case's output;
* ``sys.argv`` decoded from bytes with :func:`os.fsdecode`, as Python decodes
  its command line;
* ``symparams/__main__.py`` (``sys.exit(main())``) run by :mod:`runpy`, and
  then the script simply ends, in the child: its ``SystemExit``, an uncaught
  exception's traceback, SIGINT, threads, atexit handlers, the final flush of
  stdout (status 120 when it fails) and the interpreter's teardown all happen
  as in ``python -m symparams``, since they are the same interpreter's.  (Not
  ``os._exit``: a line printed at exit or a thread left running, which a
  fresh process shows as a second line or a hang, would go unseen.)

The runner waits for the child with ``wait4``: its exit status and peak
resident set size (``ru_maxrss``, kB on Linux).  A forked child's peak counts
the pages it still shares with the runner (the imports), as a fresh process's
peak counts its own imports: about the same figure (checked: 51 MB forked,
53 MB fresh, for a one-line error), and an upper bound of what the case
itself allocated.

What a child shares with its runner and a fresh process would not have:

* the runner's state after its imports, and only that: it never runs a command
  itself, so caches are as cold as in a fresh process, and it imports no
  optional module (torch, transformers, IPython): a case that needs one
  imports it in its child, as a fresh process would;
* the imports' objects, frozen out of garbage collection (:func:`gc.freeze`,
  for speed): a child's collections walk only what the case made.  With no
  start-up either, a case's time is a little less than a fresh process's: the
  deadline bounds the same work, a little more loosely;
* the string hash seed and sympy's random generator (Python's :mod:`random`
  reseeds after a fork): all the children of one runner share them.  Each case
  still gets a seed that is random from one test run to the next, as with a
  fresh process; only the seeds of different cases are no longer independent.

A case's environment can be given variables of its own (the shell's HOME and
IPYTHONDIR, which IPython reads when the case imports it); a variable read
when sympy or the package is imported would need a fresh interpreter.
"""

from __future__ import annotations

import contextlib
import json
import locale
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# all of these are imported by symparams.cli anyway, so the runner holds no module a fresh process would not;
# socket, which it would not, is imported on the tests' side only

GRACE = 30  # seconds the tests wait for a reply beyond the case's own deadline before giving up on a runner


# == the tests' side ============================================================================================

@dataclass
class Outcome:
    """How a command line ended; ``code`` as :attr:`subprocess.Popen.returncode` (-N: killed by signal N)."""

    code: int | None
    out: bytes
    err: bytes
    seconds: float
    timed_out: bool
    peak_kb: int | None


def run_forked(args, cwd, seconds: float, environ: dict | None = None) -> Outcome:
    """``python -m symparams *args`` in ``cwd``, forked by this thread's runner, killed at ``seconds``; ``environ``
    holds variables set in the case's environment (before it imports anything of its own)."""
    argv = [os.fsdecode(os.fsencode(a)) for a in args]  # bytes as Python decodes them; str as subprocess checks
    with tempfile.TemporaryDirectory(prefix="symparams-out-") as tmp:
        out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
        request = {"argv": argv, "cwd": str(cwd), "seconds": seconds, "stdout": str(out), "stderr": str(err),
                   "environ": environ or {}}
        reply = _runner().run(request)
        return Outcome(reply["code"], out.read_bytes(), err.read_bytes(), reply["seconds"], reply["timed_out"],
                       reply["peak_kb"])


def text(data: bytes) -> str:
    """Output decoded as ``subprocess.run(..., text=True)`` decodes it (the locale's encoding, universal
    newlines)."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def command(*args, cwd=None, seconds: float = 120) -> tuple[int, str, str]:
    """``python -m symparams ARGS`` forked (:func:`run_forked`) in ``cwd`` (the current folder): its status and
    its stdout and stderr as text, as the CLI tests' ``subprocess.run(..., text=True)`` gave them."""
    outcome = run_forked([str(a) for a in args], cwd or os.getcwd(), seconds)
    assert not outcome.timed_out, f"symparams {args} still running after {seconds} s"
    return outcome.code, text(outcome.out), text(outcome.err)


def close_runners() -> None:
    """Stop every runner started so far (each thread starts its own on first use)."""
    while _RUNNERS:
        _RUNNERS.pop().close()


_RUNNERS: list = []
_LOCAL = threading.local()
_LOCK = threading.Lock()


def _runner() -> _Runner:
    """This thread's runner, started on first use or after the previous one failed: one case at a time each."""
    runner = getattr(_LOCAL, "runner", None)
    if runner is None or runner.proc.poll() is not None:
        runner = _LOCAL.runner = _Runner()
        with _LOCK:
            _RUNNERS.append(runner)
    return runner


class _Runner:
    """A runner process and the socket it is driven by: a JSON line for each case, a JSON line back."""

    def __init__(self):
        import socket  # here: the runner itself must not import it

        # an empty folder as the runner's own working directory (and sys.path[0], as with -m), so nothing in
        # the checkout can shadow a module; stdio like the cases' old processes (pipes, /dev/null), since each
        # child keeps the sys.stdin/stdout/stderr objects Python set up for them
        self.folder = tempfile.TemporaryDirectory(prefix="symparams-runner-")
        mine, theirs = socket.socketpair()
        self.proc = subprocess.Popen([sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                     cwd=self.folder.name, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        theirs.close()
        self.sock = mine
        self.replies = mine.makefile("rb")

    def run(self, request: dict) -> dict:
        self.sock.settimeout(request["seconds"] + GRACE)
        try:
            self.sock.sendall(json.dumps(request).encode("ascii") + b"\n")
            line = self.replies.readline()
        except OSError as exc:  # a timeout too: the runner is stuck, and replaced for the next case
            self.close()
            raise RuntimeError(f"the case runner failed ({exc!r})") from None
        if not line:
            self.close()
            raise RuntimeError(f"the case runner died: {self.proc.stderr.read()[-2000:]!r}")
        return json.loads(line)

    def close(self) -> None:
        self.replies.close()
        self.sock.close()  # the runner reads the end of its requests and exits
        try:
            self.proc.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()
        self.folder.cleanup()


# == the runner's side ==========================================================================================

def _serve(requests: int) -> None:
    """Run each case the socket ``requests`` sends; return only in a forked child, set up as the case's process."""
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(requests, 1 << 16)
            if not chunk:
                sys.exit(0)  # the tests are done with this runner
            pending += chunk
        line, _, pending = pending.partition(b"\n")
        request = json.loads(line)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()  # nothing buffered for a child to write again
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(requests)
            os.close(out_r)
            os.close(err_r)
            _become_the_case(request, out_w, err_w)
            return
        os.close(out_w)
        os.close(err_w)
        reply = _watch(pid, {out_r: request["stdout"], err_r: request["stderr"]}, started, request["seconds"])
        _send_all(requests, json.dumps(reply).encode("ascii") + b"\n")


def _become_the_case(request: dict, out_w: int, err_w: int) -> None:
    """In the child: the session, standard streams, folder, argv and path of ``python -m symparams ARGS``."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    for fd, std in ((null, 0), (out_w, 1), (err_w, 2)):
        os.dup2(fd, std)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.update(request["environ"])
    sys.argv[1:] = request["argv"]  # runpy sets sys.argv[0] to __main__.py's path, as -m does
    sys.path[0] = os.getcwd()


def _watch(pid: int, pipes: dict, started: float, seconds: float) -> dict:
    """Copy the child's output to its files until it has exited and closed them, killing its group at the
    deadline; then reap it: the reply for the tests."""
    files = {fd: os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) for fd, path in pipes.items()}
    exited = _copy(files, os.pidfd_open(pid), started + seconds)
    elapsed = time.monotonic() - started
    # the child is at most a zombie here, so its ids cannot have been reused: kill what is left of its group
    # (all of it at the deadline; afterwards anything the case left running), and the child itself, should the
    # deadline have come before it made its session
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError):
            kill(pid, signal.SIGKILL)
    if files:  # killed at the deadline: the rest of its output, unless something outside the group holds a pipe
        _copy(files, None, time.monotonic() + 2)
    for fd in list(files):
        _close(files, fd)
    _, status, usage = os.wait4(pid, 0)
    return {"code": os.waitstatus_to_exitcode(status), "seconds": elapsed, "timed_out": not exited,
            "peak_kb": usage.ru_maxrss}


def _copy(files: dict, pidfd: int | None, deadline: float) -> bool:
    """Copy each pipe of ``files`` into its file until every pipe is closed and (``pidfd``) the child has
    exited: True, or False when the deadline came first."""
    try:
        while files or pidfd is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            watched = [*files] + ([pidfd] if pidfd is not None else [])
            for fd in select.select(watched, [], [], remaining)[0]:
                if fd == pidfd:  # readable once the child has exited
                    os.close(pidfd)
                    pidfd = None
                elif data := os.read(fd, 1 << 16):
                    _send_all(files[fd], data)
                else:
                    _close(files, fd)
        return True
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _close(files: dict, fd: int) -> None:
    os.close(files.pop(fd))
    os.close(fd)


def _send_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _import_what_cases_import() -> None:
    """Import, once, the modules nearly every case imports before it answers: each family's module (a name is
    looked up among all presets; an unknown one is compared with every preset's name) and the modules sympy
    imports on its first sum (``sympy.tensor.tensor`` and the combinatorics under it: 80 ms).  A child would
    import the same modules and run the same module code, so what a case does is unchanged; sympy's cache,
    which the family modules' own arithmetic fills, is emptied again, so a case's cache is as cold as a fresh
    process's."""
    import sympy
    from sympy.core.cache import clear_cache

    from symparams.families import registry

    sympy.Symbol("x") + 1  # noqa: B018 (the first sum's lazy imports)
    for name in registry.MODULES:
        registry.module(name)
    clear_cache()


if __name__ == "__main__":
    sys.path[0] = os.getcwd()  # as `python -m` has it; not this file's folder, whose modules could shadow others
    import gc
    import runpy

    import symparams.cli  # noqa: F401 (what `python -m symparams` imports before main runs, sympy with it)

    _import_what_cases_import()

    # the imports' objects are left out of every later collection: a child's collections (its interpreter's
    # teardown's above all) would otherwise walk, and so copy page by page, all of them: 150 ms a case, not 20
    gc.freeze()
    _serve(int(sys.argv[1]))
    # only a child gets here, set up as `python -m symparams ARGS`: it runs __main__.py, and whatever that raises
    # (SystemExit from sys.exit(main()), or a traceback) ends this interpreter as it would end that one
    runpy.run_module("symparams", run_name="__main__", alter_sys=True)
