"""The live HTML page (symparams.documents.html): its formulas agree with the derivation, and, run in real
headless Chromium, values set in the page give the CLI's exact counts."""

import json
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
import sympy as sp

from symparams import model
from symparams.core.formatting import percent
from symparams.documents.context import title_of
from symparams.documents.derivation import derive
from symparams.documents.environment import catalog
from symparams.documents.html import contribution_formula
from symparams.families.presets import all_presets
from symparams.families.registry import all_families

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def cli(*args) -> dict:
    proc = subprocess.run([sys.executable, "-m", "symparams", *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout) if "--json" in args else proc.stdout


class Page(HTMLParser):
    """The dumped DOM: every <output> by id, the first output of each section, warnings, errors, scripts."""

    def __init__(self, text):
        super().__init__()
        self.outputs, self.sections, self.errors = {}, {}, {}
        self.scripts = 0
        self.root = {}
        self._capture = None
        self._section = None
        self.warnings = ""
        self.title = ""
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        if tag == "script":
            self.scripts += 1
        if tag == "div" and a.get("class") == "section":
            self._section = a["data-path"]
        if tag == "output" and "id" in a:
            self._capture = ("outputs", a["id"])
            self.outputs[a["id"]] = ""
            if self._section is not None:
                self.sections[self._section] = a["id"]
                self._section = None
        if tag == "p" and a.get("id") == "warnings":
            self._capture = ("warnings", None)
        if tag == "td" and a.get("class") == "error":
            self._capture = ("errors", a["id"][4:])
            self.errors[a["id"][4:]] = ""
        if tag == "title":
            self._capture = ("title", None)

    def handle_endtag(self, tag):
        if tag in ("output", "p", "td", "title"):
            self._capture = None

    def handle_data(self, data):
        if self._capture is None:
            return
        kind, key = self._capture
        if kind == "outputs":
            self.outputs[key] += data
        elif kind == "errors":
            self.errors[key] += data
        elif kind == "warnings":
            self.warnings += data
        elif kind == "title":
            self.title += data


def open_in_chromium(page: Path, fragment: str = "") -> Page:
    """Load ``page#fragment`` in headless Chromium, let its script run, and parse the DOM it ends with."""
    assert CHROMIUM, "chromium is not installed (apt-get install chromium; .ci/run installs it)"
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri() + (f"#{fragment}" if fragment else "")],
            capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Page(proc.stdout)
    assert dom.root.get("data-ready") == "1", "the page's script did not run to the end"
    return dom


@pytest.fixture(scope="module")
def bert_page(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "bert-base.html"
    cli("derive", "bert-base", "--format", "html", "-o", str(path))
    return path


@pytest.mark.browser
def test_setting_h_and_l_in_the_page_gives_the_clis_total(bert_page):
    dom = open_in_chromium(bert_page, "H=1536&L=24")
    expected = cli("count", "bert-base", "--set", "H=1536", "--set", "L=24", "--json")
    assert dom.outputs["total"] == f"{expected['total']:,}" == dom.outputs["live-total"]
    assert dom.root["data-total"] == str(expected["total"])
    assert dom.outputs["trainable"] == f"{expected['trainable']:,}"
    for name, count in expected["components"].items():
        assert dom.outputs[dom.sections[name]] == f"{count:,}"
        assert dom.outputs[dom.sections[name] + "-share"] == percent(count / __import__("sympy").Integer(
            expected["total"]))
    assert dom.warnings == ""


@pytest.mark.browser
def test_the_page_is_exact_beyond_two_to_the_53(bert_page):
    # numbers a float would round: BigInt arithmetic keeps every digit
    dom = open_in_chromium(bert_page, "H=12000000&L=1000000000&V=987654321")
    expected = model("bert-base", H=12_000_000, L=10**9, V=987_654_321)
    assert expected.count > 2**53 and float(expected.count) != expected.count
    assert dom.outputs["total"] == f"{expected.count:,}"
    assert dom.outputs[dom.sections["embeddings"]] == f"{expected.components['embeddings']:,}"


@pytest.mark.browser
def test_a_rational_ratio_is_carried_exactly(bert_page):
    dom = open_in_chromium(bert_page, "H=4096&A=32&L=2&r=11008/4096")
    expected = cli("count", "bert-base", "--set", "H=4096", "--set", "A=32", "--set", "L=2", "--set", "r=11008/4096",
                   "--json")
    assert dom.outputs["total"] == f"{expected['total']:,}"
    assert dom.outputs[dom.sections["encoder"]] == f"{expected['components']['encoder']:,}"
    dom = open_in_chromium(bert_page, "H=4096&A=32&L=2&r=2.6875")  # the same ratio written as a decimal
    assert dom.outputs["total"] == f"{expected['total']:,}"


@pytest.mark.browser
def test_every_part_updates_and_shares_match_the_model(bert_page):
    dom = open_in_chromium(bert_page, "L=3&H=256&A=4&V=1000")
    m = model("bert-base", L=3, H=256, A=4, V=1000)
    seen = {}
    for level, path, block, value, share in m.rows(depth=1):
        out = dom.sections[path]
        seen[path] = dom.outputs[out]
        assert dom.outputs[out] == f"{value:,}" and dom.outputs[out + "-share"] == percent(share)
    assert len(seen) == 3
    # parts below the sections changed too: no output still shows its bert-base value
    initial = re.findall(r'<output id="(i\d+)" data-init="(\d+)"', bert_page.read_text())
    assert len(initial) == len(list(derive(model("bert-base")).items))  # one output per item of the derivation
    assert all(dom.outputs[i] != f"{int(v):,}" for i, v in initial)


@pytest.mark.browser
def test_broken_constraints_and_bad_values_are_reported(bert_page):
    dom = open_in_chromium(bert_page, "H=1000")
    assert "H=1000 is not divisible by A=12" in dom.warnings
    dom = open_in_chromium(bert_page, "H=abc&r=x")
    assert dom.errors["H"] == "not a positive whole number" and dom.errors["r"].startswith("not a positive ratio")
    assert dom.outputs["total"] == "—"


@pytest.mark.browser
def test_transformer_page_with_tied_and_frozen_parts(tmp_path):
    path = tmp_path / "t.html"
    cli("derive", "transformer-base", "--format", "html", "-o", str(path))
    dom = open_in_chromium(path, "L=12&H=1024&A=16")
    m = model("transformer-base", L=12, H=1024, A=16)
    assert dom.outputs["total"] == f"{m.count:,}" and dom.outputs["trainable"] == f"{m.trainable:,}"
    assert m.count != m.trainable  # sinusoidal tables: counted, not trainable
    assert dom.outputs[dom.sections["output"]] == "0"  # tied to the embedding


@pytest.mark.browser
def test_chinese_page_and_escaped_title(tmp_path):
    path = tmp_path / "zh.html"
    title = '<script>alert("x")</script> & $x$ 100%'
    cli("derive", "bert-base", "--format", "html", "--lang", "zh", "--title", title, "-o", str(path))
    text = path.read_text()
    assert '<html lang="zh-CN">' in text
    zh = catalog("zh")  # the documents' catalog: section and block titles come from it
    assert "取值" in text and f"<h2>{zh['sections']['computation']}</h2>" in text
    assert f'<h3 class="title">{title_of(("embeddings",), ("embeddings",), "bert", zh)[0]}</h3>' in text
    dom = open_in_chromium(path, "L=24")
    assert dom.title == title  # shown literally
    assert dom.scripts == 1  # the page's own script only: the title added none
    assert dom.outputs["total"] == f"{model('bert-base', L=24).count:,}"


def test_the_page_needs_no_network(bert_page):
    text = bert_page.read_text()
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert not re.search(r"https?://", text)
    assert not re.search(r"<(?:link|img|iframe)\b|\bsrc=", text)
    assert "<math" in text and "unevaluatedexpr" not in text


@pytest.mark.browser
def test_a_piecewise_constraint_is_checked_in_the_page(tmp_path):
    path = tmp_path / "electra.html"
    cli("derive", "electra-small", "--format", "html", "-o", str(path))
    dom = open_in_chromium(path, "E=256")
    assert "E=256 equals H=256" in dom.warnings
    dom = open_in_chromium(path, "E=200")
    assert dom.warnings == "" and dom.outputs["total"] == f"{model('electra-small', E=200).count:,}"


# -- the page's formulas and the derivation ---------------------------------------------------------

def _every_preset_with_every_head():
    families = all_families()
    return [(name, head) for name, p in sorted(all_presets().items()) for head in (None, *families[p.family].heads)]


@pytest.mark.parametrize("name,head", _every_preset_with_every_head())
def test_every_contribution_on_the_page_is_the_derivations(name, head):
    """The formula the page evaluates for each item (``contribution_formula``), at the model's values, is the
    item's contribution in the derivation: the page recomputes every count it shows from these formulas."""
    m = model(name, head=head)
    for item in derive(m).items:
        assert sp.expand(contribution_formula(item).xreplace(m.values)) == item.contribution, item.path
