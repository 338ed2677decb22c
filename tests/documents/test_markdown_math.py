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
from functools import lru_cache
from html.parser import HTMLParser

import pytest

from symparams import Model, model
from symparams.documents.commonmark import closing_strong
from symparams.documents.markup import plain
from symparams.documents.math_layout import MD_LINE_EM, math_width
from symparams.documents.render import render
from symparams.families.presets import all_presets
from symparams.families.registry import family
from tests.reference import JS
from tests.reference.documents import document, document_context

PRESETS = sorted(all_presets())
HOSTILE = r"\input{/etc/passwd} $x$ 100% _a_ #1 ~ ^ & {}"


def node_check(payload: dict) -> dict:
    """What ``tests/js/check.mjs`` makes of ``payload`` (two tests that send the same payload, as the pie tests
    do with every document's pie, share one run of node)."""
    return json.loads(_node_check(json.dumps(payload)))


@lru_cache(maxsize=8)
def _node_check(payload: str) -> str:
    node = shutil.which("node")
    assert node, "node is needed for the Markdown checks"
    assert (JS / "node_modules" / "katex").is_dir(), "run `npm install` in tests/js"
    out = subprocess.run([node, str(JS / "check.mjs")], input=payload, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


# -- extracting math the way GitHub reads it -------------------------------------------------

_INLINE = re.compile(r"(?<![\\$])\$(?!\$)(?! )((?:[^$\\]|\\.)+?)(?<! )\$(?!\$)")


def spans(markdown: str) -> list[tuple[str, bool]]:
    """Every ``$…$`` (inline) and ``$$…$$`` (display) span outside code, with its mode; a display
    may also be a block: a line ``$$``, the math's lines, a line ``$$``."""
    found = []
    fenced = False
    block: list[str] | None = None
    for line in markdown.splitlines():
        if block is not None:
            if line.strip() == "$$":
                found.append(("\n".join(block), True))
                block = None
            else:
                block.append(line)
            continue
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        stripped = line.strip()
        if stripped == "$$":
            block = []
            continue
        if stripped.startswith("$$") and stripped.endswith("$$") and len(stripped) > 4:
            found.append((stripped[2:-2], True))
            continue
        line = re.sub(r"`[^`]*`", "", line)  # code spans hold no math
        found.extend((m.group(1), False) for m in _INLINE.finditer(line))
    assert block is None, "a $$ block is not closed"
    return found


def display_blocks(markdown: str) -> list[str]:
    """The math of every multi-line ``$$`` block."""
    return re.findall(r"^\$\$\n(.*?)\n\$\$$", markdown, flags=re.DOTALL | re.MULTILINE)


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
    """The Mermaid pies of ``markdown`` (the block diagram's flowchart is tests/documents/test_diagram.py's)."""
    return [b for b in re.findall(r"```mermaid\n(.*?)```", markdown, flags=re.S) if "\nflowchart " not in b]


@pytest.fixture(scope="session")
def documents():
    return {(name, lang): document(name, "md", lang) for name in PRESETS for lang in ("en", "zh")}


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
    for parsed, total, block, (name, lang) in zip(result["mermaid"], totals, blocks, documents):
        assert parsed["error"] is None, (parsed["error"], block)
        assert parsed["sections"], block
        # components with a zero count (a tied output layer) are left out of the pie, and those under 1 %
        # are named beside it
        small = [c["count"] for c in document_context(name, lang)["doc"]["chart"] if not c["in_pie"]]
        assert sum(v for _, v in parsed["sections"]) + sum(small) == total


@pytest.mark.node
def test_every_slice_of_every_pie_can_be_seen_and_the_others_are_named_beside_it(documents):
    """Mermaid draws a 0.54 % slice (BERT's pooler) as a sliver no reader sees, and leaves out one under
    0.5 % (DeepSeek-V3's embedding, 0.14 %): such a component is named with its share under the pie."""
    blocks = {key: mermaid_blocks(text)[0] for key, text in documents.items()}
    parsed = dict(zip(blocks, node_check({"mermaid": list(blocks.values())})["mermaid"]))
    for (name, lang), text in documents.items():
        slices = parsed[name, lang]["sections"]
        assert min(v for _, v in slices) * 100 >= sum(v for _, v in slices), (name, lang)
        after = text.split(blocks[name, lang])[1].split("\n## ")[0]
        for c in document_context(name, lang)["doc"]["chart"]:
            if not any(label.startswith(c["label"] + " ") for label, _ in slices):
                assert c["label"] in after and c["share"] in after, (name, lang, c["label"])


def test_bert_base_names_its_pooler_beside_the_pie():
    for lang, line in (("en", "Pooler (0.54%) is too small to see in the pie."),
                       ("zh", "池化层（Pooler）占 0.54%，在饼图中小得看不出来。")):
        assert line in document("bert-base", "md", lang).split("## 4.")[0]


@pytest.mark.node
def test_bert_base_pie_has_the_three_components_of_the_article():
    text = document("bert-base", "md")
    parsed = node_check({"mermaid": mermaid_blocks(text)})["mermaid"][0]
    # each slice labelled with its exact share (the text's 21.77 %, not Mermaid's rounded 22 %); the raw
    # counts are not shown (no showData: Mermaid would print them without separators)
    assert parsed["sections"] == [["Embedding layer 21.77%", 23_837_184], ["Encoder 77.69%", 85_054_464]]
    assert parsed["showData"] is False


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
        # section (it caches nothing), the shards section, the laws section (that none describes it), the
        # fine-tuning section, the articles' note and the conclusion: each line holds
        # the name once (the commands it suggests name no model the command line knows by that name: they say
        # --config PATH)
        assert len(lines) == text.count("passwd") == 11, lang
        assert "symparams flops --config PATH" in text
        rendered = node_check({"markdown": lines})["markdown"]
        for line, out in zip(lines, rendered):
            assert HOSTILE in _text(out), (line, out)
            assert not any("passwd" in tex for tex, _ in spans(line)), line


# -- the outline, long displays, the pie and lists of numbers (review 2.2) -------------------------------------

class _Lists(HTMLParser):
    """The list items of an HTML page as (depth, text): depth 1 for a top-level item."""

    def __init__(self):
        super().__init__()
        self.depth, self.items, self.open = 0, [], []

    def handle_starttag(self, tag, attrs):
        if tag in ("ol", "ul"):
            self.depth += 1
        elif tag == "li":
            self.items.append([self.depth, ""])
            self.open.append(len(self.items) - 1)

    def handle_endtag(self, tag):
        if tag in ("ol", "ul"):
            self.depth -= 1
        elif tag == "li":
            self.open.pop()

    def handle_data(self, data):
        if self.open:
            self.items[self.open[-1]][1] += data


def outline_of(markdown: str) -> str:
    """The outline section of a document: its heading to the next heading."""
    return re.search(r"^## .*?\n(.*?)(?=^## )", markdown, flags=re.DOTALL | re.MULTILINE).group(0)


@pytest.mark.node
def test_the_outline_is_a_nested_list_when_commonmark_renders_it(documents):
    keys = sorted(documents)
    rendered = node_check({"markdown": [outline_of(documents[k]) for k in keys]})["markdown"]
    for key, out in zip(keys, rendered):
        outline = document_context(key[0], key[1])["doc"]["outline"]
        parser = _Lists()
        parser.feed(out)
        top = [text.split("\n")[0].strip() for depth, text in parser.items if depth == 1]
        nested = [text.strip() for depth, text in parser.items if depth == 2]
        assert len(top) == len(outline), (key, out)
        assert nested == [f"{c['number']} {plain(c['title'])}" for o in outline for c in o["children"]], (key, out)
        # a section's children are items of its own list, not words folded into its line
        assert all(not re.search(r"\d\.\d", line) for line in top), (key, top)


@pytest.mark.node
def test_bert_base_outline_renders_its_three_parts_under_computation():
    out = node_check({"markdown": [outline_of(document("bert-base", "md", "zh"))]})["markdown"][0]
    assert re.search(r"<li>计算过程\s*<ul>\s*<li>2\.1 嵌入层（Embedding）</li>\s*<li>2\.2 编码器（Encoder）</li>\s*"
                     r"<li>2\.3 池化层（Pooler）</li>\s*</ul>\s*</li>", out), out


def _rows(block: str) -> list[str]:
    assert block.startswith("\\begin{aligned}\n") and block.endswith("\n\\end{aligned}"), block
    return block.split("\n")[1:-1]


def test_no_display_row_is_wider_than_the_page(documents):
    # a one-line display that would be too wide is an aligned block, each row within the line (in em of
    # math_width's measure; a row holds its chain's left-hand side, as the rows below it start after it)
    for (name, lang), text in documents.items():
        for line in text.splitlines():
            if line.startswith("$$") and line.endswith("$$") and len(line) > 4:
                assert math_width(line[2:-2]) <= MD_LINE_EM, (name, lang, line[:80])
        for block in display_blocks(text):
            rows = _rows(block)
            lhs = rows[0].split("&", 1)[0]
            for row in rows:
                body = row.split("&", 1)[1].removesuffix(" \\\\").replace(r"\quad", "")
                assert math_width(lhs + body) <= MD_LINE_EM, (name, lang, row[:80])
                assert len(row) <= 240, (name, lang, row[:80])


def test_long_displays_of_bert_base_are_aligned_blocks():
    text = document("bert-base", "md", "zh")
    blocks = display_blocks(text)
    head_count = [b for b in blocks if b.split("\n")[1].startswith("N(A) &= ")]
    assert len(head_count) == 1 and len(_rows(head_count[0])) >= 2, blocks  # Q, K, V collected: 3·A·(…)
    assert not any(len(line) > 200 for line in text.splitlines() if line.startswith("$$")), "a one-line display"


def test_aligned_blocks_are_safe_in_github_markdown(documents):
    # GitHub reads a $$ block as Markdown first: no blank line inside, "\\" ends a line (one row a line),
    # and no row starts with something Markdown would take as a list, a quote, a heading or a table
    for (name, lang), text in documents.items():
        for block in display_blocks(text):
            rows = _rows(block)
            assert all(row.strip() for row in rows), (name, lang)
            assert all(row.endswith(" \\\\") for row in rows[:-1]) and not rows[-1].endswith("\\\\"), (name, lang)
            assert "\\\\" not in "".join(row.removesuffix(" \\\\") for row in rows), (name, lang)
            for row in rows:
                assert not re.match(r"\s*([-+*>#|=]|\d+[.)])", row), (name, lang, row)


def test_every_aligned_block_is_found_as_one_display_span(documents):
    text = documents["t5-small", "en"]
    found = [tex for tex, display in spans(text) if display and tex.startswith("\\begin{aligned}")]
    assert found == display_blocks(text) and found


def test_pie_labels_carry_the_exact_share_the_summary_gives(documents):
    for (name, lang), text in documents.items():
        block = mermaid_blocks(text)[0]
        assert "showData" not in block and '"pieSectionTextSize": "0px"' in block, (name, lang)
        chart = document_context(name, lang)["doc"]["chart"]
        labels = re.findall(r'^ {4}"(.*)" : (\d+)$', block, flags=re.MULTILINE)
        assert [label for label, _ in labels] == [f"{c['label']} {c['share']}" for c in chart if c["in_pie"]], \
            (name, lang)
        for c in chart:  # the same share as in the text
            assert f"{c['share']}" in text.split(block)[0], (name, lang, c["share"])


def _prose(markdown: str) -> str:
    """A document without its math, code and fenced blocks."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    text = re.sub(r"^\$\$\n.*?\n\$\$$", "", text, flags=re.DOTALL | re.MULTILINE)
    text = re.sub(r"\$\$[^\n]*?\$\$", "", text)
    return re.sub(r"`[^`]*`|(?<!\\)\$[^$\n]*(?<!\\)\$", "", text)


def test_lists_of_numbers_are_not_joined_by_commas_where_the_numbers_hold_commas(documents):
    for (name, lang), text in documents.items():
        assert not re.search(r"\d,\d{3}(?:, |、)\d", text), (name, lang)
        if lang == "zh":  # Chinese lists numbers with 、
            assert not re.search(r"\d, \d", _prose(text)), (name, lang)
    assert "| 1 | 109,482,240 | 2 | 109,482,240 | 3 | 109,482,240 |" in documents["bert-base", "zh"]  # a table


# -- bold that CommonMark closes ---------------------------------------------------------------------------------

def literal_asterisks(html: str) -> list:
    """The ``**`` runs markdown-it left as text (outside code and math): bold that did not open or close."""
    text = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", html, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", "", text, flags=re.S)
    return [m.group(0) for m in re.finditer(r".{0,15}\*\*.{0,15}", text)]


@pytest.mark.node
def test_every_bold_of_every_document_is_bold_when_commonmark_renders_it(documents):
    keys = sorted(documents)
    rendered = node_check({"markdown": [documents[k] for k in keys]})["markdown"]
    left = {key: literal_asterisks(out) for key, out in zip(keys, rendered) if literal_asterisks(out)}
    assert not left, left


@pytest.mark.node
def test_a_chinese_title_in_parentheses_before_a_word_was_asterisks_and_is_bold():
    source = "**嵌入层（Embedding）**总共 **23,837,184**"
    before, after = node_check({"markdown": [source, closing_strong(source)]})["markdown"]
    assert literal_asterisks(before) and not literal_asterisks(after)
    assert "<strong>嵌入层</strong>（Embedding）总共 <strong>23,837,184</strong>" in after


@pytest.mark.node
def test_bold_code_of_an_inferred_document_stays_code_and_closes():
    # an inferred model's components are titled by their module (**`layers.*`**), whose backtick is punctuation:
    # moving it out of the bold cut the code span in two ("**`layers**.*`总共")
    from symparams.families.inferred import model as inferred_model
    from tests.documents.test_inferred_documents import OLMO

    m = inferred_model(OLMO, source="OLMo-1B-hf")
    texts = [render(m, format="md", lang=lang) for lang in ("en", "zh")]
    rendered = node_check({"markdown": texts})["markdown"]
    assert all(not literal_asterisks(out) for out in rendered), [literal_asterisks(out)[:3] for out in rendered]
    assert all("<strong><code>layers.*</code></strong>" in out for out in rendered)
