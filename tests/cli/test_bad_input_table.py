"""The bad-input table, run and checked against the product's promise for bad input.

The table (:data:`~tests.cli.bad_input_cases.TABLE`: a few hundred :class:`Case` rows generated
from smaller tables, every family, symbol, switch, head, option and kind of
hostile file) is checked against the product's promise for bad input:

* exit status 2 and exactly one line on stderr, starting ``symparams: error: ``
  (with no control character in it, which could forge more lines on a terminal),
  naming the offending value where the row gives a ``needle``;
* never ``Traceback``;
* done within :data:`CASE_SECONDS` (10 s): the case is stopped at the
  deadline (a process's whole session killed; an in-process case interrupted
  by ``SIGALRM``);
* peak memory at most :data:`MEMORY_KB` (500 MB).  It is measured, not
  capped: for a process, its peak resident set size (``ru_maxrss`` from
  ``wait4``); in-process, how far the process's peak resident set size rose
  during the case (:mod:`tests.reference.in_process`).  (A cap with ``RLIMIT_AS`` would turn a memory bomb
  into a ``MemoryError`` the program might report as a tidy one-line error,
  hiding the bomb.)
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

Most cases need no process of their own: what a bad value, option, model or
output path makes the command line say is decided by parsing and the
library's checks, so they run in this process, as ``python -m symparams``
would run (:mod:`tests.reference.in_process`), in milliseconds instead of a
process's start.  The shell and the extreme inputs of :data:`EITHER` run as
processes of their own (:func:`~tests.reference.cli_runner.run_forked`), two
at a time, started when the first case is needed; so does a sample of the
in-process cases (:data:`SAMPLED`, the first of each subcommand), which must
give the same answer both ways.  Each parametrized test waits for its own
result, so a failure names its exact case.  A user's template is stopped
after :data:`TEMPLATE_SECONDS` here rather than the product's 5 s (which the
API's bad-input table, ``tests/core/test_bad_api.py``, meets with a template
that loops forever): what this table checks is that every hostile template is
stopped, and answered as the promise says.
Known package bugs are listed in :data:`XFAIL` (case id → what goes
wrong) and marked ``xfail(strict=True)``; when the package is fixed, the case
passes, the strict xfail fails, and the entry is to be removed.
"""

import concurrent.futures
import hashlib
import os
import re
import stat
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.bad_input_cases import CASE_SECONDS, DIGITS, MEMORY_KB, SUBCOMMANDS, TABLE, Case, case
from tests.cli.bad_input_files import HOSTILE_FOLDER, MARKED, SPECIALS, TEMPLATES, materialize
from tests.reference.cli_runner import Outcome, close_runners, run_forked
from tests.reference.in_process import run_in_process

from symparams.documents import render as render_module

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


def needs_a_process(c: Case) -> bool:
    """Whether the promise can be checked only on a process of its own: the shell (its own HOME, and the threads
    and exit work IPython would leave), and valid but extreme input (a memory or time bomb, which only a process
    can be killed for, and measured by its resident size).  Every other case runs in-process
    (:mod:`tests.reference.in_process`)."""
    return c.group == "shell" or c.expect == "either"


def _first_of_each_group(cases) -> set:
    first = {}
    for c in cases:
        if not needs_a_process(c):
            first.setdefault(c.group if c.expect == "error" else c.expect, c)
    return set(first.values())


#: the in-process cases also run as processes of their own, where both must answer the same: the first of each
#: subcommand's errors, and the first case that must succeed
SAMPLED = _first_of_each_group([*TABLE, *SAFE])


def run_case(c: Case, forked: bool = False) -> Result:
    """``c`` run in a fresh working directory: in this process, or as a process of its own when it needs one
    or ``forked`` asks for one; what it did to the directory's tree is in the result."""
    with tempfile.TemporaryDirectory(prefix="symparams-bad-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        materialize(work, c.args)
        before = snapshot(work)
        if forked or needs_a_process(c):
            # the shell imports IPython, which reads HOME and IPYTHONDIR when imported: a shell that started
            # anyway must not touch the real HOME
            home = {"HOME": str(work), "IPYTHONDIR": str(work / ".ipython")} if c.group == "shell" else None
            r = run_forked(c.args, work, CASE_SECONDS, home)
        else:
            r = run_in_process(c.args, work, CASE_SECONDS)
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
    """``outcome(case, forked=False)``: the case's :class:`Result`, run in this process unless it needs a process
    of its own or ``forked`` asks for one.  The processes are started, two at a time, when the first case is asked
    for, so later tests find theirs done; in-process cases run when their test asks (in the main thread, where
    their deadline's signal reaches them).  Under pytest-xdist a worker runs only the tests it is handed, which it
    cannot know in advance, and the workers already run two at a time: each process is started when its test asks
    for it."""
    selected = []
    for item in [] if hasattr(request.config, "workerinput") else request.session.items:
        spec = getattr(item, "callspec", None)
        if spec is not None and item.module is request.module and isinstance(spec.params.get("case"), Case):
            selected.append(spec.params["case"])
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {(c, True): pool.submit(run_case, c, True) for c in dict.fromkeys(selected)
               if needs_a_process(c) or c in SAMPLED}
    done = {}

    def get(c, forked=False):
        forked = forked or needs_a_process(c)
        if not forked:
            if c not in done:
                done[c] = run_case(c)
            return done[c]
        if (c, True) not in futures:
            futures[c, True] = pool.submit(run_case, c, True)
        return futures[c, True].result()

    yield get
    pool.shutdown(wait=True, cancel_futures=True)


TEMPLATE_SECONDS = 0.5


@pytest.fixture(scope="module", autouse=True)
def _templates_stopped_sooner():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render_module, "RENDER_SECONDS", TEMPLATE_SECONDS)
        yield


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


def answer(r: Result) -> tuple:
    """What a user sees of a run: status, output, error and the files it changed (the case's own folder, a new
    one for each run, named alike)."""
    def same_folder(data: bytes) -> bytes:
        return re.sub(rb"/[^\s'\"]*/symparams-bad-[^/\s]+/work", b"WORK", data)
    return r.code, same_folder(r.out), same_folder(r.err), r.changes


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


def test_the_in_process_memory_measure_sees_what_a_case_holds_at_its_peak():
    """A case that holds 300 MB for a moment and frees it shows a peak of at least 300 MB (a measure blind to
    memory freed before the case ended, or to memory C code takes, would let a bomb pass)."""
    from tests.reference.in_process import _resident_peak

    with _resident_peak(True) as peak:
        held = bytearray(300 << 20)
        held[::4096] = b"\1" * len(held[::4096])  # every page touched, so resident
        del held
    assert peak() >= 290 << 10  # a few pages of it may have been resident already


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


@pytest.mark.parametrize("case", by_group("audit"))
def test_audit(case, outcome):
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


@pytest.mark.parametrize("case", params([c for c in [*TABLE, *SAFE] if c in SAMPLED]))
def test_a_sample_answers_in_a_process_of_its_own_as_in_process(case, outcome):
    """The in-process runs stand for processes: a sample of them, run as ``python -m symparams`` would run (a
    process of its own, its real exit status and streams), gives the same answer and keeps the promise there too."""
    forked = outcome(case, forked=True)
    assert answer(forked) == answer(outcome(case))
    assert not problems(case, forked)
