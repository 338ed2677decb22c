"""symparams shell, driven through a real pseudo-terminal (pexpect)."""

import os
import sys

import pexpect
import pytest

BERT_LARGE = 335_141_888  # 24·(12·1024² + 13·1024) + (30522 + 512 + 2 + 2)·1024 + 1024² + 1024
BERT_BASE = 109_482_240


@pytest.fixture
def home(tmp_path):
    """A fresh HOME (readline history) and IPYTHONDIR (IPython profile without colours)."""
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_config.py").write_text("c.TerminalInteractiveShell.colors = 'NoColor'\n")
    return tmp_path


def spawn(home, *args):
    env = dict(os.environ, HOME=str(home), IPYTHONDIR=str(home / "ipython"), TERM="xterm", PYTHONSTARTUP="")
    return pexpect.spawn(sys.executable, ["-m", "symparams", "shell", *args], env=env, encoding="utf-8",
                         timeout=60, dimensions=(50, 200))


def test_plain_console_banner_and_substitution(home):
    child = spawn(home, "bert-base", "--plain")
    child.expect(">>> ")
    banner = child.before
    assert "bert-base (BERT)" in banner
    assert "m.closed_form = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)" in banner
    assert f"m.subs(L=24, H=1024, A=16).count    # {BERT_LARGE:,}" in banner
    child.sendline("m.subs(L=24, H=1024, A=16).count")
    child.expect(">>> ")
    assert child.before.splitlines()[-1].strip() == str(BERT_LARGE)
    child.sendline("(H, L, A, r), bert_large.count, presets['bert-base'].count")
    child.expect(">>> ")
    assert child.before.splitlines()[-1].strip() == f"((H, L, A, r), {BERT_LARGE}, {BERT_BASE})"
    child.sendline("m.breakdown()")  # shown as a table, as IPython would
    child.expect(">>> ")
    assert f"total       {BERT_BASE:,}  100.00%" in child.before
    child.sendeof()
    child.expect(pexpect.EOF)


def test_plain_console_tab_completion_and_history(home):
    child = spawn(home, "bert-base", "--plain")
    child.expect(">>> ")
    child.send("m.cou\t")  # completes to m.count
    child.sendline("")
    child.expect(">>> ")
    assert child.before.splitlines()[-1].strip() == str(BERT_BASE)
    child.sendline("m.subs(L=24, H=1024, A=16).count")
    child.expect(">>> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    history = (home / ".symparams_history").read_text().splitlines()
    assert history[-2:] == ["m.count", "m.subs(L=24, H=1024, A=16).count"]
    # a new session recalls the last line with the up arrow
    child = spawn(home, "bert-base", "--plain")
    child.expect(">>> ")
    child.send("\x1b[A")
    child.sendline("")
    child.expect(">>> ")
    assert child.before.splitlines()[-1].strip() == str(BERT_LARGE)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_plain_console_without_a_model(home):
    child = spawn(home, "--plain")
    child.expect(">>> ")
    assert "no model loaded" in child.before
    child.sendline('model("bert-base", L=24, H=1024, A=16).count')
    child.expect(">>> ")
    assert child.before.splitlines()[-1].strip() == str(BERT_LARGE)
    child.sendline("m")
    child.expect(">>> ")
    assert "NameError" in child.before
    child.sendeof()
    child.expect(pexpect.EOF)


def test_ipython_when_installed(home):
    child = spawn(home, "bert-base")
    child.expect(r"In \[1\]:")
    assert f"m.subs(L=24, H=1024, A=16).count    # {BERT_LARGE:,}" in child.before
    child.sendline("m.subs(L=24, H=1024, A=16).count")
    child.expect(r"In \[2\]:")
    assert f"Out[1]: \x1b[0m{BERT_LARGE}" in child.before or f"Out[1]: {BERT_LARGE}" in child.before
    # IPython completes on the result of a call ("componen": one candidate; "cou" would be two, count and
    # counts_of, and Enter would then pick from the menu instead of running the line)
    child.send("m.subs(L=24, H=1024, A=16).componen\t")
    child.sendline('["encoder"]')
    child.expect(r"In \[3\]:")
    assert str(24 * (12 * 1024**2 + 13 * 1024)) in child.before.split("Out[2]:")[1]  # bert-large's 24 layers
    child.sendline("m")  # _repr_pretty_: the heading, the formula and the table
    child.expect(r"In \[4\]:")
    out = child.before.split("Out[3]:")[1]
    assert "bert-base (BERT): V=30522" in out and f"{BERT_BASE:,}" in out and "21.77%" in out
    child.sendline("exit")
    child.expect(pexpect.EOF)


def test_shell_with_a_bad_model_is_one_line(home):
    child = spawn(home, "bert-bsae", "--plain")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "unknown model 'bert-bsae'" in child.before and child.before.strip().count("\n") == 0


@pytest.mark.parametrize("name,values", [("bert-base", {}), ("bert", {}), ("bert", {"L": 24})])
def test_every_name_the_banner_shows_is_defined_with_that_value(name, values):
    import sympy as sp

    from symparams import model
    from symparams.cli.shell import banner, namespace

    m = model(name).subs(**values) if values else model(name)
    ns = namespace(m)
    lines = [line.strip() for line in banner(m).splitlines() if line.startswith("  ")]  # every name = value
    assert lines
    for line in lines:  # "m.closed_form = ..." or an example call "m.subs(...).count    # its result"
        expression, value = line.split("    # ") if "    # " in line else line.split(" = ", 1)
        result = eval(expression, dict(ns))  # the banner's own text, not user input
        assert (f"{result:,}" if isinstance(result, int) else sp.sstr(result)) == value, expression
