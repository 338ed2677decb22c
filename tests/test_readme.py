"""The README's examples are real: each command is run and its output compared; its table is complete.

The README's ```python block runs as a doctest (``--doctest-glob=README.md`` in pyproject.toml).
"""

import json
import re
import shlex
from fractions import Fraction

import pytest

from symparams.families.presets import all_presets
from symparams.families.registry import all_families
from tests.reference import ROOT
from tests.reference.examples import (blocks, check_console, check_sh, check_shell, console_examples,
                                      dollar_commands, sh_commands, shell_sessions)

README = ROOT / "README.md"
EXAMPLES = console_examples(README)
SH = sh_commands(README)
SESSIONS = shell_sessions(README)


def test_the_readme_doctest_runs_examples():
    # pytest collects a Markdown file whose doctest holds no example as nothing at all, and passes
    import doctest
    import tomllib

    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert "--doctest-glob=README.md" in addopts["addopts"].split()
    assert len(doctest.DocTestParser().get_examples(README.read_text(encoding="utf-8"))) >= 3


def test_readme_is_a_front_page_of_at_most_200_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_every_command_the_readme_shows_is_a_checked_example():
    # all but the interactive shell, whose session the README shows in a block of its own
    assert [c for c, _ in EXAMPLES] == [c for c in dollar_commands(README) if not c.startswith("symparams shell")]
    assert {c.split()[1] for c, _ in EXAMPLES} == {"count", "prove", "memory", "solve", "sweep"}
    # outputs too long to show (derive: Markdown, LaTeX, the HTML page; flops, explain) run in ```sh blocks
    assert {c.split()[1] for c in SH} == {"derive", "flops", "explain", "formula"}
    assert {f for c in SH if c.split()[1] == "derive" for f in re.findall(r"--format (\w+)", c)} == {"md", "tex", "html"}
    assert len(SESSIONS) == 1


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_console_example_output_is_what_the_program_prints(command, expected):
    check_console(command, expected)


@pytest.mark.parametrize("command", SH)
def test_readme_sh_command_runs(command):
    check_sh(command)


@pytest.mark.browser
def test_readme_chromium_line_opens_the_derived_page_at_the_values_it_gives(tmp_path):
    from tests.documents.test_html_page import Page, dump_url

    shown = next(line for block in blocks(README, "sh") for line in block.splitlines() if line.startswith("chromium"))
    for command in (c for c in SH if c.startswith("symparams derive bert-base --format html")):
        check_sh(command.replace("-o bert-base.html", f"-o {tmp_path / 'bert-base.html'}"))
    argv = shlex.split(shown.replace("$PWD", str(tmp_path)), comments=True)
    assert argv[0] == "chromium" and len(argv) == 2
    page = Page(dump_url(argv[1]))
    assert page.root.get("data-ready") == "1" and page.warnings == ""
    # BERT at H = 1536, L = 24, r = 43/16 (A = 12): H²(2L(r+2)+1) + H(L(r+9)+P+S+V+3), worked by hand
    r = Fraction(43, 16)
    total = 1536**2 * (2 * 24 * (r + 2) + 1) + 1536 * (24 * (r + 9) + 512 + 2 + 30522 + 3)
    assert page.root["data-total"] == str(total) == "581307648"


@pytest.mark.parametrize("session", SESSIONS, ids=lambda s: " ".join(s[0]))
def test_readme_shell_session_is_what_the_shell_prints(session):
    check_shell(*session)


def family_table():
    """``{family: (presets, transformers classes)}`` from the README's table of families and presets."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| family | presets | transformers class |"):].split("\n\n")[0].splitlines()[2:]
    rows = {}
    for line in table:
        family, presets, classes = [cell.strip() for cell in line.strip("|").split("|")]
        rows[family] = (re.findall(r"`([^`]+)`", presets), classes)
    return rows


def test_readme_table_lists_every_family_and_preset():
    rows = family_table()
    assert set(rows) == set(all_families())
    listed = [p for presets, _ in rows.values() for p in presets]
    assert sorted(listed) == sorted(all_presets())
    for name, preset in all_presets().items():
        presets, classes = rows[preset.family]
        assert name in presets, (name, preset.family)
        if preset.reference:  # the transformers class the cross-checks build for it
            assert f"`{preset.reference}`" in classes, (name, preset.reference)


def test_readme_links_point_to_files_that_exist_or_the_cli_reference():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8")):
        assert target == "docs/cli.md" or (ROOT / target).exists(), target


def test_readme_inferred_coverage_is_the_data_files():
    data = json.loads((ROOT / "symparams" / "families" / "data" / "inferred.json").read_text(encoding="utf-8"))
    exact = sum(entry["exact"] for entry in data["formulas"])
    text = README.read_text(encoding="utf-8")
    assert f"{exact} of {len(data['formulas'])} classes exact" in text
    costs = sum(entry["exact"] and (entry.get("costs") or {}).get("exact", False) for entry in data["formulas"])
    assert f"({costs} of the {exact} classes" in text
