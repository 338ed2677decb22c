"""Derivation documents rendered (symparams.documents.render): content, structure, escaping, sandboxed templates.

Figures expected here are the articles' (checked by hand), not copied from
the program's output.
"""

from __future__ import annotations

import json
import re
import time

import pytest
import sympy as sp
import transformers

import symparams.documents.math_layout as layout
import symparams.documents.render as render_module
from symparams import Model, SymparamsError, model
from symparams.core.formatting import percent
from symparams.documents.context import context
from symparams.documents.derivation import derive
from symparams.documents.environment import catalog
from symparams.documents.escape import escape_md, escape_tex
from symparams.documents.html import render_html
from symparams.documents.render import render
from symparams.families.inferred import model as inferred_model
from symparams.families.presets import all_presets
from symparams.families.registry import family
from tests.reference.variants import one_preset_per_variant
from tests.reference import FIXTURES
from tests.reference.documents import document
from tests.reference.hf import build

HOSTILE = r"\input{/etc/passwd} $x$ 100% _a_ #1 ~ ^ & {}"
PRESETS = sorted(all_presets())


# -- structure -------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", one_preset_per_variant())
def test_every_section_and_component_is_present(name, lang):
    t = catalog(lang)
    text = document(name, "md", lang)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    d = derive(model(name))
    expected = ["intro", "computation", "summary", "closed_form", "heads", "costs", "shards", "laws", "finetune",
                "conclusion"]
    if d.notes:
        expected.insert(9, "articles")
    found = [h for h in headings if h.startswith("## ") and not h.startswith("## " + t["outline"])]
    assert [h.split(". ", 1)[1] for h in found] == [t["sections"][k] for k in expected]
    # one ### heading per top-level component of the model tree, in the tree's order, each naming modules as
    # named_parameters() prints them (a grouping transformers lacks names the modules it holds)
    components = [h for h in headings if h.startswith("### ") and "`" in h]
    assert len(components) == len(model(name).tree.children)
    paths = [p for c in model(name).tree.children for p, _ in c.reference_paths()]  # every module's, tied too
    for heading in components:
        for shown in re.findall(r"`([^`]+)`", heading):
            # a list's entries of more than one kind show their indices (layers.0–2); the paths fold them to *
            folded = re.sub(r"(?<=\.)\d+(–\d+)?(?=\.|$)|^\d+(–\d+)?(?=\.|$)", "*", shown)
            assert any(p in (shown, folded) or p.startswith((shown + ".", folded + ".")) for p in paths), (heading,
                                                                                                          shown)
    blocks = re.findall(r"```mermaid\n(.*?)```", text, flags=re.S)
    assert sorted("pie" if "\npie " in b else "flowchart" if "\nflowchart " in b else b for b in blocks) == [
        "flowchart", "pie"]  # the block diagram and the shares
    assert t["outline"] in text


def test_outline_lists_the_components_like_the_article():
    text = document("bert-base", "md", "zh")
    outline = text.split("## 提纲", 1)[1].split("## 1.", 1)[0]
    # the parts are items of a list nested under their section (test_markdown_math renders it)
    assert [line.strip().removeprefix("- ") for line in outline.strip().splitlines()] == [
        "1. 简介", "2. 计算过程", "2.1 嵌入层（Embedding）", "2.2 编码器（Encoder）", "2.3 池化层（Pooler）", "3. 参数汇总", "4. 参数量公式",
        "5. 参数量与注意力头数", "6. 计算量与内存", "7. 张量并行切分哪些激活值",
        "8. 已发表的 FLOPs 定律与精确计数并列", "9. 微调与推理部署", "10. 与原文对照", "11. 总结"]


@pytest.mark.parametrize("name", one_preset_per_variant())
def test_shares_add_up_exactly_and_parts_add_up_to_their_group(name):
    m = model(name)
    d = derive(m)
    # (that the components add up to the total, and their shares to 1, is tests/core/test_model.py's)
    assert [s.share for s in d.sections] == [sp.Rational(s.contribution, m.count) for s in d.sections]
    assert [r.share for r in d.summary if r.level == 1] == [s.share for s in d.sections]
    for item in d.items:
        if item.children:
            assert sum(c.total for c in item.children if not c.tied_to) == item.count, item.path
            assert sum(c.share for c in item.children) == item.share, item.path
        assert item.total == item.repeat_value * item.count
    # every component is what the model says it is
    assert {s.path: s.contribution for s in d.sections} == {k: v for k, v in m.components.items()
                                                              if k in {s.path for s in d.sections}}
    assert d.total == m.count and d.trainable == m.trainable


def test_rendered_shares_add_up_to_100_percent_within_rounding():
    for name in ("bert-base", "transformer-base", "transformer-base-article"):
        d = derive(model(name))
        shown = [sp.Rational(percent(s.share)[:-1]) for s in d.sections]
        assert abs(sum(shown) - 100) <= sp.Rational(5, 1000) * len(shown)


# -- content: the article's figures, written here by hand -----------------------------------------

@pytest.fixture(scope="session")
def bert_en():
    return document("bert-base", "md", "en")


def test_bert_base_embeddings_are_written_as_the_article_writes_them(bert_en):
    assert r"\left(V + P + S\right) H + 2 H" in bert_en
    assert r"\left(30522 + 512 + 2\right) \times 768 + 2 \times 768 = 23{,}837{,}184" in bert_en


def test_bert_base_attention_is_written_per_head_and_a_cancels(bert_en):
    # 12*3*(768*(768/12)+768/12)=1771776 in the article
    assert (r"3 A \left(H \cdot \frac{H}{A} + \frac{H}{A}\right) = 3 H^{2} + 3 H"
            r" = 3 \times 12 \times \left(768 \times \frac{768}{12} + \frac{768}{12}\right) = 1{,}771{,}776") in bert_en


def test_bert_base_encoder_is_twelve_layers_as_in_the_article(bert_en):
    # 12(2362368+1536+4722432+1536)=85054464: our parts follow transformers' modules
    assert r"12 \times 7{,}087{,}872 = 85{,}054{,}464" in bert_en
    assert "**85,054,464**" in bert_en and "77.69%" in bert_en


def test_bert_base_totals_closed_form_and_proof(bert_en):
    assert "**109,482,240**" in bert_en
    assert r"N = H^{2} \left(2 L \left(r + 2\right) + 1\right)" in bert_en
    assert r"\frac{\partial N}{\partial A} = 0" in bert_en
    # every divisor of 768 beside its total, three to a row
    assert "| 1 | 109,482,240 | 2 | 109,482,240 | 3 | 109,482,240 |" in bert_en
    assert "| 256 | 109,482,240 | 384 | 109,482,240 | 768 | 109,482,240 |" in bert_en


def test_bert_base_summary_table_has_formula_count_share(bert_en):
    rows = [line for line in bert_en.splitlines() if line.startswith("| ")]
    word = next(r for r in rows if "Token embeddings" in r)
    # the second column holds a stack's repeat (× L), so a label does not wrap before it; the shapes are the
    # walk's and the diagram's (tests/documents/test_summary_table.py: a shape column pushed tables off the page)
    assert [c.strip() for c in word.strip("|").split("|")] == [
        "&emsp;Token embeddings", "", r"$H V$", "23,440,896", "21.41%"]


def test_bert_base_names_the_article_figures_that_are_wrong(bert_en):
    # the slip, then the six figures it carries into
    assert "the article says 4,717,824, it is **4,723,968**" in bert_en
    for wrong, right in (("7,081,728", "7,087,872"), ("84,980,736", "85,054,464"), ("77.62%", "77.69%"),
                         ("33.38%", "33.35%"), ("66.62%", "66.65%"), ("56,613,888", "56,687,616")):
        assert f"{wrong} for **{right}**" in bert_en


def test_chinese_document_names_the_wrong_figures_in_chinese():
    text = document("bert-base", "md", "zh")
    assert "原文为 4,717,824，应为 **4,723,968**" in text
    assert "由此可知" in text and "池化层（Pooler）" in text


def test_transformer_article_note_gives_the_exact_figure_for_about_60m():
    text = document("transformer-base-article", "md")
    assert "| about 60M | 60,686,336 | rounded |" in text
    assert "| 16.38 million | 16,384,000 | rounded |" in text
    for figure in ("16,384,000", "262,144", "18,874,368", "25,165,824"):
        assert f"| {figure} | {figure} | right |" in text


def test_transformer_base_points_to_the_article_accounting():
    text = document("transformer-base", "md")
    assert "about 60M" in text and "60,686,336" in text and "63,606,784" in text
    assert "2,920,448" in text  # 63,606,784 - 60,686,336
    assert "Tied to `shared`" in text  # the output layer adds nothing; named as named_parameters() names it


@pytest.mark.parametrize("name,keys", [("bert-base", {"L": 24}), ("bert-large", {})])
def test_no_article_note_for_a_model_no_article_counts(name, keys):
    text = render(model(name, **keys), format="md")
    assert "Comparison with the articles" not in text
    assert "4,717,824" not in text


def test_a_changed_preset_is_listed_as_a_change():
    text = render(model("bert-base", L=24), format="md")
    assert "$L$: 12 $\\to$ 24" in text
    assert "194,536,704" in text  # 12 more layers of 7,087,872


def test_symbolic_model_needs_values():
    with pytest.raises(SymparamsError, match="needs a value for every symbol"):
        document("bert", "md")


def test_unknown_format_and_language_are_one_line_errors():
    with pytest.raises(SymparamsError, match="unknown format"):
        document("bert-base", "docx")
    with pytest.raises(SymparamsError, match="unknown language"):
        render(model("bert-base"), lang="fr")


def test_catalogs_have_the_same_keys_and_cover_the_core_families():
    def keys(d, prefix=""):
        out = set()
        for k, v in d.items():
            out |= keys(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
        return out

    en, zh = catalog("en"), catalog("zh")
    assert keys(en) == keys(zh)
    for name in ("bert", "transformer"):
        fam = model(name).family
        for head in (None, *fam.heads):
            tree = fam.build(fam.resolve({}, head), head)
            for _, block, _ in tree.walk():
                if block is not tree:
                    assert block.title_key in en["blocks"] or f"{name}/{block.title_key}" in en["blocks"], \
                        (name, head, block.title_key)


# -- escaping -------------------------------------------------------------------------------

def test_tex_escape_leaves_no_active_character():
    out = escape_tex(HOSTILE)
    stripped = re.sub(r"\\(textbackslash|textasciitilde|textasciicircum|allowbreak)\{\}|\\[{}$&#%_]", "", out)
    assert not re.search(r"[\\{}$&#%_^~]", stripped), stripped


def test_md_escape_escapes_every_markdown_special():
    out = escape_md(HOSTILE)
    assert out == r"\\input\{/etc/passwd\} \$x\$ 100% \_a\_ \#1 \~ \^ \& \{\}"
    assert escape_md("- item") == r"\- item" and escape_md("1. x") == r"1\. x"


def test_hostile_title_and_name_are_escaped_in_tex():
    tex = render(model("bert-base"), format="tex", title=HOSTILE)
    assert r"\input{/etc/passwd}" not in tex
    assert r"\textbackslash{}input\{/etc/passwd\} \$x\$ 100\% \_\allowbreak{}a\_\allowbreak{} \#1" in tex
    named = Model(family("bert"), {s.name: v for s, v in model("bert-base").values.items()}, name=HOSTILE)
    tex = render(named, format="tex", lang="zh")
    assert r"\input{/etc/passwd}" not in tex and "passwd" in tex


def test_hostile_title_in_markdown_is_escaped():
    text = render(model("bert-base"), format="md", title=HOSTILE)
    assert text.splitlines()[0] == "# " + escape_md(HOSTILE)
    assert "$x$" not in text.splitlines()[0].replace(r"\$", "")


# -- user templates (sandboxed) ---------------------------------------------------------------------

def write(tmp_path, text, name="t.j2"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_user_template_sees_the_document_data(tmp_path):
    path = write(tmp_path, "{{ doc.name }}: {{ doc.total }}{% for s in doc.sections %} {{ s.path }}={{ s.share }}"
                           "{% endfor %} {{ title | md }}")
    out = render(model("bert-base"), format="md", template=path, title="a_b")
    assert out == r"bert-base: 109,482,240 embeddings=21.77% encoder=77.69% pooler=0.54% a\_b"


def test_user_template_gets_no_sympy_objects(tmp_path):
    # a SymPy object's methods would sympify strings (eval): the context holds plain data only
    def plain(x):
        if isinstance(x, dict):
            return all(isinstance(k, str) and plain(v) for k, v in x.items())
        if isinstance(x, (list, tuple)):
            return all(plain(v) for v in x)
        return x is None or isinstance(x, (str, int, bool))

    for name in ("bert-base", "llama-2-70b", "t5-small", "transformer-base"):
        assert plain(context(model(name), "en")["doc"]), name


@pytest.mark.parametrize("source,message", [
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "not allowed in the sandbox"),
    ("{{ doc.__class__ }}", "not allowed in the sandbox"),
    ("{{ 2 ** 100000 }}", "not allowed in the sandbox"),
    ("{{ 'x' * 100000000 }}", "not allowed in the sandbox"),
    ("{% set _ = doc.update({'total': 1}) %}", "not allowed in the sandbox"),
    ("{{ nothing_here }}", "'nothing_here' is undefined"),
    ("{{ doc.no_such_key }}", "no_such_key"),
    ("{% for x in %}", "line 1"),
    ("line one\n{{ 1 / 0 }}", "ZeroDivisionError"),
])
def test_user_template_errors_are_one_line(tmp_path, source, message):
    path = write(tmp_path, source)
    with pytest.raises(SymparamsError) as info:
        render(model("bert-base"), format="md", template=path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_template_file_is_one_line(tmp_path):
    with pytest.raises(SymparamsError, match="cannot read template"):
        render(model("bert-base"), format="md", template=str(tmp_path / "none.j2"))


# -- html ------------------------------------------------------------------------------------------

def test_html_is_the_live_page_of_the_html_module(monkeypatch):
    m = model("bert-base")
    assert render(m, format="html", lang="zh", title="T") == render_html(m, lang="zh", title="T")
    monkeypatch.setattr(render_module, "render_html", lambda m, lang, title: f"<html>{m.name}|{lang}|{title}</html>")
    assert render(m, format="html", lang="zh", title="T") == "<html>bert-base|zh|T</html>"


def test_a_user_template_that_runs_too_long_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(render_module, "RENDER_SECONDS", 0.5)
    slow = tmp_path / "slow.j2"
    slow.write_text("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    start = time.monotonic()
    with pytest.raises(SymparamsError, match="it ran for more than 0.5 s"):
        render_module.render(model("bert-base"), template=str(slow))
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("lang,yes,no", [("en", "? Yes.", "? No."), ("zh", "？是。", "？否。")])
def test_every_switch_line_says_whether_its_description_holds(lang, yes, no):
    # a switch's description says what it does when on: with false, the line must answer no, never assert it
    checked = 0
    for name in all_presets():
        for line in document(name, "md", lang).splitlines():
            found = re.match(r"- `(\w+)` = `(true|false)`", line)
            if found:
                assert line.endswith(yes if found.group(2) == "true" else no), (name, line)
                checked += 1
    assert checked > 150


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_inferred_types_switches_are_its_config_fields_with_their_values_and_no_question(lang):
    config = json.loads((FIXTURES / "allenai" / "OLMo-1B-hf.json").read_text())
    text = render(inferred_model(config), format="md", lang=lang)
    lines = re.findall(r"^- `(\w+)` = `(\w+)`(.*)$", text, flags=re.M)
    assert {name for name, _, _ in lines} == {"attention_bias", "tie_word_embeddings"}
    for name, value, rest in lines:
        assert value == json.dumps(config[name])  # the field as config.json holds it
        assert rest == ""  # what they are is said once, before the list
    assert catalog(lang)["intro"]["switches_inferred"] in text

@pytest.mark.parametrize("name,hub_id", [("llama-3-8b", "meta-llama/Meta-Llama-3-8B"),
                                         ("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1")])
def test_a_switch_of_a_task_heads_layer_is_listed_only_with_that_head(name, hub_id):
    # transformers' LlamaModel and MixtralModel hold no score layer: its bias is no switch of the base model
    config = transformers.AutoConfig.from_pretrained(FIXTURES / hub_id)
    base = build(config.architectures[0].replace("ForCausalLM", "Model"), config)
    tagged = build(config.architectures[0].replace("ForCausalLM", "ForTokenClassification"), config)
    assert not any(n.startswith("score") for n, _ in base.named_parameters())
    assert "score.bias" in dict(tagged.named_parameters())
    assert "token_classification_bias" not in document(name)
    with_head = render(model(name, head="token-classification"), format="md", lang="en")
    assert "- `token_classification_bias` = `true`: bias of the token-classification score layer? Yes." in with_head

@pytest.mark.parametrize("fmt", ["md", "tex"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_base_models_document_gives_its_total_with_the_lm_head(fmt, lang):
    # Meta publishes Llama-3-8B as 8,030,261,248 parameters: the base model's 7,504,924,672 plus the untied
    # 128,256 x 4,096 LM head, which the base model leaves out
    text = document("llama-3-8b", fmt, lang)
    assert "7,504,924,672" in text and "8,030,261,248" in text and 7_504_924_672 + 128_256 * 4096 == 8_030_261_248
    with_head = render(model("llama-3-8b", head="causal-lm"), format=fmt, lang=lang)
    assert "8,030,261,248" in with_head and "causal-lm 头" not in with_head and "With its" not in with_head


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_head_count_table_pairs_each_a_with_its_own_total(lang):
    # Llama-3-8B's K and V hold 2·L·H·(G·H/A) (L = 32, H = 4096, G = 8): the counterexample's two rows, each A
    # beside its own total, the model's own A = 32 first
    text = document("llama-3-8b", "md", lang)
    rows = re.findall(r"^\| (\d+) \| ([\d,]+) \|$", text, flags=re.M)
    assert len(rows) == 2 and rows[0] == ("32", "7,504,924,672")
    for a, total in rows:
        key_value = 2 * 32 * 4096 * (8 * 4096 // int(a))
        assert total == f"{7_504_924_672 - 2 * 32 * 4096 * (8 * 4096 // 32) + key_value:,}", a


@pytest.mark.parametrize("lang,h_over_a", [("en", "to $H/A$ features"), ("zh", "映射成 $H/A$ 维")])
def test_t5s_heads_are_d_wide_not_h_over_a(lang, h_over_a):
    # T5's head width is d_kv = D, set on its own (64 = 512/8 in t5-small only by coincidence; t5-large: 64 x 16
    # heads in 1024); BERT's heads are H/A wide
    for name in ("t5-small", "t5-large"):
        text = document(name, "md", lang)
        assert h_over_a not in text and "`d_kv`" in text, name
    assert h_over_a in document("bert-base", "md", lang)


# -- typesetting (review 2.2, 2.3) -------------------------------------------------------------------------------

def test_md_summary_table_gives_the_repeat_its_own_column(bert_en):
    encoder = next(line for line in bert_en.splitlines() if line.startswith("| **Encoder**"))
    cells = [c.strip() for c in encoder.strip("|").split("|")]
    assert cells[:2] == ["**Encoder**", r"$\times L$"] and len(cells) == 5


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tex_has_a_title_block_with_symparams_and_the_date(lang):
    text = document("bert-base", "tex", lang)
    head = text.split(r"\section*", 1)[0]
    block = head.split(r"\begin{document}", 1)[1]
    title = catalog(lang)["title"].replace("[[model]]", "BERT-base")  # the preset's name, not its slug
    assert r"\LARGE\bfseries" in block and title in block
    assert re.search(r"symparams.*\\today", block)  # the date the PDF is made, not the day the source was
    assert r"\hyphenation{LayerNorm" in head  # never "Lay-erNorm"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["bert-base", "t5-small", "transformer-base-article"])
def test_tex_outline_gives_the_page_of_every_entry(name, lang):
    text = document(name, "tex", lang)
    refs = re.findall(r"\\pageref\{(sec:[^}]+)\}", text)
    labels = re.findall(r"\\label\{(sec:[^}]+)\}", text)
    outline = context(model(name), lang)["doc"]["outline"]
    assert len(refs) == len(outline) + sum(len(o["children"]) for o in outline)
    assert sorted(refs) == sorted(labels)


def test_tex_tables_that_may_be_long_break_across_pages_and_headings_keep_their_text():
    text = document("bert-base", "tex", "en")
    summary = text.split(r"\label{sec:summary}", 1)[1].split(r"\section*", 1)[0]
    assert r"\begin{xltabular}" in summary and r"\endhead" in summary  # the header repeats on the next page
    articles = text.split(r"\label{sec:articles}", 1)[1].split(r"\section*", 1)[0]
    assert "tabularx" not in articles and articles.count(r"\begin{xltabular}") == 2  # one per article
    headings = list(re.finditer(r"\\(?:sub)?section\*\{\d", text))
    assert len(headings) > 8
    *others, conclusion = headings
    for heading in others:  # a numbered heading starts a page when too little room is left below it
        assert re.search(r"\\Needspace\{\d+\\baselineskip\}\n?$", text[:heading.start()]), heading
    # but the conclusion never starts a page: it ends the page of the text before it, unbroken
    assert text[:conclusion.start()].endswith("\\begin{closing}\n") and "sec:conclusion" in text[conclusion.start():]
    # the chart's lead stays with the chart; the labels are set flush right, not spread out
    assert re.search(r"\\Needspace\{[\d.]+cm\}" + re.escape(catalog("en")["summary"]["chart_lead"]), text)
    assert "align=flush right" in text


def test_tex_summary_row_keeps_label_repeat_and_formula_apart():
    text = document("bert-base", "tex", "zh")
    encoder = next(line for line in text.splitlines() if line.startswith(r"\textbf{编码器"))
    cells = [c.strip() for c in encoder.split(" & ")]
    assert cells[1] == r"$\times L$"
    # the formula breaks after its outermost + first (the column makes a break after a product a last resort)
    assert r"\allowbreak" in cells[2] and r"\binoppenalty=5000" in text


def test_display_md_breaks_a_long_chain_into_aligned_rows_as_display_tex_does():
    short = layout.display_md(["H \\cdot V", "30522 \\times 768"], "N")
    assert short == "$$N = H \\cdot V = 30522 \\times 768$$"
    terms = " + ".join(f"A_{{{k}}} \\cdot \\left(H + \\frac{{H}}{{A}}\\right)" for k in range(12))
    md = layout.display_md([terms, "12"], "N(A)")
    assert md.startswith("$$\n\\begin{aligned}\nN(A) &= ") and md.endswith("\n\\end{aligned}\n$$")
    rows = md.split("\n")[2:-2]
    assert len(rows) >= 3 and rows[-1] == "&= 12"
    widths = [layout.math_width("N(A)" + r.split("&", 1)[1].replace("\\quad", "")) for r in rows]
    assert max(widths) <= layout.MD_LINE_EM
    tex = layout.display_tex([terms, "12"], "N(A)")
    assert tex.startswith("\\begin{align*}") and "\\left" not in tex and "\\Bigl(" in tex


def test_delimiters_of_a_broken_display_are_sized_by_what_they_hold():
    s = r"H \cdot \left(L \cdot \left(r + 9\right) + V\right) + \left(1 + \frac{G}{A}\right) + \left(V + P\right)"
    assert layout._breakable(s) == r"H \cdot \bigl(L \cdot (r + 9) + V\bigr) + \Bigl(1 + \frac{G}{A}\Bigr) + (V + P)"


def test_a_long_sum_in_parentheses_is_broken_inside_them_not_after_its_factor():
    inner = " + ".join(f"A \\cdot H \\cdot D_{{{k}}}" for k in range(14))
    lines = layout._lines(f"V \\cdot H + L \\cdot \\left({inner}\\right)", 20)
    assert not any(line.rstrip().endswith("L") for line in lines), lines  # never "+ L" then "· (…)"
    assert all(not line.startswith("\\cdot") for line in lines), lines


def test_table_math_breaks_after_its_outermost_plus_signs_first():
    out = layout.inline_tex(r"H^{2} \cdot \left(2 \cdot \left(L - 1\right) + 1\right) + H \cdot \left(V + 3\right)")
    assert out == (r"H^{2} \cdot (2 \cdot (L -\penalty600 1) +\penalty300 1) +\allowbreak H \cdot "
                   r"(V +\penalty300 3)")


@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_chinese_head_counts_are_a_table_not_a_list_joined_by_commas(fmt):
    text = document("bert-base", fmt, "zh")
    row = {"md": "| 1 | 109,482,240 | 2 | 109,482,240 | 3 | 109,482,240 |",
           "tex": "1 & 109,482,240 & 2 & 109,482,240 & 3 & 109,482,240 \\\\"}[fmt]
    assert row in text and "1, 2, 3, 4" not in text
