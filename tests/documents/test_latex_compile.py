"""The LaTeX documents compile with ``latexmk -xelatex``, cleanly, and the PDF says the right things.

Compiled: bert-base and transformer-base in English and Chinese, falcon-40b and
deepseek-v3 in Chinese (the largest block diagram and summary table), plus two
documents carrying the hostile text (as the title, and as the model name).
The log must have no error, no overfull box and no missing glyph; the PDF's
text (pdftotext) must hold the key figures and the hostile text literally.
Nothing is skipped: a missing TeX is a failure (CI installs it).
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib

import pytest

from symparams import Model, model
from symparams.documents.render import render
from symparams.families.inferred import model as inferred_model
from symparams.families.registry import family
from tests.reference import ROOT
from tests.reference.documents import document
from tests.reference.latex import compile_all

pytestmark = pytest.mark.tex

HOSTILE = r"\input{/etc/passwd} $x$ 100% _a_ #1 ~ ^ & {}"
OLMO = json.loads((ROOT / "tests" / "fixtures" / "allenai" / "OLMo-1B-hf.json").read_text())

CASES = {
    "bert-base.en": (lambda: model("bert-base"), "en", None),
    "bert-base.zh": (lambda: model("bert-base"), "zh", None),
    "transformer-base.en": (lambda: model("transformer-base"), "en", None),
    "transformer-base.zh": (lambda: model("transformer-base"), "zh", None),
    # its conclusion's first line once ran 2.7 pt into the margin (a long bold number after CJK text)
    "falcon-40b.zh": (lambda: model("falcon-40b"), "zh", None),
    # a diagram of stacks within stacks (experts in layers), every long formula of its summary set below the table
    "deepseek-v3.zh": (lambda: model("deepseek-v3"), "zh", None),
    # an inferred model: module paths for titles, floors (⌊H/A⌋) in its formulas, no costs section
    "olmo-1b-inferred.en": (lambda: inferred_model(OLMO), "en", None),
    # num_key_value_heads left out: the proof's premise G = A, and a table of head counts that all agree
    "olmo-1b-inferred-mha.zh": (lambda: inferred_model({k: v for k, v in OLMO.items() if k != "num_key_value_heads"}),
                                "zh", None),
    "hostile-title.en": (lambda: model("bert-base"), "en", HOSTILE),
    "hostile-name.zh": (lambda: Model(family("transformer"), {"V": 32000, "P": 512, "H": 512, "L": 6, "A": 8, "r": 4},
                                      name=HOSTILE), "zh", None),
}


@pytest.fixture(scope="session")
def compiled():
    """Compile every case (in parallel); name → (returncode, log text, pdf text)."""
    sources = {name: render(make(), format="tex", lang=lang, title=title) for name, (make, lang, title) in CASES.items()}
    out = {}
    for name, (rc, log, pdf) in compile_all(sources).items():
        text = ""
        if pdf.is_file():
            text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                                  text=True, check=True).stdout
        out[name] = (rc, log, text)
    return out


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", list(CASES))
def test_compiles_without_errors(compiled, name):
    rc, log, text = compiled[name]
    assert rc == 0, log[-3000:]
    assert not re.search(r"^! ", log, flags=re.M), log[-3000:]
    assert text.strip()


@pytest.mark.parametrize("name", list(CASES))
def test_no_overfull_boxes_and_no_missing_glyphs(compiled, name):
    _, log, _ = compiled[name]
    overfull = re.findall(r"^Overfull \\hbox.*$", log, flags=re.M)
    assert not overfull, overfull
    missing = re.findall(r"^Missing character.*$", log, flags=re.M)
    assert not missing, missing[:5]


def test_bert_base_pdf_holds_the_article_figures(compiled):
    for name in ("bert-base.en", "bert-base.zh"):
        text = flat(compiled[name][2])
        for figure in ("109,482,240", "23,837,184", "85,054,464", "590,592", "7,087,872", "77.69%", "21.77%",
                       "4,723,968", "4,717,824"):
            assert figure in text, (name, figure)


def test_chinese_pdf_reads_like_the_articles(compiled):
    text = re.sub(r"\s+", "", compiled["bert-base.zh"][2])  # xeCJK spaces Latin from CJK; lines break anywhere
    for phrase in ("提纲", "简介", "计算过程", "总结", "嵌入层", "编码器", "池化层",
                   "参数量跟注意力头的个数"):
        assert phrase in text, phrase


def test_transformer_base_pdf_holds_its_total_and_the_article_comparison(compiled):
    for name in ("transformer-base.en", "transformer-base.zh"):
        text = flat(compiled[name][2])
        # all parameters, the trainable ones (sinusoidal tables are frozen), the article's accounting
        for figure in ("63,606,784", "63,082,496", "60,686,336"):
            assert figure in text, (name, figure)


def test_inferred_pdf_holds_its_total_and_no_derivative_of_a_floor(compiled):
    text = flat(compiled["olmo-1b-inferred.en"][2])
    assert "1,176,764,416" in text and "1,109,655,552" in text  # the total; the counterexample at A = 32
    assert "Derivative" not in text and "polynomial" not in text
    assert "4,947,802,324,992" in text  # the traced forward FLOPs of one sequence of 2,048 tokens
    assert "transformers’ builds, under these conditions" in text or "transformers' builds, under these" in text


def test_inferred_pdf_in_chinese_states_g_follows_a_and_the_witness(compiled):
    text = flat(compiled["olmo-1b-inferred-mha.zh"][2])
    assert "num_key_value_heads" in text and "1,176,764,416" in text and "Derivative" not in text


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def occurrences_in_source(name: str) -> int:
    """How often the hostile text is written into the LaTeX source of case ``name`` (escaped)."""
    make, lang, title = CASES[name]
    return render(make(), format="tex", lang=lang, title=title).count("passwd")


def test_hostile_title_appears_literally_and_runs_nothing(compiled):
    text = flat(compiled["hostile-title.en"][2])
    assert occurrences_in_source("hostile-title.en") == 1  # the title only: the model is bert-base
    assert text.count(HOSTILE) == 1
    assert "root:" not in text  # \input{/etc/passwd} was not executed


def test_hostile_model_name_appears_literally_wherever_the_source_has_it(compiled):
    text = compiled["hostile-name.zh"][2]
    # the title, the introduction, the values, the closed form, the head-count section, the conclusion, the
    # command line ...: every occurrence in the source is in the PDF, literally (lines may break inside the
    # command line's typewriter text, so spaces are left out of the comparison)
    written = occurrences_in_source("hostile-name.zh")
    assert written >= 7
    assert squeezed(text).count(squeezed(HOSTILE)) == written
    assert "root:" not in text


@pytest.mark.parametrize("name", ["bert-base.en", "bert-base.zh"])
def test_the_title_block_names_symparams_and_the_outline_gives_page_numbers(compiled, name):
    text = compiled[name][2]
    head = text.split("提纲" if name.endswith("zh") else "Outline", 1)[0]
    assert "BERT-base" in head and "symparams" in head  # the title names the preset as its paper does
    assert re.search(r"(20\d\d 年 \d+ 月 \d+ 日|[A-Z][a-z]+ \d+, 20\d\d)", head), head  # \today
    # every outline entry ends in its page number (two LaTeX runs resolve \pageref; "??" would be left otherwise)
    entries = re.findall(r"^(?:\d+\.|\d+\.\d+) .*?(?:\. )+\.? ?(\d+)$", text, flags=re.MULTILINE)
    assert len(entries) == 14, entries  # eleven sections (the laws' and the fine-tuning's too) and BERT's three components
    assert [int(p) for p in entries] == sorted(int(p) for p in entries)


@pytest.mark.parametrize("name", list(CASES))
def test_no_unresolved_reference_and_no_hyphenated_layernorm(compiled, name):
    _, log, text = compiled[name]
    assert "??" not in text
    assert "undefined references" not in log
    assert not re.search(r"Lay-\s*erNorm|Layer-\s*Norm", text)


@pytest.mark.parametrize("name, headline", [("bert-base.en", "109,482,240 parameters"),
                                            ("bert-base.zh", "共 109,482,240 个参数")])
def test_the_title_block_gives_the_version_and_the_total(compiled, name, headline):
    text = compiled[name][2]
    head = flat(text.split("提纲" if name.endswith("zh") else "Outline", 1)[0])
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert f"symparams {version}" in head
    assert headline in head  # BERT-base's exact count (the article's, and transformers')


@pytest.mark.parametrize("name, figure", [("bert-base.en", "Figure 1"), ("deepseek-v3.zh", "图 1")])
def test_the_block_diagram_is_a_figure_the_introduction_refers_to(compiled, name, figure):
    text = flat(compiled[name][2])
    intro = text.split("1. Introduction" if name.endswith("en") else "1. 简介", 1)[1]
    assert intro.count(figure) >= 2  # the sentence that refers to it, and its caption
    if name == "bert-base.en":  # the shapes, and the stack of L = 12 encoder layers
        shown = ("[30522,768]", "3×[768,768]", "[768,3072]", "×L,L=12")
    else:  # 3 dense layers, then 58 with 256 routed experts (the published config's 61 layers)
        shown = ("×Lf，Lf=3", "×(L−Lf)，L−Lf=58", "×Ne，Ne=256")
    for piece in shown:
        assert piece in squeezed(text), piece


def test_the_summary_boxes_the_total_and_refers_to_the_formulas_set_below_it(compiled):
    source = document("deepseek-v3", "tex", "zh")
    summary = source.split(r"\label{sec:summary}", 1)[1].split(r"\section*", 1)[0]
    table, below = summary.split(r"\end{xltabular}", 1)
    refs = re.findall(r"\\eqref\{([^}]+)\}", table)
    assert refs and all(rf"\label{{{ref}}}" in below for ref in refs)
    total = re.search(r"\\midrule\n\\textbf\{[^}]+\} & & [^&]+ & \\textbf\{([\d,]+)\}", table).group(1)
    assert r"\boxed{" + total.replace(",", "{,}") + "}" in below  # the table's total, boxed
    assert total in flat(compiled["deepseek-v3.zh"][2])


@pytest.mark.parametrize("name, make, lang", [("bert-base.en", "bert-base", "en"), ("deepseek-v3.zh", "deepseek-v3", "zh")])
def test_no_label_of_the_summary_table_wraps(compiled, name, make, lang):
    """The label column is as wide as its widest label: "Add & Norm: LayerNorm", measured at 0.5 em a letter,
    came out 10 pt short and broke over two lines."""
    from symparams.documents.context import context
    from symparams.documents.markup import plain

    ctx = context(model(make), lang)
    text = compiled[name][2]
    start = text.index(ctx["t"]["sections"]["summary"], text.index(ctx["t"]["sections"]["closed_form"]))  # not the outline's
    lines = text[start:text.index(ctx["t"]["sections"]["closed_form"], start)].splitlines()
    labels = {plain(r["title"]) for r in ctx["doc"]["summary"]}
    assert [label for label in labels if not any(label in line for line in lines)] == []


@pytest.mark.parametrize("name, make, lang", [("bert-base.en", "bert-base", "en"), ("bert-base.zh", "bert-base", "zh"),
                                              ("deepseek-v3.zh", "deepseek-v3", "zh")])
def test_every_option_the_pdf_names_is_on_one_line_with_both_hyphens(compiled, name, make, lang):
    """An option broke after a hyphen ("--dtype、-" / "-optimizer", "--lora-" / "targets"): a reader could not
    tell which hyphens to type."""
    def options(text: str) -> list[str]:  # line by line: an option broken over two lines is not found
        return sorted(o for line in text.splitlines() for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]", line))

    source = document(make, "md", lang)
    assert options(source) and options(compiled[name][2]) == options(source)
