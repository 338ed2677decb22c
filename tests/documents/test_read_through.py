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
