"""Bad input on the command line: one line on stderr naming the problem, exit status 2, quickly.

Never a traceback, a hang, a file left half written or an old file destroyed.
Each case runs as a real process under a timeout.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

TIMEOUT = 30  # seconds; every case below answers in about one


def run(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "symparams", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


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
    (d / "nested-loops.j2").write_text("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}"
                                       "{% endfor %}")
    (d / "repeat.j2").write_text('{% set s = "x" * 900000 %}{% for i in range(100000) %}{{ s }}{% endfor %}')
    (d / "lipsum.j2").write_text("{{ lipsum(1000000) }}")
    return d


DIGITS = "9" * 5000

CASES = [
    # numbers: never converted when too long, exponents bounded (each used to crash or hang)
    (["count", "bert-base", "--set", f"H={DIGITS}"], "H: '999"),
    (["count", "bert-base", "--set", "r=1e5000"], "more than 4300 digits"),
    (["count", "bert-base", "--set", "r=1e100000000"], "more than 4300 digits"),
    (["solve", "bert-base", "--for", "H", "--target", "1e100000"], "more than 4300 digits"),
    (["sweep", "bert-base", "--grid", f"H=768:{DIGITS}:12"], "more than 4300 digits"),
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
    start = time.monotonic()
    assert_one_line_error(*run("count", "--config", str(files / name))[::2], needle)
    assert time.monotonic() - start < 10


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
    proc = subprocess.Popen([sys.executable, "-m", "symparams", "sweep", "bert-base", "--grid", "H=12:120000000:12",
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
    start = time.monotonic()
    code, out, err = run("prove", "bert-base", "--set", f"H={h}", "--set", "A=1", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["invariant"] is True and data["derivative"] == "0" and data["witness"] == {}
    assert time.monotonic() - start < 10


def test_control_characters_never_reach_a_document():
    title = "a\x01b\x1bc\x7fd"
    for fmt in ("md", "tex", "html"):
        code, out, err = run("derive", "bert-base", "--format", fmt, "--title", title)
        assert code == 0 and err == ""
        assert not any(c in out for c in "\x01\x1b\x7f")
        assert "abcd" in out
