"""A Chinese label ends in one full-width colon: "输入处理：词嵌入：" or "分组查询注意力：K、V 有 G 个头" after a switch's
"：" reads as a label inside a label.  Two colons with no other punctuation between them are one clause with two."""

from __future__ import annotations

import re

import pytest

from tests.reference import ROOT

CHINESE = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.zh\.md$", p.name))
#: two full-width colons in one clause: nothing between them that ends or opens another
TWO_COLONS = re.compile(r"：[^：，。；？！（）\n]*：")


def prose_lines(text: str):
    """The lines of prose: no code block (a diagram), table, display or math, and code spans as one mark."""
    in_block = False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_block = not in_block
        elif not in_block and not line.startswith(("|", "$$")):
            yield re.sub(r"`[^`]*`", "`c`", re.sub(r"\$[^$]*\$", "$m$", line))


@pytest.mark.parametrize("path", CHINESE, ids=lambda p: p.name)
def test_a_chinese_label_has_one_colon(path):
    assert [line for line in prose_lines(path.read_text(encoding="utf-8")) if TWO_COLONS.search(line)] == []


def test_the_check_sees_a_label_inside_a_label():
    assert TWO_COLONS.search("占比太小、饼图中看不出的部分：输入处理：词嵌入（Word Embedding）占 0.14%。")
    assert not TWO_COLONS.search("输入处理：词嵌入（Word Embedding）占 0.14%，在饼图中小得看不出来。")
