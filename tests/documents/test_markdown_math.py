"""The Markdown documents render for real: KaTeX math, Mermaid pie syntax, CommonMark escaping.

Node runs ``tests/js/check.mjs`` (``npm install`` in ``tests/js`` provides
katex, @mermaid-js/parser and markdown-it; ``.ci/run`` does it).  Nothing here
is skipped: a missing node or package is a failure.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from symparams import Model, model
from symparams.documents.render import render
from symparams.families.presets import all_presets
from symparams.families.registry import family
from tests.reference import JS

PRESETS = sorted(all_presets())
HOSTILE = r"\input{/etc/passwd} $x$ 100% _a_ #1 ~ ^ & {}"


def node_check(payload: dict) -> dict:
    node = shutil.which("node")
    assert node, "node is needed for the Markdown checks"
    assert (JS / "node_modules" / "katex").is_dir(), "run `npm install` in tests/js"
    out = subprocess.run([node, str(JS / "check.mjs")], input=json.dumps(payload), capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# -- extracting math the way GitHub reads it -------------------------------------------------

_INLINE = re.compile(r"(?<![\\$])\$(?!\$)(?! )((?:[^$\\]|\\.)+?)(?<! )\$(?!\$)")


def spans(markdown: str) -> list[tuple[str, bool]]:
    """Every ``$…$`` (inline) and ``$$…$$`` (display) span outside code, with its mode."""
    found = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        stripped = line.strip()
        if stripped.startswith("$$") and stripped.endswith("$$") and len(stripped) > 4:
            found.append((stripped[2:-2], True))
            continue
        line = re.sub(r"`[^`]*`", "", line)  # code spans hold no math
        found.extend((m.group(1), False) for m in _INLINE.finditer(line))
    return found


def dollars(markdown: str) -> int:
    """The ``$`` signs outside code that are not escaped: each opens or closes math."""
    count, fenced = 0, False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            count += len(re.findall(r"(?<!\\)\$", re.sub(r"`[^`]*`", "", line)))
    return count


def mermaid_blocks(markdown: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", markdown, flags=re.S)


@pytest.fixture(scope="module")
def documents():
    return {(name, lang): render(model(name), format="md", lang=lang) for name in PRESETS for lang in ("en", "zh")}


def test_span_extraction_finds_inline_and_display_math_and_skips_escapes_and_code():
    text = "a $x^2$ b \\$5 and \\$6 `$not$`\n\n$$N = 1$$\n\n```\n$$no$$\n```\n"
    assert spans(text) == [("x^2", False), ("N = 1", True)]
    assert dollars(text) == 2 + 4


def test_every_dollar_of_every_document_belongs_to_a_math_span_found(documents):
    # an extraction bug would leave formulas unchecked: every unescaped $ outside code is a span's delimiter
    for (name, lang), text in documents.items():
        assert dollars(text) == sum(4 if display else 2 for _, display in spans(text)), (name, lang)


@pytest.mark.node
def test_every_math_span_of_every_document_parses_with_katex(documents):
    unique = {}
    for (name, lang), text in documents.items():
        for tex, display in spans(text):
            unique.setdefault((tex, display), (name, lang))
    keys = list(unique)
    result = node_check({"math": [{"tex": t, "display": d} for t, d in keys]})
    errors = [(unique[k], k[0][:80], err) for k, err in zip(keys, result["math"]) if err]
    assert not errors, errors[:5]


@pytest.mark.node
def test_katex_check_can_fail():
    result = node_check({"math": [{"tex": r"\frac{1}{", "display": True}, {"tex": r"\undefinedmacro x",
                                                                            "display": False}]})
    assert all(result["math"])


@pytest.mark.node
def test_every_document_has_one_valid_mermaid_pie_whose_values_add_up_to_the_total(documents):
    blocks, totals = [], []
    for (name, lang), text in documents.items():
        found = mermaid_blocks(text)
        assert len(found) == 1, (name, lang)
        blocks.append(found[0])
        totals.append(model(name).count)
    result = node_check({"mermaid": blocks})
    for parsed, total, block in zip(result["mermaid"], totals, blocks):
        assert parsed["error"] is None, (parsed["error"], block)
        assert parsed["sections"], block
        # components with a zero count (a tied output layer) are left out of the pie
        assert sum(v for _, v in parsed["sections"]) == total


@pytest.mark.node
def test_bert_base_pie_has_the_three_components_of_the_article():
    text = render(model("bert-base"), format="md")
    parsed = node_check({"mermaid": mermaid_blocks(text)})["mermaid"][0]
    assert parsed["sections"] == [["Embedding layer", 23_837_184], ["Encoder", 85_054_464], ["Pooler", 590_592]]
    assert parsed["showData"] is True


@pytest.mark.node
def test_mermaid_check_can_fail():
    parsed = node_check({"mermaid": ['pie\n    "a" 1\n']})["mermaid"][0]
    assert parsed["error"]


def _text(html_text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", html_text)).split())


@pytest.mark.node
def test_hostile_title_is_literal_markdown_and_no_math():
    text = render(model("bert-base"), format="md", title=HOSTILE)
    heading = text.splitlines()[0]
    assert heading.startswith("# ")
    rendered = node_check({"markdown": [heading]})["markdown"][0]
    assert rendered.startswith("<h1>") and _text(rendered) == HOSTILE
    assert spans(heading) == []  # "$x$" was escaped: GitHub shows it, it does not typeset it


@pytest.mark.node
def test_hostile_model_name_is_literal_wherever_it_appears():
    m = Model(family("bert"), {s.name: v for s, v in model("bert-base").values.items()}, name=HOSTILE)
    for lang in ("en", "zh"):
        text = render(m, format="md", lang=lang)
        lines = [line for line in text.splitlines() if "passwd" in line]
        # the title, the introduction, the values, the head-count section (twice), the compute-and-memory
        # section (it caches nothing), the articles' note, the conclusion and the command line in it: each line
        # holds the name once
        assert len(lines) == text.count("passwd") == 9, lang
        rendered = node_check({"markdown": lines})["markdown"]
        for line, out in zip(lines, rendered):
            assert HOSTILE in _text(out), (line, out)
            assert not any("passwd" in tex for tex, _ in spans(line)), line
