"""What a reading of GPT-2's and T5's documents found: a per-head count given for a module that holds three
projections (GPT-2's fused ``c_attn``) must say it is each projection's; a component's formula reads the same in
the walk and in the summary table."""

from __future__ import annotations

import re

import transformers

from tests.reference import ROOT
from tests.reference.hf import build


def test_a_fused_projection_is_counted_per_head_for_each_of_its_projections():
    c_attn = build("GPT2Model", transformers.GPT2Config()).h[0].attn.c_attn
    h = 768
    assert c_attn.weight.numel() + c_attn.bias.numel() == 3 * (h * h + h)  # q, k and v in one Conv1D
    for lang, each in (("en", "In each of these, one head holds"), ("zh", "其中每一项，一个头有")):
        text = (ROOT / "docs" / f"gpt2.{lang}.md").read_text(encoding="utf-8")
        line = next(line for line in text.splitlines() if "`h.*.attn.c_attn`" in line)
        assert each in line


def test_a_component_reads_the_same_in_the_walk_and_the_summary():
    text = (ROOT / "docs" / "gpt2.en.md").read_text(encoding="utf-8")
    walk = re.search(r"Input in all:\n\n\$\$(.+?) = ", text)[1]
    assert f"| **Input** |  | ${walk}$ |" in text


T5_BASE = transformers.T5Config.from_json_file(ROOT / "tests" / "fixtures" / "t5-base" / "config.json")


def test_a_conclusion_gives_each_count_once():
    """T5-base's conclusion printed 222,903,552 as the total, as the trainable count and again as the released
    model's (its tied head adds nothing): where two counts are one number, the sentence says so instead.  The
    tied heads are checked against builds: GPT-2's and T5's LM heads add no parameters of their own."""
    for cls, config, base in (("GPT2LMHeadModel", transformers.GPT2Config(), 124_439_808),
                              ("T5ForConditionalGeneration", T5_BASE, 222_903_552)):
        assert sum(p.numel() for p in build(cls, config).parameters()) == base
    for name in (p.name for p in (ROOT / "docs").glob("*.md") if p.name.count(".") == 2):
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        conclusion = text.rsplit("\n## ", 1)[1].split("\n\n", 1)[1].split("\n")[0]
        bold = re.findall(r"\*\*([\d,]+)\*\*", conclusion)
        assert len(bold) == len(set(bold)), (name, conclusion)
        total = bold[0]
        assert not re.search(rf"{total}\*\*[^.。]*?{total}", conclusion.split("。")[0].split(". ")[0]), name
