"""The live HTML page (symparams.documents.html): its formulas agree with the derivation, and, run in real
headless Chromium, values set in the page give the CLI's exact counts."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import sympy as sp

from symparams import model
from symparams.core.formatting import percent
from symparams.documents.context import title_of
from symparams.documents.derivation import derive
from symparams.documents.environment import catalog
from symparams.documents.escape import escape_html
from symparams.documents.html import contribution_formula
from tests.reference import browser
from tests.reference.documents import derived
from tests.reference.in_process import command_here
from tests.reference.variants import one_preset_per_variant, with_each_head_once

def cli(*args) -> dict:
    """``symparams ARGS`` run in this process (the pages it writes are what a process writes)."""
    status, out, err = command_here(*args)
    assert status == 0, err
    return json.loads(out) if "--json" in args else out


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


def dump_dom(page: Path, fragment: str = "", *flags: str) -> str:
    """Load ``page#fragment`` in headless Chromium, let its script run, and return the DOM it ends with."""
    return dump_url(page.resolve().as_uri() + (f"#{fragment}" if fragment else ""), *flags)


def dump_url(url: str, *flags: str) -> str:
    """Load ``url`` in headless Chromium (``--window-size=W,H`` among ``flags`` sets its viewport), let its script
    run, and return the DOM it ends with."""
    sizes = [tuple(map(int, f.split("=", 1)[1].split(","))) for f in flags if f.startswith("--window-size=")]
    assert len(sizes) == len(flags), flags
    return browser.dom(url, *(sizes[0] if sizes else ()))


def open_in_chromium(page: Path, fragment: str = "") -> Page:
    """Load ``page#fragment`` in headless Chromium, let its script run, and parse the DOM it ends with."""
    dom = Page(dump_dom(page, fragment))
    assert dom.root.get("data-ready") == "1", "the page's script did not run to the end"
    return dom


@pytest.fixture(scope="session")
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

@pytest.mark.parametrize("name,head", with_each_head_once(one_preset_per_variant()))
def test_every_contribution_on_the_page_is_the_derivations(name, head):
    """The formula the page evaluates for each item (``contribution_formula``), at the model's values, is the
    item's contribution in the derivation: the page recomputes every count it shows from these formulas."""
    m = model(name, head=head)
    for item in derived(name, head).items:
        assert sp.expand(contribution_formula(item).xreplace(m.values)) == item.contribution, item.path


# -- the review's defects 28–32 (docs/../reviews/documents.md §2.4) ---------------------------------------

@pytest.fixture(scope="session")
def zh_pages(tmp_path_factory) -> dict:
    """bert-base, llama-3-8b and t5-small as Chinese pages (bert-base also in English)."""
    folder = tmp_path_factory.mktemp("zh")
    pages = {}
    for name, lang in (("bert-base", "zh"), ("llama-3-8b", "zh"), ("t5-small", "zh"), ("bert-base", "en")):
        path = folder / f"{name}.{lang}.html"
        cli("derive", name, "--format", "html", "--lang", lang, "-o", str(path))
        pages[name, lang] = path
    return pages


def _css_rules(text: str) -> dict:
    """The page's style as {selector: declarations} (selectors of a group each get the declarations)."""
    css = re.search(r"<style>(.*?)</style>", text, re.S).group(1)
    rules = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        for selector in selectors.split(","):
            rules[selector.strip()] = rules.get(selector.strip(), "") + body
    return rules


def test_the_controls_do_not_stick_only_a_one_line_total_does(bert_page):
    """Defect 28: the values' table scrolls away with the page; what stays on top is a bar holding the total
    (and the warnings), no input."""
    text = bert_page.read_text()
    rules = _css_rules(text)
    sticky = [s for s, body in rules.items() if "sticky" in body or "fixed" in body]
    assert sticky == ["#bar"]
    bar = re.search(r'<div id="bar">(.*?)</div>', text, re.S).group(1)
    assert 'id="live-total"' in bar and 'id="warnings"' in bar
    assert "<input" not in bar and "<table" not in bar
    controls = re.search(r'<section id="controls">(.*?)</section>', text, re.S).group(1)
    assert "<input" in controls and 'id="live-total"' not in controls


def open_measured(page: Path, script: str, width: int = 1000, height: int = 800) -> dict:
    """Load a copy of ``page`` with ``script`` run after its own (it sets ``data-*`` on <html>) in a window of
    ``width`` × ``height``; the root's attributes once the page settles."""
    copy = page.with_name("measured-" + page.name)
    copy.write_text(page.read_text().replace("</body>", f"<script>{script}</script></body>"))
    return Page(dump_dom(copy, "", f"--window-size={width},{height}")).root


@pytest.mark.browser
def test_after_scrolling_the_content_keeps_the_viewport(zh_pages):
    """Defect 28, measured in Chromium at 1000×800: scrolled to the summary, the sticky bar is one short line at
    the top and the values' table is out of sight."""
    root = open_measured(zh_pages["bert-base", "zh"], """addEventListener("load", () => {
      document.getElementById("summary").scrollIntoView();
      const bar = document.getElementById("bar").getBoundingClientRect();
      const controls = document.getElementById("controls").getBoundingClientRect();
      document.documentElement.dataset.layout = [bar.top, bar.height, controls.bottom, innerHeight].join(",");
    });""")
    top, height, controls_bottom, viewport = map(float, root["data-layout"].split(","))
    assert top == 0 and height < 0.1 * viewport and height < 60
    assert controls_bottom <= 0


def test_the_chinese_page_says_its_messages_in_chinese(zh_pages):
    """Defect 29: no English constraint message, nor "terms holding A", on a Chinese page (the messages come from
    the catalog, with the constraints' Chinese side conditions); the English page keeps the families' messages."""
    for (name, lang), path in zh_pages.items():
        text = path.read_text()
        constraints = [c for c in model(name).family.constraints if c.message]
        scripted = [json.loads(s) for s in re.findall(r'message: ("[^"]*")', text)]
        assert scripted or name == "t5-small"  # T5 has no constraint (its head width D is its own)
        if lang == "zh":
            assert "terms holding" not in text and not any(c.message in text for c in constraints)
            assert not any(re.search(r"[a-z]{3,} [a-z]{3,}", message) for message in scripted)
        else:
            assert set(scripted) <= {c.message for c in constraints}
    llama = zh_pages["llama-3-8b", "zh"].read_text()
    assert "<mtext>含&#xA0;</mtext><mi>A</mi><mtext>&#xA0;的项</mtext>" in llama


@pytest.mark.browser
def test_a_broken_constraint_on_the_chinese_page_is_said_in_chinese_and_greys_the_numbers(zh_pages):
    page = zh_pages["bert-base", "zh"]
    dom = open_in_chromium(page, "A=7")
    assert "H=768、A=7" in dom.warnings and "不满足条件" in dom.warnings and "divisible" not in dom.warnings
    assert dom.outputs["total"] == "109,482,240"  # A cancels: the total is still computed …
    assert "stale" in dom.root.get("class", "")  # … and greyed out, as every number shown
    dom = open_in_chromium(page, "r=1/5")  # r·H = 768/5
    assert "r·H = 768/5，不是正整数" in dom.warnings and "stale" in dom.root.get("class", "")
    dom = open_in_chromium(page, "H=abc")
    assert dom.outputs["total"] == "—" and "stale" in dom.root.get("class", "")
    dom = open_in_chromium(page, "L=24")
    assert dom.warnings == "" and "stale" not in dom.root.get("class", "")
    assert "color" in _css_rules(page.read_text())[".stale output"]


def test_products_are_written_as_a_person_writes_them(bert_page):
    """Defect 30: ``H·H`` (not ``HH``), ``H·rH`` (not ``H(Hr)``), ``rH²``, and the proof's "=" in a column of
    their own (Chromium ignores ``columnalign``)."""
    text = bert_page.read_text()
    dot, invisible = "<mo>&#x22C5;</mo>", "<mo>&#x2062;</mo>"
    assert f"<mi>H</mi>{invisible}<mi>H</mi>" not in text and f"<mi>H</mi>{dot}<mi>H</mi>" in text
    assert f"<mi>H</mi>{dot}<mrow><mi>r</mi>{invisible}<mi>H</mi></mrow>" in text  # the first FFN layer: H·rH
    assert f"<mi>r</mi>{invisible}<msup><mi>H</mi><mn>2</mn></msup>" in text
    assert "columnalign" not in text
    proof = re.search(r'<table class="proof">(.*?)</table>', text, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", proof)
    # one head's Q, K, V; all 3·L of them; N; ∂N/∂A
    assert len(rows) == 4 and all(re.findall(r'<td class="(\w+)">', r) == ["lhs", "eq", "rhs"] for r in rows)
    assert all('<td class="eq"><math><mo>=</mo></math></td>' in r for r in rows)
    assert "text-align:right" in _css_rules(text)["table.proof td.lhs"]


def test_repeated_parts_are_not_written_as_a_sum_times_l(bert_page):
    """Defect 30: "4H²+6H × L" read as 4H² + 6HL; a repeated part now shows its count per copy, then how many
    copies there are."""
    text = bert_page.read_text()
    copies = re.findall(r'<span class="copies">(.*?)</span>', text)
    assert copies and all(c.startswith("<math><mi>L</mi></math> = <output") and "copies, in all" in c
                          for c in copies)


def test_a_sum_in_parentheses_keeps_them():
    from symparams.core.symbols import H, L, r
    from symparams.documents.mathml import mathml_inner
    shown = mathml_inner(sp.Mul(sp.Add(4 * H**2, 6 * H), L, evaluate=False), "none")
    assert shown.startswith('<mrow><mrow><mo stretchy="false">(</mo>') and shown.endswith("<mi>L</mi></mrow>")
    assert "(" not in mathml_inner(sp.Mul(H, sp.Mul(H, r, evaluate=False), evaluate=False), "none")


def _per_copy(text: str) -> dict:
    """Each item's count per copy (the end of its formula line), by the item's path (None: not shown)."""
    idents = re.findall(r'<div class="(?:section|part)" data-path="([^"]+)">.*?<output id="(i\d+)"', text, re.S)
    return {path: (lambda mo: mo and mo.group(1))(re.search(rf'data-copy="{ident}-one">([^<]*)<', text))
            for path, ident in idents}


def _formula(text: str, path: str) -> str:
    return re.search(rf'data-path="{re.escape(path)}">.*?<div class="formula">(.*?)</div>', text, re.S).group(1)


@pytest.mark.parametrize("name", ["bert-base", "llama-3-8b", "t5-small"])
def test_every_item_shows_its_numbers_put_in(name, tmp_path):
    """Defect 31: each item's formula, then the same with the numbers put in (symbols as their values, or a
    group's parts' counts), then its count per copy, as the documents write it."""
    path = tmp_path / "p.html"
    cli("derive", name, "--format", "html", "-o", str(path))
    text = path.read_text()
    m = model(name)
    per_copy = _per_copy(text)
    for item in derive(m).items:
        if item.tied_to:  # a tied copy adds nothing: no numbers for it
            assert per_copy[item.path] is None
            continue
        assert per_copy[item.path] == f"{item.count:,}", item.path
        if not item.expr.is_Symbol and item.substituted:  # "H = 4,096" needs no "= 4,096" before it
            formula = _formula(text, item.path)  # the numbers put in: values, or the parts' counts, then the count
            assert formula.count('data-sym="') + formula.count('data-copy="') >= 2, item.path
    if name == "bert-base":
        assert ('<mn class="v" data-sym="V">30,522</mn><mo>&#xD7;</mo><mn class="v" data-sym="H">768</mn>'
                in _formula(text, "embeddings.word_embeddings"))


@pytest.mark.browser
def test_the_numbers_put_in_follow_the_values(tmp_path):
    path = tmp_path / "bert.html"
    cli("derive", "bert-base", "--format", "html", "-o", str(path))
    text = dump_dom(path, "L=24&H=1024&A=16&r=43/16")
    d = derive(model("bert-base", L=24, H=1024, A=16, r=sp.Rational(43, 16)))
    assert set(re.findall(r'data-sym="H">([^<]*)<', text)) == {"1,024"}
    assert set(re.findall(r'data-sym="r">([^<]*)<', text)) == {"43/16"}
    per_copy = _per_copy(text)
    assert all(per_copy[item.path] == f"{item.count:,}" for item in d.items)
    encoder = next(i for i in d.items if i.path == "encoder")
    parts = re.findall(r'data-copy="i\d+-(?:one|total)">([^<]*)<', _formula(text, "encoder"))
    assert parts == [f"{c.total:,}" for c in encoder.children] + [f"{encoder.count:,}"]
    assert set(re.findall(r'data-copy="i\d+-reps">([^<]*)<', text)) == {"24"}


def test_bert_base_has_the_articles_section_and_llama_none(zh_pages):
    """Defect 31: the comparison with the articles (the documents' errata), as in the Markdown and LaTeX."""
    text = zh_pages["bert-base", "zh"].read_text()
    section = re.search(r'<section id="articles">(.*?)</section>', text, re.S).group(1)
    zh = catalog("zh")
    assert f"<h2>{zh['sections']['articles']}</h2>" in section
    assert all(note.article.title in section for note in derive(model("bert-base")).notes)
    assert "4,717,824" in section and "4,723,968" in section
    assert f"<strong>{zh['articles']['wrong']}</strong>" in section
    assert 'id="articles"' not in zh_pages["llama-3-8b", "zh"].read_text()  # no article counts it


def test_the_chart_has_a_bar_per_component(zh_pages):
    """Defect 31: a bar chart of the components' shares, inline (no image, nothing fetched)."""
    text = zh_pages["bert-base", "zh"].read_text()
    bars = re.findall(r'<span class="bar-fill" data-bar="(i\d+)" style="width:([\d.]+)%"></span>', text)
    d = derive(model("bert-base"))
    assert [float(w) for _, w in bars] == pytest.approx([float(s.share) * 100 for s in d.sections], abs=1e-3)
    assert all(f'data-copy="{ident}-share"' in text for ident, _ in bars)


@pytest.mark.browser
def test_the_chart_follows_the_values(bert_page):
    text = dump_dom(bert_page, "L=48")
    widths = [float(w) for w in re.findall(r'class="bar-fill" data-bar="i\d+" style="width: ?([\d.]+)%', text)]
    assert widths == pytest.approx([float(s.share) * 100 for s in derive(model("bert-base", L=48)).sections],
                                   abs=0.01)


def test_the_font_stack_covers_chinese(bert_page):
    """Defect 32: sans-serif Chinese fonts of every system before the generic family."""
    stack = re.search(r"font-family:([^;]*)", _css_rules(bert_page.read_text())["body"]).group(1)
    names = [f.strip().strip('"') for f in stack.split(",")]
    for font in ("PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC"):
        assert font in names and names.index(font) < names.index("sans-serif")


@pytest.mark.browser
def test_the_compute_and_memory_section_follows_new_values(tmp_path):
    path = tmp_path / "llama.html"
    cli("derive", "llama-3-8b", "--format", "html", "--lang", "zh", "-o", str(path))
    dom = open_in_chromium(path, "L=16&G=4")
    changed = model("llama-3-8b", L=16, G=4)
    flops = changed.flops(2048)  # the page works the costs out for one sequence of 2,048 tokens
    assert dom.outputs["costs-forward"] == f"{flops.forward:,}"
    assert dom.outputs["costs-training"] == f"{flops.training:,}"
    assert dom.outputs["costs-attention"] == f"{flops.by_kind['attention']:,}"
    hand = 2 * 16 * 4 * 128 * 2  # K and V, L layers, G heads of 128, 2 bytes in bf16
    assert changed.kv_cache().per_token == hand
    page = path.read_text(encoding="utf-8")
    assert 'data-copy="costs-kv_per_token"' in page and "计算量与内存" in page


# -- on a phone ---------------------------------------------------------------------------------------------------

PHONE = (390, 844)


def on_a_phone(page: Path, script: str) -> dict:
    """``page`` in a frame of a phone's width (headless Chromium's window is at least 500 px wide, a frame is
    not), with ``script`` run in it after its own; ``script`` sets ``data-*`` on the frame's ``parent``, whose
    root's attributes are returned once the page settles."""
    framed = page.read_text().replace("</body>", f"<script>{script}</script></body>")
    outer = page.with_name("phone-" + page.name)
    outer.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe width="{PHONE[0]}" height="{PHONE[1]}" '
                     f'style="border:0" srcdoc="{escape_html(framed)}"></iframe></body></html>')
    return Page(dump_dom(outer, "", "--window-size=800,900")).root


@pytest.mark.browser
@pytest.mark.parametrize("name,lang", [("bert-base", "zh"), ("deepseek-v3", "en"), ("t5-base", "en")])
def test_on_a_phone_nothing_scrolls_sideways_and_the_bars_have_room(name, lang, tmp_path):
    """390 × 844: the page is no wider than the screen (wide tables and formulas scroll in their own box), and
    each bar of the chart has a track to fill."""
    page = tmp_path / f"{name}.{lang}.html"
    cli("derive", name, "--format", "html", "--lang", lang, "-o", str(page))
    root = on_a_phone(page, """addEventListener("load", () => {
      const d = document.documentElement;
      const tracks = [...document.querySelectorAll(".bar-track")].map(t => t.getBoundingClientRect().width);
      parent.document.documentElement.dataset.layout = [innerWidth, d.scrollWidth, d.clientWidth,
                                                        Math.min(...tracks)].join(",");
    });""")
    width, scroll, client, narrowest_track = map(float, root["data-layout"].split(","))
    assert width == PHONE[0] and scroll <= client
    assert narrowest_track >= 100
