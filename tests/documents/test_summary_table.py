"""The Markdown summary table as GitHub shows it (markdown-it, KaTeX, GitHub's table style, headless Chromium
at GitHub's width): no label wraps, and the table needs no sideways scroll."""

from __future__ import annotations

import json
import re

import pytest

from tests.documents.test_html_page import Page, dump_dom
from tests.documents.test_markdown_math import node_check
from tests.reference import JS
from tests.reference.documents import document

#: GitHub's Markdown column at a common window, its text and its table cells (github-markdown-css)
STYLE = """body{margin:0;font:16px/1.5 -apple-system,"Segoe UI","Noto Sans",Helvetica,Arial,"Noto Sans CJK SC",sans-serif}
article{width:880px;padding:0}
table{display:block;width:max-content;max-width:100%;overflow:auto;border-collapse:collapse}
td,th{padding:6px 13px;border:1px solid #d0d7de}"""

#: each label cell's lines (the distinct tops of its text's boxes), and whether the table scrolls
MEASURE = """addEventListener("load", () => {
  const table = document.querySelector("table");
  const wrapped = [];
  for (const row of table.querySelectorAll("tbody tr")) {
    const range = document.createRange();
    range.selectNodeContents(row.cells[0]);
    const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    if (tops.size > 1) wrapped.push(row.cells[0].textContent.trim());
  }
  document.documentElement.dataset.layout = JSON.stringify({wrapped, scrolls: table.scrollWidth > table.clientWidth,
                                                              rows: table.querySelectorAll("tbody tr").length});
});"""


def summary_table(markdown: str) -> str:
    """The summary table's Markdown: the lines of the first table after the heading of section 3."""
    section = markdown[markdown.index("\n## 3."):]
    lines = section[section.index("\n|") + 1:].splitlines()
    return "\n".join(line for line in lines[:next(i for i, line in enumerate(lines) if not line.startswith("|"))])


def layout(table_markdown: str, folder) -> dict:
    html = node_check({"page": [table_markdown]})["page"][0]
    page = folder / "table.html"
    katex = (JS / "node_modules" / "katex" / "dist" / "katex.min.css").resolve().as_uri()
    page.write_text(f'<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="{katex}">'
                    f"<style>{STYLE}</style><script>{MEASURE}</script></head><body><article>{html}</article>"
                    "</body></html>", encoding="utf-8")
    root = Page(dump_dom(page, "", "--window-size=1000,800")).root
    return json.loads(root["data-layout"])


@pytest.mark.node
@pytest.mark.parametrize("name, lang", [("bert-base", "zh"), ("bert-base", "en"), ("t5-base", "en"),
                                        ("deepseek-v3", "en"), ("llama-3-8b", "zh"), ("mixtral-8x7b", "en")])
def test_no_label_of_the_summary_table_wraps_and_the_table_fits(name, lang, tmp_path):
    """A label broke over two lines ("词嵌入（Token / Embedding）", "Add & Norm: / LayerNorm") beside a long
    formula, and DeepSeek-V3's table ran off the page."""
    table = summary_table(document(name, "md", lang))
    found = layout(table, tmp_path)
    assert found["rows"] == len(re.findall(r"^\| ", table, flags=re.M)) - 1
    assert (found["wrapped"], found["scrolls"]) == ([], False)


@pytest.mark.node
def test_the_table_check_sees_a_wrapped_label(tmp_path):
    long = "$" + " + ".join(f"H_{{{k}}} L_{{{k}}}" for k in range(40)) + "$"
    table = f"| Component | Formula |\n|---|---|\n| Add & Norm: LayerNorm | {long} |"
    found = layout(table, tmp_path)
    assert found["wrapped"] == ["Add & Norm: LayerNorm"]
