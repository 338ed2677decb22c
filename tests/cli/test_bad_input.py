"""Bad input on the command line: one line on stderr naming the problem, exit status 2, quickly.

Never a traceback, a hang, a file left half written or an old file destroyed.
Each case runs as a process of its own under a timeout: forked, ready to run
``main``, by a runner that has imported the package once
(:mod:`tests.reference.cli_runner`: milliseconds a case, not the half second of
a fresh interpreter's start), or, where a fresh interpreter is what is tested
(signals to a running command, parallel writers, the shell), started anew.

The first tests below are single cases written out by hand, then races and
kills: eight ``derive -o`` writers of one file, ``kill -9`` of a ``derive -o``
and of a ``sweep --csv`` mid-write (the old file stays whole; a stray
``.symparams-*.part`` is all SIGKILL may leave) and SIGTERM mid-write.  The
rest of the file is a table (:data:`TABLE`, a few hundred :class:`Case` rows generated
from smaller tables: every family, symbol, switch, head, option and kind of
hostile file) checked against the product's promise for bad input:

* exit status 2 and exactly one line on stderr, starting ``symparams: error: ``
  (with no control character in it, which could forge more lines on a terminal),
  naming the offending value where the row gives a ``needle``;
* never ``Traceback``;
* done within :data:`CASE_SECONDS` (10 s): each process runs in its own session
  and the whole group is killed at the deadline;
* peak memory at most :data:`MEMORY_KB` (500 MB).  It is measured, not capped:
  the runner reads the child's peak resident set size (``ru_maxrss`` from
  ``wait4``), and a fresh process runs under GNU ``/usr/bin/time -f %M -o FILE``,
  which reports the same into a file of its own, so standard error stays the
  program's.  (A cap with ``RLIMIT_AS`` would turn a memory bomb into a
  ``MemoryError`` the program might report as a tidy one-line error, hiding
  the bomb; and ``preexec_fn`` is unsafe in the threads that run the table.)
* no file left behind and no file changed: every case runs in a fresh working
  directory holding the files it names (FIFOs, old outputs, hostile
  config.json files and templates, created from the tables below), and the
  directory's tree (types, modes, contents) must be the same afterwards;
* standard input is ``/dev/null``, so ``shell`` (which gets its own HOME) can
  never wait for a user.

A second table (:data:`SAFE`) holds inputs that are *not* errors but must be
handled safely (``--title`` with TeX, Markdown and HTML specials or control
characters, hostile folder names): exit status 0, nothing on stderr, UTF-8
output with no control character and every special escaped.  A third
(:data:`EITHER`) holds valid but extreme inputs (a 3,000-digit size, a
4,300-digit target): a result or a one-line error, within the same limits.

Cases run two at a time (two cores; each thread has a runner of its own): a
module-scoped fixture submits every selected case to a
``ThreadPoolExecutor(max_workers=2)`` when the first one is needed, and each
parametrized test waits for its own result, so a failure names its exact
case.  Known package bugs are listed in :data:`XFAIL` (case id → what goes
wrong) and marked ``xfail(strict=True)``; when the package is fixed, the case
passes, the strict xfail fails, and the entry is to be removed.
"""

import concurrent.futures
import hashlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reference.cli_runner import Outcome, close_runners, run_forked, run_fresh, text

TIMEOUT = 30  # seconds; every case below answers in about one


def run(*args, cwd=None):
    """``symparams ARGS`` as a forked process (see :mod:`tests.reference.cli_runner`): status, stdout, stderr."""
    r = run_forked(args, cwd or os.getcwd(), TIMEOUT)
    assert not r.timed_out, f"symparams {args} still running after {TIMEOUT} s"
    return r.code, text(r.out), text(r.err)


def assert_one_line_error(code, err, needle):
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("symparams: error: "), err
    assert needle in lines[0], lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Hostile files: a FIFO, a deeply nested config, an oversized one, template bombs."""
    d = tmp_path_factory.mktemp("bad")
    os.mkfifo(d / "fifo")
    (d / "deep.json").write_text("[" * 5000 + "]" * 5000)
    (d / "huge.json").write_text(" " * (2 << 20))
    (d / "long-int.json").write_text('{"model_type": "bert", "hidden_size": ' + "7" * 5000 + "}")
    # a kibibyte a turn: the output bound (16 MiB) comes long before the time bound, however busy the machine
    (d / "nested-loops.j2").write_text("{% for i in range(100000) %}{% for j in range(100000) %}" + "x" * 1024
                                       + "{% endfor %}{% endfor %}")
    (d / "repeat.j2").write_text('{% set s = "x" * 900000 %}{% for i in range(100000) %}{{ s }}{% endfor %}')
    (d / "lipsum.j2").write_text("{{ lipsum(1000000) }}")
    return d


DIGITS = "9" * 5000

CASES = [
    # numbers: never converted when too long, exponents bounded (each used to crash or hang)
    (["count", "bert-base", "--set", f"H={DIGITS}"], "H: '999"),
    (["count", "bert-base", "--set", "r=1e5000"], "more than 1000 digits"),
    (["count", "bert-base", "--set", "r=1e100000000"], "more than 1000 digits"),
    (["solve", "bert-base", "--for", "H", "--target", "1e100000"], "more than 1000 digits"),
    (["sweep", "bert-base", "--grid", f"H=768:{DIGITS}:12"], "more than 1000 digits"),
    (["count", "bert-base", "--set", "H\n=768"], "--set takes KEY=VALUE"),
    (["count", "bert-base", "--set", "r=0x10"], "r must be a positive rational"),
    (["count", "bert-base", "--set", "H=1_000"], "H must be a positive whole number"),
]


@pytest.mark.parametrize("args,needle", CASES, ids=[" ".join(a)[:40] for a, _ in CASES])
def test_bad_numbers_are_one_line_errors(args, needle):
    assert_one_line_error(*run(*args)[::2], needle)


@pytest.mark.parametrize("name,needle", [
    ("fifo", "not a regular file"),
    ("deep.json", "nested too deeply"),
    ("huge.json", "a config.json is read only up to 1,048,576 bytes"),
    ("long-int.json", "integer string conversion"),
])
def test_config_files_that_are_not_configs(files, name, needle):
    assert_one_line_error(*run("count", "--config", str(files / name))[::2], needle)  # run: within TIMEOUT


@pytest.mark.parametrize("args,needle", [
    (["infer", "no_such_type"], "unknown model_type 'no_such_type'"),
    (["infer", "lama"], "did you mean llama"),
    (["infer", "llama", "--class", "masked-llm"], "unknown class 'masked-llm'"),
    (["infer", "vit", "--class", "causal-lm"], "has no causal-lm class"),
    (["infer", "llama", "--verify", "0"], "--verify"),
    (["infer", "llama", "--verify", "-3"], "--verify"),
    (["infer", "llama\x1b[2K"], "unknown model_type"),
    (["infer"], "MODEL_TYPE"),
], ids=lambda a: " ".join(a)[:40] if isinstance(a, list) else None)
def test_infer_bad_input_is_one_line(args, needle):
    assert_one_line_error(*run(*args)[::2], needle)  # run: within TIMEOUT, not a hang


def test_devices_are_not_configs():
    assert_one_line_error(*run("count", "--config", "/dev/zero")[::2], "/dev/zero: not a regular file")


@pytest.mark.parametrize("name,needle", [
    ("fifo", "not a regular file"),
    ("nested-loops.j2", "over 16 MiB"),
    ("repeat.j2", "over 16 MiB"),
    ("lipsum.j2", "'lipsum' is undefined"),
])
def test_user_templates_are_bounded(files, name, needle):
    assert_one_line_error(*run("derive", "bert-base", "--format", "md", "--template", str(files / name))[::2],
                          needle)


def test_a_full_disk_is_one_line(tmp_path):
    assert_one_line_error(*run("sweep", "bert-base", "--grid", "H=768:1024:64", "--csv", "/dev/full")[::2],
                          "cannot write /dev/full: No space left on device")


def test_a_fifo_is_never_written_to(files):
    assert_one_line_error(*run("derive", "bert-base", "--format", "md", "-o", str(files / "fifo"))[::2],
                          "not a regular file")


def test_a_failing_command_leaves_the_old_file(tmp_path):
    csv, doc = tmp_path / "out.csv", tmp_path / "doc.md"
    csv.write_text("old csv\n")
    doc.write_text("old doc\n")
    assert_one_line_error(*run("sweep", "bert-base", "--grid", "H=768:1024:0", "--csv", str(csv))[::2],
                          "the step must be positive")
    bad = tmp_path / "bad.j2"
    bad.write_text("{{ doc.nothing_here }}")
    assert_one_line_error(*run("derive", "bert-base", "--format", "md", "--template", str(bad), "-o", str(doc))[::2],
                          "nothing_here")
    assert csv.read_text() == "old csv\n" and doc.read_text() == "old doc\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.j2", "doc.md", "out.csv"]  # no temporary left


def test_a_successful_write_replaces_the_file_whole_and_keeps_its_mode(tmp_path):
    csv = tmp_path / "out.csv"
    csv.write_text("old\n")
    csv.chmod(0o640)
    code, out, err = run("sweep", "bert-base", "--grid", "H=768:1024:64", "--csv", str(csv))
    assert code == 0 and err == "" and out.startswith("wrote 2 rows")
    assert csv.read_text() == "H,parameters\n768,109482240\n960,163579200\n"
    assert oct(csv.stat().st_mode & 0o777) == oct(0o640)
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_ctrl_c_during_a_sweep_leaves_no_traceback_and_no_file(tmp_path):
    csv = tmp_path / "grid.csv"
    csv.write_text("old\n")
    # a fresh interpreter, signalled while it writes (a runner's child could not be reached midway);
    # as from a terminal: a shell's background job (CI runners, `cmd &`) starts with SIGINT ignored, and so
    # would this process, which then rightly goes on
    interactive = "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); " \
                  "runpy.run_module('symparams', run_name='__main__')"
    proc = subprocess.Popen([sys.executable, "-c", interactive, "sweep", "bert-base", "--grid", "H=12:120000000:12",
                             "--csv", str(csv)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    while not any(p.name.endswith(".part") for p in tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the sweep is writing
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130 and err == "symparams: interrupted\n", err
    assert csv.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["grid.csv"]


def test_a_huge_semiprime_h_proves_quickly_without_a_witness():
    h = str(10000000000000000000000013 * 100000000000000000000000067)  # two primes: no cheap divisor list
    code, out, err = run("prove", "bert-base", "--set", f"H={h}", "--set", "A=1", "--json")  # within TIMEOUT
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["invariant"] is True and data["derivative"] == "0" and data["witness"] == {}


def test_control_characters_never_reach_a_document():
    title = "a\x01b\x1bc\x7fd"
    for fmt in ("md", "tex", "html"):
        code, out, err = run("derive", "bert-base", "--format", fmt, "--title", title)
        assert code == 0 and err == ""
        assert not any(c in out for c in "\x01\x1b\x7f")
        assert "abcd" in out


# -- races and kills: eight writers of one file, kill -9 mid-write ----------------------------------------------
# each a fresh interpreter: signals sent to a command while it runs, and eight commands at once, are what a
# runner's one-case-at-a-time forks cannot stand for

def _start(*args, cwd=None):
    return subprocess.Popen([sys.executable, "-m", "symparams", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".symparams-") and p.name.endswith(".part"))


def test_eight_parallel_writers_leave_one_whole_document(tmp_path):
    """Eight ``derive -o SAME_FILE`` at once: the file is one writer's complete document, no temporary is left."""
    from symparams import model
    from symparams.documents.render import render

    out = tmp_path / "doc.md"
    out.write_text("old\n")
    titles = [f"writer {i}" for i in range(8)]
    procs = [_start("derive", "bert-base", "--format", "md", "--title", title, "-o", str(out)) for title in titles]
    for proc in procs:
        _, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0 and err == b"", err
    documents = {render(model("bert-base"), format="md", title=title) for title in titles}
    assert out.read_text(encoding="utf-8") in documents
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]


def _writing(folder, min_size) -> bool:
    """Whether a temporary output of at least ``min_size`` bytes is in ``folder``."""
    for name in _temporaries(folder):
        try:
            if (folder / name).stat().st_size >= min_size:
                return True
        except FileNotFoundError:  # renamed or removed meanwhile
            pass
    return False


def _kill_when_writing(proc, folder, min_size=0, deadline=TIMEOUT) -> bool:
    """SIGKILL ``proc`` as soon as it writes a temporary output of at least ``min_size`` bytes in ``folder``.

    True when it was caught writing, False when it finished first."""
    end = time.monotonic() + deadline
    while proc.poll() is None and time.monotonic() < end:
        if _writing(folder, min_size):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=TIMEOUT)
            return True
        if min_size:
            time.sleep(0.01)
    proc.communicate(timeout=TIMEOUT)
    return False


def test_kill_9_during_derive_output_keeps_the_old_file(tmp_path):
    """kill -9 while ``derive -o`` writes: the old file stays whole (a stray ``.part`` is all SIGKILL may leave)."""
    template = tmp_path / "big.j2"
    template.write_text('{% for i in range(15) %}{{ "x" * 999999 }}\n{% endfor %}')  # 15 MB: a long write
    new = ("x" * 999999 + "\n") * 15
    caught = 0
    for attempt in range(10):
        folder = tmp_path / f"attempt{attempt}"
        folder.mkdir()
        doc = folder / "doc.md"
        doc.write_text("old\n")
        proc = _start("derive", "bert-base", "--format", "md", "--template", str(template), "-o", str(doc))
        caught += _kill_when_writing(proc, folder)
        text = doc.read_text()
        assert text == "old\n" or text == new, f"a partial document of {len(text):,} characters"
        assert len(_temporaries(folder)) <= 1
        if caught >= 3:
            break
    assert caught, "derive never seen writing: nothing was tested"


def test_kill_9_during_a_sweep_keeps_the_old_csv(tmp_path):
    """kill -9 while ``sweep --csv`` writes: the old CSV stays whole; the temporary may stay (SIGKILL cannot be
    caught), and nothing else."""
    csv = tmp_path / "grid.csv"
    csv.write_text("old\n")
    proc = _start("sweep", "bert-base", "--grid", "H=12:120000000:12", "--csv", str(csv))
    assert _kill_when_writing(proc, tmp_path, min_size=1 << 20), "the sweep ended before it was killed"
    assert csv.read_text() == "old\n"
    left = _temporaries(tmp_path)
    assert len(left) <= 1 and {p.name for p in tmp_path.iterdir()} == {"grid.csv", *left}


def test_sigterm_during_a_sweep_keeps_the_old_csv_and_leaves_no_temporary(tmp_path):
    """SIGTERM (``kill``, ``timeout``, CI runners) can be handled: old CSV whole, no ``.part``, no traceback."""
    csv = tmp_path / "grid.csv"
    csv.write_text("old\n")
    proc = _start("sweep", "bert-base", "--grid", "H=12:120000000:12", "--csv", str(csv))
    end = time.monotonic() + TIMEOUT
    while not _writing(tmp_path, 1 << 20) and time.monotonic() < end:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 128 + signal.SIGTERM and b"Traceback" not in err
    assert err.decode().splitlines()[-1] == "symparams: terminated"
    assert csv.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["grid.csv"]


# == the table ==================================================================================================

CASE_SECONDS = 10  # the promise: never a hang beyond 10 s
MEMORY_KB = 500 * 1024  # the promise: never more than 500 MB (peak resident set size, ru_maxrss)

SUBCOMMANDS = ("list", "count", "formula", "prove", "flops", "memory", "explain", "derive", "solve", "sweep", "shell")


@dataclass(frozen=True)
class Case:
    """One command line.  ``expect``: ``error`` (the promise), ``ok`` (must succeed safely: ``check`` gets
    stdout and returns problems) or ``either`` (a result or a one-line error)."""

    id: str
    args: tuple
    expect: str = "error"
    needle: "str | None" = None
    check: "Callable | None" = None

    @property
    def group(self) -> str:
        first = self.args[0] if self.args else ""
        return first if first in SUBCOMMANDS else "top"


def _show(arg) -> str:
    """An argument as a case id shows it: escaped, long ones cut."""
    text = arg.decode("utf-8", "surrogateescape") if isinstance(arg, bytes) else arg
    text = text.encode("unicode_escape").decode("ascii") if not text.isprintable() or not text.isascii() else text
    if len(text) > 28:
        text = f"{text[:12]}...[{len(text)} chars]"
    return text if text and " " not in text else repr(text)


_IDS: dict = {}


def case(*args, expect="error", needle=None, check=None, label=None) -> Case:
    """A case; its id is the command line (shortened), made unique."""
    base = label or " ".join(_show(a) for a in args) or "(no arguments)"
    n = _IDS[base] = _IDS.get(base, 0) + 1
    return Case(base if n == 1 else f"{base} #{n}", tuple(args), expect, needle, check)


# -- what the families are made of (hard-coded: the table must not depend on the package it tests) ------------

PRESET = {"bert": "bert-base", "transformer": "transformer-base", "albert": "albert-base-v2", "bart": "bart-base",
          "distilbert": "distilbert-base", "electra": "electra-small", "gpt2": "gpt2", "llama": "llama-3-8b",
          "marian": "opus-mt-en-de", "roberta": "roberta-base", "t5": "t5-small"}
SYMBOLS_OF = {"bert": "V P S H L A r", "transformer": "V P H L A r", "albert": "V P S H L A r E",
              "bart": "V P H L A r", "distilbert": "V P H L A r", "electra": "V P S H L A r E",
              "gpt2": "V P H L A r", "llama": "V H L A G F", "marian": "V P H L A r", "roberta": "V P S H L A r",
              "t5": "V H L A D B F"}
SWITCHES_OF = {"bert": "pooler", "transformer": "positions tie bias layernorm",
               "albert": "pooler hidden_groups inner_groups tie", "bart": "tie split_layers",
               "distilbert": "sinusoidal tie", "electra": "project tie", "gpt2": "tie cross_attention",
               "llama": "gqa free_head_dim tie attention_bias mlp_bias token_classification_bias",
               "marian": "share tie split_layers", "roberta": "pooler tie", "t5": "gated tie split_layers"}
COUNT_SWITCHES = {"hidden_groups", "inner_groups"}  # positive whole numbers
CHOICE_SWITCHES = {"positions"}  # sinusoidal, learned, none

DIGITS = "9" * 5000
BAD_SIZES = ["0", "-1", "1.5", "1e3", "", " ", "abc", "٣", DIGITS, "1/0", "true", "0x10", "1_000", "inf", "nan",
             "+-1", "1,000", "²", "768 768", "-0", "12\x1b[2K"]
BAD_RATIOS = ["0", "abc", "1e5000", "1/0", "-3/4"]  # r is a positive rational: 1.5 and 1e3 are good ones
BAD_BOOLS = ["maybe", "", "2", "truee", "None", "t", "٣", "yes please", "-1", "null"]
BAD_COUNTS = ["0", "-1", "1.5", "abc", "", DIGITS, "true", "٣"]
BAD_CHOICES = ["rope", "", "sinusoidal,learned", "true"]


def other_symbol(family, avoid):
    """A symbol of ``family`` that solve and sweep may vary, not ``avoid``."""
    return next(s for s in ("L", "V", "H") if s in SYMBOLS_OF[family].split() and s != avoid)


def command(sub, model, family, *extra, avoid=None, needle=None):
    """``symparams SUB MODEL ...`` made complete for each subcommand (what it requires), plus ``extra``."""
    x = other_symbol(family, avoid)
    tail = {"derive": ["--format", "md"], "solve": ["--target", "1e9", "--for", x],
            "sweep": ["--grid", f"{x}=1,2"], "flops": ["--seq", "8"], "explain": ["--claim", "110M"]}.get(sub, [])
    return case(sub, *([model] if model is not None else []), *extra, *tail, needle=needle)


ROTATION = ("count", "formula", "prove", "flops", "memory", "explain", "derive", "solve", "sweep", "shell")


def _rotating():
    i = 0
    while True:
        yield ROTATION[i % len(ROTATION)]
        i += 1


#: a family that uses each symbol, and what it takes to use it
SYMBOL_HOMES = {"V": ("gpt2",), "P": ("bert-base",), "S": ("roberta-base",), "H": ("bert-base",),
                "L": ("t5-small",), "L_d": ("bart-base", "--set", "split_layers=true"),
                "V_d": ("opus-mt-en-de", "--set", "share=false"), "A": ("llama-2-7b",), "r": ("bert-base",),
                "C": ("bert-base", "--head", "sequence-classification"), "E": ("albert-base-v2",),
                "G": ("llama-3-8b",), "D": ("t5-small",), "B": ("t5-small",), "F": ("llama-3-8b",)}
FAMILY_OF = {"gpt2": "gpt2", "bert-base": "bert", "roberta-base": "roberta", "t5-small": "t5", "bart-base": "bart",
             "opus-mt-en-de": "marian", "llama-2-7b": "llama", "llama-3-8b": "llama", "albert-base-v2": "albert"}


def value_cases():
    """Every symbol with bad values (two each; r more), every bad size at least once, every subcommand in turn."""
    subs = _rotating()
    out = []
    seen = set()
    for i, (sym, (preset, *extra)) in enumerate(SYMBOL_HOMES.items()):
        picks = BAD_RATIOS if sym == "r" else [BAD_SIZES[(2 * i + k) % len(BAD_SIZES)] for k in range(2)]
        for value in picks:
            seen.add(value)
            out.append(command(next(subs), preset, FAMILY_OF[preset], *extra, "--set", f"{sym}={value}", avoid=sym,
                               needle=sym))
    for value in BAD_SIZES:
        if value not in seen:
            out.append(command(next(subs), "bert-base", "bert", "--set", f"H={value}", avoid="H", needle="H"))
    return out


def switch_cases():
    """One switch of every family with a bad value (bool-ish, counts, choices)."""
    subs = _rotating()
    out = []
    for i, (family, preset) in enumerate(PRESET.items()):
        switches = SWITCHES_OF[family].split()
        switch = switches[i % len(switches)]
        bad = BAD_COUNTS if switch in COUNT_SWITCHES else BAD_CHOICES if switch in CHOICE_SWITCHES else BAD_BOOLS
        out.append(command(next(subs), preset, family, "--set", f"{switch}={bad[i % len(bad)]}", needle=switch))
    out += [case("count", "albert-base-v2", "--set", f"hidden_groups={DIGITS}", needle="hidden_groups"),
            case("count", "llama-3-8b", "--set", "gqa=", needle="gqa")]
    # a symbol given a switch's value, a switch given a size
    out += [case("count", "bert-base", "--set", "H=true", needle="H"),
            case("count", "gpt2", "--set", "tie=768", needle="tie")]
    return out


FOREIGN_HEADS = {"transformer": "masked-lm", "llama": "Causal-LM", "t5": "causal-lm"}  # another family's
UNUSED_KEYS = {"bert": "E=128", "transformer": "pooler=true", "albert": "G=2", "bart": "S=2",
               "distilbert": "pooler=false", "electra": "G=2", "gpt2": "D=64", "llama": "r=4", "marian": "V_d",
               "roberta": "L_d=3", "t5": "P=512"}


def head_and_key_cases():
    """For every family: an unknown head and a key it does not use; some heads of other families."""
    subs = _rotating()
    out = []
    for family, preset in PRESET.items():
        out.append(command(next(subs), preset, family, "--head", "nosuch-head", needle="nosuch-head"))
        key = UNUSED_KEYS[family]
        out.append(command(next(subs), preset, family, "--set", key if "=" in key else f"{key}=9",
                           needle=key.partition("=")[0]))
    for family, head in FOREIGN_HEADS.items():
        out.append(command(next(subs), PRESET[family], family, "--head", head, needle=head))
    out += [case("count", "bert-base", "--set", s) for s in ("1H=1", "H")]
    out += [case("count", "bert-base", "--head", "MASKED-LM")]
    return out


def constraint_cases():
    """Sizes that break a family's constraints: A | H, r·H whole, G | A, E ≠ H with a projection."""
    subs = _rotating()
    out = [command(next(subs), preset, family, "--set", "A=7", needle="7", avoid="A")
           for family, preset in PRESET.items() if family != "t5"]  # T5's heads are D wide: no A | H
    out += [case("count", "bert-base", "--set", "r=1/7", needle="r"),
            case("count", "llama-3-8b", "--set", "G=3", needle="G"),
            case("solve", "llama-3-8b", "--set", "G=64", "--for", "L", "--target", "1e9"),
            case("count", "electra-small", "--set", "E=256")]
    return out


def missing_value_cases():
    return [case("count", "bert", needle="bert"), case("count", "t5", "--json"),
            case("derive", "bert", "--format", "md"), case("solve", "bert", "--for", "H", "--target", "1e9"),
            case("sweep", "bert", "--grid", "H=768,1024"),
            case("count", "bart-base", "--set", "split_layers=true", needle="L_d")]


OPTIONS = {  # every option that takes an argument, per subcommand
    "count": ("--set", "--head", "--config", "--depth"), "formula": ("--set", "--head", "--config"),
    "prove": ("--set", "--head", "--config"),
    "derive": ("--set", "--head", "--config", "--format", "--lang", "--title", "-o", "--output", "--template"),
    "solve": ("--set", "--head", "--config", "--target", "--for"),
    "sweep": ("--set", "--head", "--config", "--grid", "--csv", "--plot", "--head-width"),
    "shell": ("--set", "--head", "--config"),
}


def option_cases():
    """Every option without its argument (last, or before another option); unknown and misplaced options."""
    out = []
    for sub, options in OPTIONS.items():
        required = {"derive": ["--format", "md"], "solve": ["--target", "1e9", "--for", "H"]}.get(sub, [])
        for opt in options:
            base = [a for a in required if a not in ("--format", "md")] if opt == "--format" else \
                ["--for", "H"] if opt == "--target" else ["--target", "1e9"] if opt == "--for" else required
            out.append(case(sub, "bert-base", *base, opt, needle=opt.lstrip("-")[:3]))
        if sub in ("count", "derive", "solve"):
            out.append(case(sub, "bert-base", *required, "--bogus", needle="--bogus"))
    out += [case("count", "bert-base", "--head", "--json"),
            case("derive", "bert-base", "--format", "--lang", "en", needle="--format"),
            case("count", "bert-base", "extra", needle="extra"), case("formula", "bert-base", "--json"),
            case("derive", "bert-base", needle="--format"),
            case("derive", "bert-base", "--format", "pdf", needle="pdf"),
            case("derive", "bert-base", "--format", "md", "--lang", "fr", needle="fr"),
            case("solve", "bert-base", "--for", "H", needle="--target")]
    out += [case("count", "bert-base", "--depth", d, needle="depth") for d in ("0", "-1", "abc", "1000", "1.5", "٣")]
    out += [case("sweep", "bert-base", "--grid", "H=768,1024", "--head-width", w, needle="head-width")
            for w in ("0", "-64", "abc", "1234567890", "٣")]
    out.append(case("sweep", "bert-base", "--grid", "A=1,2", "--head-width", "64", needle="A"))
    return out


def top_level_cases():
    return [case(), case("bogus", needle="bogus"), case("--bogus"), case("COUNT"), case("count", "--version"),
            case("list", "extra", needle="extra"), case("list", "--json"), case("", "bert-base")]


def generic_cases():
    """What every command that loads a model refuses the same way."""
    out = []
    for i, sub in enumerate(ROTATION):
        out.append(command(sub, "nosuchmodel", "bert", needle="nosuchmodel"))
        if i % 2:
            out.append(command(sub, "bert-base", "bert", "--config", "c-bert.json", needle="--config"))
        elif sub != "shell":  # a shell without a model is no error
            out.append(command(sub, None, "bert", needle="--config"))
    out += [command("count", "../../etc/passwd", "bert"), command("prove", "\x1b[31mbert\x1b[0m", "bert"),
            command("derive", "bert-bas", "bert", needle="bert-bas")]
    return out


# -- hostile files: each is created, when a case names it, in the case's own working directory -----------------

def _json(**data):
    return json.dumps(data)


NESTED = 100_000
CONFIGS = {  # c-NAME.json
    "bert": _json(model_type="bert"),
    "empty": "",
    "list": "[]",
    "null": "null",
    "malformed": '{"model_type": "bert"',
    "deep-object": '{"a": ' * NESTED + "1" + "}" * NESTED,
    "no-model-type": _json(hidden_size=768),
    "unknown-type": _json(model_type="gpt5"),
    "type-number": _json(model_type=5),
    "type-null": '{"model_type": null}',
    "bert-h-string": _json(model_type="bert", hidden_size="768"),
    "bert-h-float": _json(model_type="bert", hidden_size=768.0),
    "bert-h-negative": _json(model_type="bert", hidden_size=-768),
    "bert-h-bool": _json(model_type="bert", hidden_size=True),
    "bert-heads7": _json(model_type="bert", num_attention_heads=7),
    "bert-id2label-list": _json(model_type="bert", id2label=["a", "b"]),
    "bert-cross": _json(model_type="bert", add_cross_attention=True),
    "bert-untied": _json(model_type="bert", tie_word_embeddings=False),
    "llama-kv3": _json(model_type="llama", num_key_value_heads=3),
    "llama-heads30": _json(model_type="llama", num_attention_heads=30),
    "llama-head-dim-odd": _json(model_type="llama", head_dim=63),
    "t5-proj": _json(model_type="t5", feed_forward_proj="gated-gelu-x"),
    "t5-dkv-string": _json(model_type="t5", d_kv="64"),
    "bart-decoder-heads7": _json(model_type="bart", encoder_attention_heads=16, decoder_attention_heads=7),
    "bart-decoder-ffn0": _json(model_type="bart", encoder_ffn_dim=4096, decoder_ffn_dim=0),
    "marian-pad": _json(model_type="marian", pad_token_id=99_999_999),
    "gpt2-embd-float": _json(model_type="gpt2", n_embd=768.5),
    "albert-groups": _json(model_type="albert", num_hidden_groups=0),
    "electra-cross": _json(model_type="electra", add_cross_attention=True),
    "roberta-cross": _json(model_type="roberta", add_cross_attention=True),
}
TEMPLATES = {  # t-NAME.j2
    "syntax-if": "{% if %}x{% endif %}",
    "unknown-filter": "{{ doc|nosuchfilter }}",
    "undefined": "{{ nosuch }}",
    "mro": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "cycler": "{{ cycler.__init__.__globals__ }}",
    "attr-filter": "{{ doc|attr('__class__') }}",
    "format-escape": "{{ '{0.__class__.__mro__}'.format(t) }}",
    "mutate": "{{ t.update({'x': 1}) }}",
    "include": "{% include '/etc/passwd' %}",
    "import": "{% import 'os' as os %}{{ os.system('touch pwned') }}",
    "power": "{{ 10**(10**10) }}",
    "recursion": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "loops-silent": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "power-chain": "{% set x = ((2**999)**999)**999 %}{{ (x * x) % 7 }}",
    "concat-bomb": '{% set a = "x" * 1000000 %}{% set b = a ~ a ~ a ~ a ~ a ~ a ~ a ~ a %}'
                   "{% set c = b ~ b ~ b ~ b ~ b ~ b ~ b ~ b %}{% set d = c ~ c ~ c ~ c ~ c ~ c ~ c ~ c %}"
                   "{{ d|length }}",
    "center-bomb": '{{ "x".center(1000000000)|length }}',
    "percent-bomb": '{{ ("%*d" % (1000000000, 1))|length }}',
    "format-bomb": '{{ "{:>1000000000}".format(1)|length }}',
    "filter-bomb": '{{ ("x"|center(1000000000))|length }}',
    "list-bomb": '{% set l = [0] * 999999 %}{{ (l * 1)|length }}{% set m = [l] * 999999 %}'
                 "{{ (m|sum(start=[]))|length }}",
}
SPECIALS = "\\{}$&#^_~%<>[]*`|\"'!+"  # TeX, Markdown and HTML specials
MARKED = "".join(f"Q{i}q{c}" for i, c in enumerate(SPECIALS)) + f"Q{len(SPECIALS)}q"  # each between markers
HOSTILE_FOLDER = MARKED  # a folder name (a model's name, from --config) made of them


def _make_fixture(folder: Path, name: str) -> None:
    path = folder / name
    if path.exists() or path.is_symlink():
        return
    if name.startswith("c-"):
        path.write_text(CONFIGS[name[2:-5]])
    elif name.startswith("t-"):
        path.write_text(TEMPLATES[name[2:-3]])
    elif name in ("fifo", "fifo.svg"):
        os.mkfifo(path)
    elif name.startswith("old."):
        path.write_text(f"old {name}\n")
        path.chmod(0o640)
    elif name in ("emptydir", "dir.svg", "dir.csv"):
        path.mkdir()
    elif name == "big.json":
        path.write_text('{"model_type": "bert", "x": "' + "x" * (2 << 20) + '"}')
    elif name == "big.j2":
        path.write_text("{{ title }}" * (2 << 17))
    elif name == "latin1.json":
        path.write_bytes(b'{"model_type": "bert", "name": "caf\xe9"}')
    elif name == "latin1.j2":
        path.write_bytes(b"caf\xe9 {{ title }}")
    elif name == "bom.json":
        path.write_bytes(b'\xef\xbb\xbf{"model_type": "bert"}')
    elif name == "zero-link.json":
        path.symlink_to("/dev/zero")
    elif name == "loop.json":
        path.symlink_to(name)
    elif name == "cfgdir-fifo":
        path.mkdir()
        os.mkfifo(path / "config.json")
    elif name == "cfgdir-bad":
        path.mkdir()
        (path / "config.json").write_text(CONFIGS["bert-heads7"])
    elif name == HOSTILE_FOLDER or name == "cfg\x1b]0;pwned\x07":
        path.mkdir()
        (path / "config.json").write_text(CONFIGS["bert"])
    else:
        raise AssertionError(name)


FIXTURES = ["fifo.svg", "fifo", "old.md", "old.csv", "old.svg", "emptydir", "dir.svg", "dir.csv", "big.json",
            "big.j2", "latin1.json", "latin1.j2", "bom.json", "zero-link.json", "loop.json", "cfgdir-fifo",
            "cfgdir-bad", HOSTILE_FOLDER, "cfg\x1b]0;pwned\x07"]


def materialize(folder: Path, args) -> None:
    """Create in ``folder`` every fixture an argument names (``fifo``, ``c-NAME.json``, ``old.md``, ...)."""
    for arg in args:
        text = arg.decode("utf-8", "surrogateescape") if isinstance(arg, bytes) else arg
        first = text.split("/")[0]
        if (first in FIXTURES or first.startswith("c-") and first[2:-5] in CONFIGS
                or first.startswith("t-") and first[2:-3] in TEMPLATES):
            _make_fixture(folder, first)


def config_cases():
    subs = _rotating()
    out = []
    for name in CONFIGS:
        if name in ("bert", "bert-untied"):
            continue
        out.append(command(next(subs), None, "bert", "--config", f"c-{name}.json", needle=f"c-{name}.json"))
    for path in ("nope.json", "emptydir", "cfgdir-fifo", "/dev/zero", "big.json", "latin1.json", "bom.json",
                 "zero-link.json", "loop.json"):
        out.append(command(next(subs), None, "bert", "--config", path))
    out += [case("count", "--config", "/proc/self/mem"), case("prove", "--config", "cfg\x1b[2J.json"),
            case("count", "--config", "c-bert.json", "--head", "seq2seq-lm", needle="seq2seq-lm"),
            case("count", "--config", "c-bert-untied.json", "--head", "masked-lm", needle="tie_word_embeddings"),
            case("derive", "--config", "cfgdir-bad", "--format", "md", needle="cfgdir-bad")]
    return out


def template_cases():
    formats = ("md", "tex", "html")
    out = []
    for i, name in enumerate(TEMPLATES):
        out.append(case("derive", "bert-base", "--format", formats[i % 3], "--template", f"t-{name}.j2",
                        needle=f"t-{name}.j2"))
    for path in ("fifo", "/dev/zero", "big.j2", "latin1.j2"):
        out.append(case("derive", "bert-base", "--format", "md", "--template", path))
    return out


LONG_NAME = "x" * 300 + ".md"


def output_cases():
    """Outputs that cannot be written, and old files a failing command must leave as they were."""
    derive = ("derive", "bert-base", "--format", "md")
    grid = ("--grid", "H=768,1024")
    out = [case(*derive, "-o", path) for path in
           ("fifo", "emptydir", "/dev/full", "missing/out.md", LONG_NAME, "missing/\x1b[2Kout.md")]
    out += [case("derive", "nosuchmodel", "--format", "md", "-o", "old.md"),
            case("derive", "bert-base", "--set", "H=0", "--format", "tex", "-o", "old.md"),
            case("derive", "bert-base", "--format", "pdf", "-o", "old.md"),
            case("derive", "bert-base", "--format", "tex", "--template", "t-undefined.j2", "--output", "old.md"),
            case("derive", "bert-base", "--format", "md", "--template", "t-concat-bomb.j2", "-o", "old.md"),
            case("derive", "--config", "c-malformed.json", "--format", "html", "-o", "old.md")]
    out += [case("sweep", "bert-base", *grid, "--csv", path) for path in
            ("fifo", "dir.csv", "missing/x.csv")]
    out += [case("sweep", "bert-base", "--grid", "H=768:1024:0", "--csv", "old.csv"),
            case("sweep", "nosuchmodel", *grid, "--csv", "old.csv"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--json"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "old.png"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "dir.svg"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "fifo.svg"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "missing/x.svg")]
    out += [case("sweep", "bert-base", *grid, "--plot", path) for path in ("out.png", "fifo.svg")]
    out += [case("sweep", "bert-base", "--grid", "H=1:1000000", "--plot", "old.svg", needle="100,000"),
            case("sweep", "bert-base", "--grid", "H=0,768", "--plot", "old.svg")]
    return out


def sweep_cases():
    s = ("sweep", "bert-base")
    specs = ["H=", "=768", "H", "H=768:1024:0", "H=768:1024:", "H=768:1024:-64", "H=1024:768:64", "H=768,,1024",
             "H=1:1000000000000", "Q=1,2", "pooler=true,false", "E=128,256", "H=1:2:3:4", "H=768:1024:1e3",
             "H=768:1024:1.5", "r=3:4:1/0", "H=0:768:12", f"H=768:1024:{DIGITS}", f"r=3:4:1/{DIGITS}",
             "r=3:4:1/1000000000000", "H=768:1024:64\x1b[2K"]
    out = [case(*s, "--grid", spec) for spec in specs]
    out += [case(*s, needle="grid"),
            case(*s, "--grid", "H=1:100000", "--grid", "L=1:100000", needle="10^9"),
            case(*s, "--grid", "H=1:100000000000000000000", "--force"),
            case(*s, "--grid", "H=768", "--grid", "H=1024", needle="twice"),
            case(*s, "--grid", "H=768", "--set", "H=1024", needle="H"),
            case("sweep", "t5-small", "--grid", "r=1,2"),
            case("sweep", "albert-base-v2", "--grid", "hidden_groups=1,2")]
    return out


def solve_cases():
    s = ("solve", "bert-base", "--for", "H")
    targets = ["0", "-5", "1.5", "abc", "1e100000", "", "1/0", "inf", "٣", DIGITS]
    out = [case(*s, "--target", t) for t in targets]
    out += [case("solve", "bert-base", "--target", "1e9", "--for", f) for f in
            ("Q", "pooler", "E", "", "H ", "A", "\x1b[2KH")]
    out += [case(*s, "--target", "1e9", "--set", "H=768", needle="H")]
    return out


def cost_cases():
    """flops, memory and explain: their own options, and FLOPs in solve and sweep."""
    flops, memory, explain = ("flops", "llama-3-8b"), ("memory", "llama-3-8b"), ("explain", "bert-base")
    out = [case(*flops, "--seq", n) for n in ("0", "-1", "1.5", "abc", "", DIGITS, "1e3")]
    out += [case(*flops, needle="--seq"), case(*flops, "--seq", "8", "--batch", "0"),
            case("flops", "bert", "--seq", "8", needle="V"), case(*flops, "--seq", "8", "--macs", "2")]
    out += [case(*memory, "--dtype", "fp64"), case(*memory, "--optimizer", "lion"), case(*memory, "--zero", "4"),
            case(*memory, "--ranks", "0"), case(*memory, "--seq", "-8"), case(*memory, "--tensor-parallel", "0"),
            case(*memory, "--dtype", "int4", needle="int4"), case(*memory, "--recompute", "some"),
            case("memory", "bert-base", "--optimizer", "none", "--fit", "80GB", needle="grow")]
    out += [case(*memory, "--optimizer", "none", "--seq", "8", "--fit", budget, needle="budget")
            for budget in ("abc", "0", "-80GB", "80XB", "1.5", "1e99999")]
    out += [case(*explain, "--claim", claim) for claim in
            ("abc", "0", "-5", "", "1e999999", "7 billionz", "1/0", "nan", "٣", DIGITS, "110M\x1b[2K")]
    out += [case(*explain, needle="--claim"), case("explain", "bert", "--claim", "110M", needle="V")]
    out += [case("sweep", "bert-base", "--of", "flops", "--grid", "L=1,2", needle="--seq"),
            case("sweep", "bert-base", "--of", "joules", "--grid", "L=1,2"),
            case("sweep", "bert-base", "--grid", "s=1,2", "--seq", "8", needle="--of"),
            case("sweep", "bert-base", "--of", "flops", "--grid", "s=0,8"),
            case("sweep", "bert-base", "--of", "flops", "--grid", "s=8,16", "--seq", "8", needle="s"),
            case("solve", "bert-base", "--target", "1e12", "--for", "s", needle="s"),
            case("solve", "bert-base", "--of", "flops", "--target", "1e12", "--for", "L", needle="--seq"),
            case("solve", "bert-base", "--of", "flops", "--seq", "8", "--target", "1e12", "--for", "A", needle="A")]
    return out


def shell_cases():
    """The shell's failures before any prompt (stdin is /dev/null: a prompt would read EOF and exit 0)."""
    return [case("shell", "--plain", "nosuchmodel"), case("shell", "bert-base", "extra"), case("shell", "--config", ""),
            case("shell", "--config", "c-list.json", "--plain"), case("shell", "llama-3-8b", "--set", "G=5"),
            case("shell", "bert-base", "--head", "seq2seq-lm")]


def encoding_cases():
    """Arguments that are not UTF-8 (a file name in Latin-1 from a shell): bytes, never a crash."""
    return [case(b"count", b"bert-base\xff"), case(b"count", b"bert-base", b"--set", b"H=\xff"),
            case(b"derive", b"bert-base", b"--format", b"md", b"--template", b"\xff.j2"),
            case(b"sweep", b"bert-base", b"--grid", b"H=768,\xff")]


TABLE = [*value_cases(), *switch_cases(), *head_and_key_cases(), *constraint_cases(), *missing_value_cases(),
         *option_cases(), *top_level_cases(), *generic_cases(), *config_cases(), *template_cases(),
         *output_cases(), *sweep_cases(), *solve_cases(), *cost_cases(), *shell_cases(), *encoding_cases()]


# -- must succeed safely: hostile titles and names are text, escaped for the format ----------------------------

#: the characters each format must escape in user text
MUST_ESCAPE = {"tex": set("\\{}$&#^_~%<>|\""), "md": set("\\$#_<>[]*`|~"), "html": set("<>&")}
CONTROLS = "\x01\x07\x08\x1b\x7f\x85\x9b\r\x0b\x0c"
CONTROL_TITLE = "".join(f"C{i}c{c}" for i, c in enumerate(CONTROLS)) + f"C{len(CONTROLS)}c"


def no_control_characters(text: str) -> list:
    bad = sorted({c for c in text if unicodedata.category(c) == "Cc" and c != "\n"})
    return [f"control characters in the output: {bad!r}"] if bad else []


def _in_code_span(out: str, index: int) -> bool:
    """Whether ``out[index]`` is inside a Markdown code span (an odd number of unescaped backticks before it
    on its line), where every character is literal."""
    before = out[out.rfind("\n", 0, index) + 1:index]
    return len(re.findall(r"(?<!\\)`", before)) % 2 == 1


def escaped(fmt: str):
    """A check: every special of :data:`MARKED` that ``fmt`` must escape never stands raw between its markers
    (in Markdown, but inside a code span)."""
    def check(out: str) -> list:
        found = [] if "Q0q" in out and f"Q{len(SPECIALS)}q" in out else ["the text is not in the document"]
        for i, c in enumerate(SPECIALS):
            raw = f"Q{i}q{c}Q{i + 1}q"
            if c not in MUST_ESCAPE[fmt]:
                continue
            at = [m.start() for m in re.finditer(re.escape(raw), out)]
            if any(not (fmt == "md" and _in_code_span(out, k)) for k in at):
                found.append(f"{c!r} not escaped: {raw!r} in the output")
        return found + no_control_characters(out)
    return check


def absent(*fragments, present=()):
    def check(out: str) -> list:
        found = [f"{f!r} in the output" for f in fragments if f in out]
        found += [f"{p!r} missing from the output" for p in present if p not in out]
        return found + no_control_characters(out)
    return check


def no_line_starting(prefix):
    def check(out: str) -> list:
        return [f"a line starts with {prefix!r}"] * any(line.startswith(prefix) for line in out.splitlines()) \
            + no_control_characters(out)
    return check


def safe_cases():
    out = []
    for fmt in ("md", "tex", "html"):
        derive = ("derive", "bert-base", "--format", fmt)
        out += [case(*derive, "--title", MARKED, expect="ok", check=escaped(fmt), label=f"{fmt}: title of specials"),
                case(*derive, "--title", CONTROL_TITLE, expect="ok", label=f"{fmt}: title of control characters",
                     check=absent(present=[f"C{len(CONTROLS)}c"])),
                case("derive", "--config", HOSTILE_FOLDER, "--format", fmt, expect="ok", check=escaped(fmt),
                     label=f"{fmt}: model named by a folder of specials"),
                case("derive", "--config", "cfg\x1b]0;pwned\x07", "--format", fmt, expect="ok", check=absent(),
                     label=f"{fmt}: model named by a folder with a terminal escape")]
    out += [case("derive", "bert-base", "--format", "tex", "--title", "\\input{/etc/passwd}\\immediate\\write18{id}",
                 expect="ok", check=absent("\\input{/etc/passwd}", "\\write18{")),
            case("derive", "bert-base", "--format", "tex", "--title", "^^5cinput^^7b/etc/passwd^^7d",
                 expect="ok", check=absent("^^5c")),
            case("derive", "bert-base", "--format", "md", "--title", "x\n# injected\n```\n<script>alert(1)</script>",
                 expect="ok", check=no_line_starting("# injected")),
            case("derive", "bert-base", "--format", "md", "--title", "[click](javascript:alert(1)) ![i](http://e/x)",
                 expect="ok", check=absent("[click](javascript", "![i](http")),
            case("derive", "bert-base", "--format", "html", "--title",
                 "</title><script>alert(1)</script><img src=x onerror=alert(1)><!--", expect="ok",
                 check=absent("<script>alert(1)", "<img src=x", "</title><script>", "<!--")),
            case("count", "--config", "cfg\x1b]0;pwned\x07", expect="ok", check=absent(),
                 label="count: model named by a folder with a terminal escape"),
            case("count", "bert-base", "--set", "r=1e3", expect="ok", check=absent(present=["r=1000"])),
            case("count", "bert-base", "--set", "pooler=OFF", "--set", "H=+768", expect="ok", check=absent())]
    return out


def either_cases():
    """Valid but extreme input: a result or a one-line error, never a traceback, a hang or a memory blow-up."""
    big = "1" + "0" * 3000
    return [case("count", "bert-base", "--set", f"H={big}", "--set", "A=1", expect="either"),
            case("formula", "bert", "--set", f"H={big}", expect="either"),
            case("prove", "bert-base", "--set", f"H={big}", "--set", "A=1", expect="either"),
            case("derive", "bert-base", "--set", f"H={big}", "--set", "A=1", "--format", "md", expect="either"),
            case("sweep", "bert-base", "--grid", f"H={big},{big}0", "--set", "A=1", expect="either"),
            case("count", "albert-base-v2", "--set", "hidden_groups=" + "9" * 4200, expect="either"),
            case("solve", "bert-base", "--for", "H", "--target", "1e4299", "--set", "V=1" + "0" * 4000,
                 expect="either"),
            case("derive", "bert-base", "--format", "md", "--template", "t-self.j2", expect="either"),
            case("derive", "bert-base", "--format", "md", "-o", "", expect="either"),
            case(b"derive", b"bert-base", b"--format", b"md", b"--title", b"caf\xe9", expect="either"),
            case(b"derive", b"bert-base", b"--format", b"md", b"--title", b"caf\xe9", b"-o", b"old.md",
                 expect="either"),
            case("flops", "bert-base", "--seq", "9" * 4000, "--set", f"L={big}", expect="either"),
            case("memory", "llama-3-8b", "--optimizer", "none", "--seq", "8", "--fit", DIGITS + "GB",
                 expect="either"),
            case("explain", "bert-base", "--set", f"H={big}", "--set", "A=1", "--claim", "1e3000", expect="either")]


TEMPLATES["self"] = "{{ self }}"
SAFE = safe_cases()
EITHER = either_cases()


# -- running a case ---------------------------------------------------------------------------------------------

@dataclass
class Result(Outcome):
    changes: list  # what the case did to its working directory's tree


def snapshot(folder: Path) -> dict:
    """Every entry under ``folder``: its type, mode and (for a regular file) a hash of its contents."""
    tree = {}
    for path, dirs, files in os.walk(folder):
        for name in dirs + files:
            full = os.path.join(path, name)
            st = os.lstat(full)
            rel = os.path.relpath(full, folder)
            if stat.S_ISREG(st.st_mode):
                with open(full, "rb") as fh:
                    tree[rel] = ("file", oct(st.st_mode), hashlib.sha256(fh.read()).hexdigest())
            elif stat.S_ISLNK(st.st_mode):
                tree[rel] = ("link", os.readlink(full))
            else:
                tree[rel] = (stat.filemode(st.st_mode)[0], oct(st.st_mode))
    return tree


def differences(before: dict, after: dict) -> list:
    return ([f"created {k!r}" for k in after.keys() - before.keys()]
            + [f"removed {k!r}" for k in before.keys() - after.keys()]
            + [f"changed {k!r}" for k in before.keys() & after.keys() if before[k] != after[k]])


def run_case(c: Case) -> Result:
    with tempfile.TemporaryDirectory(prefix="symparams-bad-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        materialize(work, c.args)
        before = snapshot(work)
        if c.group == "shell":
            # a fresh interpreter: the shell imports IPython, which reads HOME and IPYTHONDIR when imported and
            # leaves threads and atexit work behind; a shell that started anyway must not touch the real HOME
            env = dict(os.environ, HOME=str(work), IPYTHONDIR=str(work / ".ipython"))
            r = run_fresh(c.args, work, CASE_SECONDS, env)
        else:
            r = run_forked(c.args, work, CASE_SECONDS)
        return Result(**vars(r), changes=differences(before, snapshot(work)))


def _one_error_line(r: Result, needle) -> list:
    text = r.err.decode("utf-8", "replace")
    lines = text.splitlines()
    if r.code != 2:
        return [f"exit status {r.code}, not 2"]
    if len(lines) != 1 or not text.endswith("\n"):
        return [f"{len(lines)} lines on stderr, not one"]
    found = []
    if not lines[0].startswith("symparams: error: "):
        found.append("stderr does not start with 'symparams: error: '")
    controls = sorted({ch for ch in lines[0] if unicodedata.category(ch) == "Cc"})
    if controls:
        found.append(f"control characters in the error line: {controls!r}")
    if needle is not None and needle not in lines[0]:
        found.append(f"the error does not name {needle!r}")
    return found


def problems(c: Case, r: Result) -> list:
    found = []
    if r.timed_out:
        found.append(f"still running after {CASE_SECONDS} s: killed")
    elif r.seconds > CASE_SECONDS:
        found.append(f"took {r.seconds:.1f} s")
    if r.peak_kb is None and not r.timed_out:
        found.append("no peak memory reported")
    elif r.peak_kb is not None and r.peak_kb > MEMORY_KB:
        found.append(f"peak memory {r.peak_kb // 1024} MB")
    if b"Traceback" in r.err:
        found.append("a traceback")
    changes = r.changes
    if c.expect == "either" and r.code == 0:  # a result may be written to the files the case names
        named = {os.fsdecode(a) for a in c.args}
        changes = [d for d in changes if d.split(" ", 1)[1].strip("'") not in named]
    found += [f"files: {d}" for d in changes]
    if c.expect == "error" or (c.expect == "either" and r.code != 0):
        found += _one_error_line(r, c.needle)
    else:
        if r.code != 0 or r.err:
            found.append(f"exit status {r.code} with {len(r.err.splitlines())} lines on stderr, not 0 and none")
        try:
            out = r.out.decode("utf-8")
        except UnicodeDecodeError as exc:
            found.append(f"the output is not UTF-8 ({exc.reason} at byte {exc.start})")
            out = r.out.decode("utf-8", "replace")
        if c.check is not None and r.code == 0:
            found += c.check(out)
    return found


@pytest.fixture(scope="module")
def outcome(request):
    """``outcome(case)``: the case's :class:`Result`.  Every selected case of this module is started when the
    first is asked for, two at a time, so later tests find theirs done.  Under pytest-xdist a worker runs only
    the tests it is handed, which it cannot know in advance, and the workers already run two at a time: each
    case is started when its test asks for it."""
    selected = []
    for item in [] if hasattr(request.config, "workerinput") else request.session.items:
        spec = getattr(item, "callspec", None)
        if spec is not None and item.module is request.module and isinstance(spec.params.get("case"), Case):
            selected.append(spec.params["case"])
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {c: pool.submit(run_case, c) for c in dict.fromkeys(selected)}

    def get(c):
        if c not in futures:
            futures[c] = pool.submit(run_case, c)
        return futures[c].result()

    yield get
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module", autouse=True)
def _runners():
    """The runners of the forked cases (one per thread, started on first use) stop with this module."""
    yield
    close_runners()


def check(c: Case, outcome) -> None:
    r = outcome(c)
    found = problems(c, r)
    shown = " ".join(repr(os.fsdecode(a)) if not os.fsdecode(a).isprintable() or " " in os.fsdecode(a)
                     or not a else os.fsdecode(a) for a in c.args)
    assert not found, (f"symparams {shown[:300]}\n  " + "\n  ".join(found)
                       + f"\n  exit status {r.code}, {r.seconds:.1f} s, peak {r.peak_kb} kB"
                       + f"\n  stderr: {r.err[-1500:].decode('utf-8', 'replace')!r}")




#: cases that fail because of a bug in the package (case id -> what goes wrong); marked xfail(strict=True)
XFAIL: dict = {}


def params(cases):
    return [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=XFAIL[c.id])]
                         if c.id in XFAIL else []) for c in cases]


def by_group(group):
    return params([c for c in TABLE if c.group == group])


def test_the_table_is_large_and_every_xfail_names_a_case():
    ids = [c.id for c in [*TABLE, *SAFE, *EITHER]]
    assert len(ids) == len(set(ids))
    assert len(TABLE) >= 300
    assert {c.group for c in TABLE} == {"top", *SUBCOMMANDS}
    assert set(XFAIL) <= set(ids), set(XFAIL) - set(ids)


@pytest.mark.parametrize("case", by_group("top"))
def test_top_level(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("list"))
def test_list(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("count"))
def test_count(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("formula"))
def test_formula(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("prove"))
def test_prove(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("flops"))
def test_flops(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("memory"))
def test_memory(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("explain"))
def test_explain(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("derive"))
def test_derive(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("solve"))
def test_solve(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("sweep"))
def test_sweep(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", by_group("shell"))
def test_shell(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", params(SAFE))
def test_must_succeed_safely(case, outcome):
    check(case, outcome)


@pytest.mark.parametrize("case", params(EITHER))
def test_extreme_but_valid(case, outcome):
    check(case, outcome)
