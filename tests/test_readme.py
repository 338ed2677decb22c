"""The README's console examples are real: each command is run and its output compared."""

import re
import shlex
import subprocess
import sys

import pytest

from symparams.core.symbols import SYMBOLS
from tests.reference import ROOT

README = ROOT / "README.md"


def examples():
    for block in re.findall(r"```console\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S):
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    yield command, output
                command, output = line[2:], []
            else:
                output.append(line)
        if command:
            yield command, output


EXAMPLES = list(examples())


def test_every_command_the_readme_shows_is_a_checked_example():
    commands = [line[2:] for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("$ ")]
    # all but the interactive shell, whose session the README shows in a block of its own
    assert [c for c, _ in EXAMPLES] == [c for c in commands if not c.startswith("symparams shell")]
    assert {c.split()[1] for c, _ in EXAMPLES} == {"count", "formula", "prove", "solve", "sweep"}


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_console_example_output_is_what_the_program_prints(command, expected):
    argv = shlex.split(command)
    assert argv[0] == "symparams"
    proc = subprocess.run([sys.executable, "-m", "symparams", *argv[1:]], capture_output=True, text=True,
                          cwd=README.parent)
    assert proc.returncode == 0, proc.stderr
    while expected and not expected[-1]:
        expected = expected[:-1]
    assert proc.stdout.rstrip("\n").splitlines() == expected


def test_readme_symbol_table_lists_every_symbol():
    rows = set(re.findall(r"^\| (\w+) \|", README.read_text(encoding="utf-8"), flags=re.M))
    assert set(SYMBOLS) <= rows
