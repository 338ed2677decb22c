"""Bad input on the command line, case by case: one line on stderr naming the problem, exit status 2, quickly.

Never a traceback, a hang, a file left half written or an old file destroyed.
Single cases written out by hand (each run in this process as ``python -m
symparams`` would run: :mod:`tests.reference.in_process`), then races and kills, each in a fresh interpreter: eight ``derive -o`` writers
of one file, ``kill -9`` of a ``derive -o`` and of a ``sweep --csv`` mid-write
(the old file stays whole; a stray ``.symparams-*.part`` is all SIGKILL may
leave) and SIGTERM mid-write.  The generated table of a few hundred command
lines is in ``test_bad_input_table.py``.
"""

import json
import re
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.reference.in_process import command_here

TIMEOUT = 30  # seconds; every case below answers in about one


def run(*args, cwd=None):
    """``symparams ARGS`` run in this process as ``python -m symparams`` would run (see
    :mod:`tests.reference.in_process`; what these cases check needs no process of its own, and the bad-input
    table runs a sample of such cases both ways): status, stdout, stderr."""
    return command_here(*args, cwd=cwd, seconds=TIMEOUT)


def assert_one_line_error(code, err, needle):
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("symparams: error: "), err
    assert needle in lines[0], lines[0]


@pytest.fixture(scope="session")
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


# -- what a command writes, and user text it echoes -------------------------------------------------------------

def test_a_read_only_file_is_refused_and_kept(tmp_path):
    doc, csv = tmp_path / "doc.md", tmp_path / "grid.csv"
    for path in (doc, csv):
        path.write_text("old\n")
        path.chmod(0o444)  # root could still write it (as this suite may run): its mode says not to
    assert_one_line_error(*run("derive", "bert-base", "--format", "md", "-o", str(doc))[::2], "read-only")
    assert_one_line_error(*run("sweep", "bert-base", "--grid", "L=1:3:1", "--csv", str(csv))[::2], "read-only")
    assert doc.read_text() == csv.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.md", "grid.csv"]


def test_a_symbolic_link_is_written_through(tmp_path):
    (tmp_path / "real.csv").write_text("old\n")
    (tmp_path / "link.csv").symlink_to("real.csv")
    code, out, err = run("sweep", "bert-base", "--grid", "L=1:2:1", "--csv", str(tmp_path / "link.csv"))
    assert code == 0 and err == ""
    assert (tmp_path / "link.csv").is_symlink() and os.readlink(tmp_path / "link.csv") == "real.csv"
    assert (tmp_path / "real.csv").read_text() == "L,parameters\n1,31515648\n2,38603520\n"  # BERT-base, L = 1, 2


def test_a_failing_plot_leaves_the_old_csv(tmp_path):
    csv = tmp_path / "grid.csv"
    csv.write_text("old\n")
    huge = "1" + "0" * 160  # H = 10^160: a count near 10^321, beyond a float
    assert_one_line_error(*run("sweep", "bert-base", "--set", "A=1", "--grid", f"H={huge},{huge}0", "--csv",
                               str(csv), "--plot", str(tmp_path / "g.svg"))[::2], "beyond a float's range")
    assert csv.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.csv"]


def test_a_model_name_is_never_mathtext_in_a_plot(tmp_path):
    folder = tmp_path / "m$\\frac{$"  # matplotlib would parse $...$ and fail on the unclosed brace
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "num_hidden_layers": 2}))
    code, out, err = run("sweep", "--config", str(folder), "--grid", "L=1:2:1", "--plot", str(tmp_path / "g.svg"),
                         cwd=str(tmp_path))
    assert code == 0 and err == "", err
    assert (tmp_path / "g.svg").read_text().startswith("<?xml")


def test_a_template_writing_a_lone_surrogate_is_one_line(tmp_path):
    (tmp_path / "t.j2").write_text('{{ "%c" % 55296 }}')
    for output in ((), ("-o", str(tmp_path / "out.md"))):
        assert_one_line_error(*run("derive", "bert-base", "--format", "md", "--template", str(tmp_path / "t.j2"),
                                   *output)[::2], "U+D800")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.j2"]


@pytest.mark.parametrize("config", [{"model_type": "bert", "num_hidden_layers": 2}, {"model_type": "olmo"}],
                         ids=["hand-written", "inferred"])
def test_a_folder_name_never_becomes_markup_in_a_document(tmp_path, config):
    folder = tmp_path / "evil`\n\n# Injected\n<img src=x onerror=alert(1)>"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    code, out, err = run("derive", "--config", str(folder), "--format", "md", cwd=str(tmp_path))
    assert code == 0 and err == "", err
    assert not [line for line in out.splitlines() if line.startswith(("# Injected", "<img"))]
    # the name cannot be shown as a command: PATH stands in for it in every command the document suggests
    commands = re.findall(r"`symparams [^`]*`", out)
    assert commands and all("--config PATH" in c for c in commands if "--config" in c)
    assert any("--config PATH" in c for c in commands) and not [c for c in commands if "evil" in c]


@pytest.mark.parametrize("args,needle", [
    (["memory", "bert-base", "--zero", "\uff13"], "ZeRO stage must be 0, 1, 2 or 3"),  # a fullwidth 3
    (["memory", "bert-base", "--zero", "\u0663"], "ZeRO stage must be 0, 1, 2 or 3"),  # an Arabic-Indic 3
    (["memory", "bert-base", "--zero", "1.0"], "ZeRO stage must be 0, 1, 2 or 3"),
    (["memory", "bert-base", "--fit", "\u0668\u0660GB"], "a memory budget is a number of bytes"),
    (["memory", "bert-base", "--fit", "\uff18\uff10GB"], "a memory budget is a number of bytes"),
], ids=["fullwidth zero", "arabic zero", "float zero", "arabic fit", "fullwidth fit"])
def test_digits_are_ascii_digits(args, needle):
    assert_one_line_error(*run(*args)[::2], needle)


def test_a_very_long_name_is_cut_in_the_error_line():
    code, out, err = run("count", "x" * 100_000)
    assert_one_line_error(code, err, "… (100,000 characters)")
    assert len(err) < 300


def test_the_api_refuses_a_key_that_is_not_text_and_a_float_zero_stage():
    from symparams import SymparamsError, model

    with pytest.raises(SymparamsError, match="keys are field names"):
        model({"model_type": "olmo", 5: 1})
    with pytest.raises(SymparamsError, match="keys are field names"):
        model({"model_type": "llava", "text_config": {None: 1}})
    with pytest.raises(SymparamsError, match="ZeRO stage"):
        model("bert-base").memory(zero=1.0)
    with pytest.raises(SymparamsError, match="ZeRO stage"):
        model("bert-base").memory(zero=True)


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
        if caught:
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
