"""The examples a Markdown page shows (the README, the guides in docs/), found and run.

Three kinds of example, each checked against what the program really does:

* a ```` ```console ```` block: ``$ symparams ...`` lines, each followed by
  its exact output.  The command must exit 0 and print exactly those lines;
  an output that starts with ``symparams: error:`` is an error example
  instead: exit status 2 and exactly those lines on standard error;
* a ```` ```sh ```` block: commands whose output is too long or depends on
  the machine.  The lines that start with ``symparams`` are run (in a
  temporary folder where ``tests/`` and ``templates/`` are the checkout's,
  so the files they write land there) and must exit 0; other lines (``pip``, ``latexmk``, ...) are
  left alone;
* a ```` ```text ```` block that starts with ``$ symparams shell ...``: an
  IPython session (``In [1]: ...`` / ``Out[1]: ...``).  The inputs are fed
  to the plain console (``--plain``), a process of its own; the banner and
  every ``Out`` must be what it prints.

The ``symparams`` commands run in the tests' own process, as ``python -m
symparams`` runs them (:mod:`tests.reference.in_process`): a fresh
interpreter for each would add only its start-up.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from . import ROOT
from .in_process import command_here

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)


def blocks(path: Path, kind: str) -> list[str]:
    """The contents of every fenced block of ``kind`` (``console``, ``sh``, ``text``, ``python``)."""
    return [body for lang, body in _FENCE.findall(path.read_text(encoding="utf-8")) if lang == kind]


def console_examples(path: Path) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` for every ``$ `` line of the ```console blocks of ``path``."""
    out = []
    for block in blocks(path, "console"):
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    out.append((command, output))
                command, output = line[2:], []
            else:
                output.append(line)
        if command:
            out.append((command, output))
    return out


def dollar_commands(path: Path) -> list[str]:
    """Every line of ``path`` that starts with ``$ ``, in or out of a block."""
    return [line[2:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("$ ")]


def sh_commands(path: Path) -> list[str]:
    """The ``symparams ...`` lines of the ```sh blocks of ``path``."""
    return [line for block in blocks(path, "sh") for line in block.splitlines() if line.startswith("symparams ")]


def shell_sessions(path: Path) -> list[tuple[list[str], list[str], list[str], list[str]]]:
    """``(argv after "symparams shell", banner lines, inputs, outputs)`` of each session shown in a ```text block."""
    sessions = []
    for block in blocks(path, "text"):
        lines = block.splitlines()
        if not lines or not lines[0].startswith("$ symparams shell"):
            continue
        argv = shlex.split(lines[0][2:])[2:]
        banner, inputs, outputs = [], [], []
        for line in lines[1:]:
            if m := re.match(r"In \[\d+\]: (.*)", line):
                inputs.append(m.group(1))
            elif m := re.match(r"Out\[\d+\]: (.*)", line):
                outputs.append(m.group(1))
            elif not inputs:
                banner.append(line)
            elif line:
                outputs.append(line)
        sessions.append((argv, banner, inputs, outputs))
    return sessions


def _symparams(argv: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "symparams", *argv], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300, **kwargs)


def check_console(command: str, expected: list[str], cwd: Path = ROOT) -> None:
    """Run ``command`` (a ``symparams ...`` line) from ``cwd``, in this process as ``python -m symparams`` runs
    (:mod:`tests.reference.in_process`); its output must be ``expected``, exactly."""
    argv = shlex.split(command)
    assert argv[0] == "symparams", command
    code, out, err = command_here(*argv[1:], cwd=cwd, seconds=300)
    while expected and not expected[-1]:
        expected = expected[:-1]
    if expected and expected[0].startswith("symparams: error:"):
        assert code == 2, (code, out, err)
        assert err.rstrip("\n").splitlines() == expected
    else:
        assert code == 0, err
        assert out.rstrip("\n").splitlines() == expected


def check_sh(command: str) -> None:
    """Run a ``symparams ...`` line of a ```sh block in a scratch folder (``tests/``, ``templates/``: the checkout's),
    in this process as ``python -m symparams`` runs."""
    argv = shlex.split(command, comments=True)
    assert argv[0] == "symparams", command
    with tempfile.TemporaryDirectory() as scratch:
        for name in ("tests", "templates"):
            os.symlink(ROOT / name, Path(scratch) / name)
        code, _, err = command_here(*argv[1:], cwd=Path(scratch), seconds=300)
    assert code == 0, err


def check_shell(argv: list[str], banner: list[str], inputs: list[str], outputs: list[str]) -> None:
    """Feed ``inputs`` to ``symparams shell ARGV --plain``: it must print ``banner``, then ``outputs``."""
    proc = _symparams(["shell", *argv, "--plain"], ROOT, input="".join(i + "\n" for i in inputs))
    assert proc.returncode == 0, proc.stderr
    printed = [line for line in (proc.stderr + proc.stdout).replace(">>> ", "").splitlines() if line]
    assert printed == [line for line in banner if line] + outputs
