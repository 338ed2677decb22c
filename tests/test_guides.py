"""The guides in docs/ are true: every example is run, every table and link checked.

A guide is a hand-written page of docs/ (not a generated ``<preset>.<lang>.md`` document).  Its
```python blocks of ``>>>`` lines run as a doctest; its ```console, ```sh and shell examples run as the
README's do (:mod:`tests.reference.examples`).
"""

import doctest
import re

import pytest

from symparams import model
from symparams.core.symbols import SYMBOLS
from symparams.documents import environment
from symparams.documents.context import context
from symparams.families.presets import all_presets
from symparams.families.registry import all_families, family
from tests.reference import ROOT
from tests.reference.examples import (check_console, check_sh, check_shell, console_examples, dollar_commands,
                                      sh_commands, shell_sessions)

DOCS = ROOT / "docs"
GENERATED = re.compile(r".+\.(en|zh)\.(md|tex)$")
GUIDES = sorted(p for p in DOCS.glob("*.md") if not GENERATED.match(p.name))
#: the guides this repository writes by hand (docs/cli.md, the CLI reference, is generated from the parser)
WRITTEN = ("README.md", "adapters.md", "audit.md", "articles.md", "benchmarks.md", "config.md", "development.md", "documents.md",
           "explore.md", "families.md", "python.md", "solve-sweep.md")


def _name(path):
    return path.name


def test_the_guides_are_there():
    assert set(WRITTEN) <= {p.name for p in GUIDES}


#: the guides with Python examples (a doctest of a page with none would pass whatever the page said)
WITH_PYTHON = [g for g in GUIDES if re.search(r"^\s*>>> ", g.read_text(encoding="utf-8"), re.M)]


def test_the_guides_with_python_examples_are_the_ones_that_teach_the_api():
    assert {g.name for g in WITH_PYTHON} == {"articles.md", "config.md", "costs.md", "documents.md", "explore.md",
                                             "families.md", "python.md", "solve-sweep.md"}


@pytest.mark.parametrize("guide", WITH_PYTHON, ids=_name)
def test_guide_python_examples_pass_as_doctests(guide):
    result = doctest.testfile(str(guide), module_relative=False, encoding="utf-8", report=True,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"no example of {guide.name} ran"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {guide.name} failed (see above)"


CONSOLE = [(g, c, out) for g in GUIDES for c, out in console_examples(g)]


@pytest.mark.parametrize("guide,command,expected", CONSOLE, ids=[f"{g.name}: {c}" for g, c, _ in CONSOLE])
def test_guide_console_example_output_is_what_the_program_prints(guide, command, expected):
    check_console(command, expected)


@pytest.mark.parametrize("guide", GUIDES, ids=_name)
def test_every_dollar_line_of_a_guide_is_a_checked_example(guide):
    shown = [c for c in dollar_commands(guide) if not c.startswith("symparams shell")]
    assert [c for c, _ in console_examples(guide)] == shown


SH = [(g, c) for g in GUIDES for c in sh_commands(g)]


@pytest.mark.parametrize("guide,command", SH, ids=[f"{g.name}: {c}" for g, c in SH])
def test_guide_sh_command_runs(guide, command):
    check_sh(command)


SESSIONS = [(g, s) for g in GUIDES for s in shell_sessions(g)]


@pytest.mark.parametrize("guide,session", SESSIONS, ids=[f"{g.name}: {' '.join(s[0])}" for g, s in SESSIONS])
def test_guide_shell_session_is_what_the_shell_prints(guide, session):
    check_shell(*session)


def test_guide_examples_cover_every_command():
    shown = {c.split()[1] for g, c, _ in CONSOLE} | {c.split()[1] for g, c in SH}
    assert {"count", "formula", "prove", "derive", "solve", "sweep", "list"} <= shown
    assert SESSIONS


@pytest.mark.parametrize("guide", GUIDES, ids=_name)
def test_guide_links_point_to_files_that_exist(guide):
    text = guide.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"\w+://", target):
            continue
        assert target == "cli.md" or (guide.parent / target).resolve().exists(), f"{guide.name}: {target}"
    assert "shared/articles" not in text  # users do not have the source articles' folder


# -- the tables of docs/families.md ----------------------------------------------------------------------

FAMILIES = DOCS / "families.md"


def _table(text, header):
    lines = text[text.index(header):].split("\n\n")[0].splitlines()[2:]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def test_families_guide_symbol_table_lists_every_symbol():
    rows = {row[0] for row in _table(FAMILIES.read_text(encoding="utf-8"), "| symbol | meaning |")}
    assert rows == set(SYMBOLS)


def test_families_guide_has_a_section_per_family():
    sections = re.findall(r"^## (\w+)$", FAMILIES.read_text(encoding="utf-8"), flags=re.M)
    assert set(all_families()) <= set(sections)


def _count(m):
    return f"{m.count:,}" + (f" ({m.trainable:,} trainable)" if m.trainable != m.count else "")


def test_families_guide_preset_table_is_what_the_presets_are():
    rows = _table(FAMILIES.read_text(encoding="utf-8"), "| preset | family | values and switches |")
    assert sorted(row[0].strip("`") for row in rows) == sorted(all_presets())
    for name, fam, settings, base, lm in rows:
        name = name.strip("`")
        preset = all_presets()[name]
        assert fam == preset.family, name
        values, _, switches = settings.partition(", ")
        assert dict(kv.split("=") for kv in values.split()) == {k: str(v) for k, v in preset.values.items()}, name
        assert dict(kv.split("=") for kv in switches.split()) == \
            {k: str(v).lower() for k, v in preset.switches.items()}, name
        assert base == _count(model(name)), name
        heads = [h for h in ("seq2seq-lm", "causal-lm") if h in family(fam).heads]  # an encoder–decoder: its own LM
        assert lm == (f"{model(name, head=heads[0]).count:,}" if heads else "—"), name


# -- docs/documents.md says what a template sees -----------------------------------------------------------

def test_documents_guide_names_every_filter_and_every_key_a_template_sees():
    text = (DOCS / "documents.md").read_text(encoding="utf-8")
    sandbox = environment.sandbox_environment("md")
    ours = set(sandbox.filters) - set(environment.jinja2.sandbox.ImmutableSandboxedEnvironment().filters)
    ctx = context(model("bert-base"))
    for name in (*ours, *ctx, *ctx["doc"]):
        assert f"`{name}`" in text, name


def test_the_families_at_a_glance_table_is_the_registrys():
    text = (DOCS / "families.md").read_text(encoding="utf-8")
    table = text[text.index("| family | `model_type` in config.json |"):].split("\n\n")[0].splitlines()[2:]
    rows = {}
    for line in table:
        name, types, heads, symbols = [cell.strip() for cell in line.strip("|").split("|")]
        rows[name.split("]")[0].lstrip("[")] = (types, heads, symbols)
    assert list(rows) == list(all_families())
    for name, fam in all_families().items():
        types, heads, symbols = rows[name]
        assert re.findall(r"`([^`]+)`", types) == list(fam.config_types), name
        assert heads == (", ".join(fam.heads) or "none"), name
        assert symbols.split() == fam.symbol_names(), name
