"""The head-count section as a proof a student follows, and the rule of thumb closing the closed-form section.

Order: the premise (A | H), one head and the heads side by side, N(A) with identical terms holding A collected and the
terms holding A listed, the verdict (∎), the formal check ∂N/∂A, the numbers; where A does not cancel, a
two-row counterexample and the re-derivation with G/A or A·D held fixed.
"""

import re

import pytest

from tests.reference.documents import document

# BERT-base as published (Devlin et al.): V = 30522, P = 512, S = 2, H = 768, L = 12, FFN 3072 = 4H
BERT_THUMB = 12 * 12 * 768**2 + (30522 + 512 + 2) * 768
BERT_EXACT = (31036 * 768 + 2 * 768 + 12 * (4 * (768 * 768 + 768) + 4 * 768 + 8 * 768 * 768 + 5 * 768)
              + 768 * 768 + 768)


def section(text: str, number: int) -> str:
    """Section ``number`` of a Markdown document."""
    return re.search(rf"^## {number}\. .*?(?=^## \d)", text, re.S | re.M).group(0)


def in_order(text: str, *parts: str) -> bool:
    at = [text.find(p) for p in parts]
    return -1 not in at and at == sorted(at)


@pytest.fixture(scope="session")
def bert_en():
    return document("bert-base", "md", "en")


def test_bert_base_proof_goes_premise_one_head_terms_verdict_check_numbers(bert_en):
    heads = section(bert_en, 5)
    assert in_order(heads, "**Premise.**", r"- $A \mid H$ ($A$ divides $H$): $H/A$ is the head dimension",
                    "**One head.**", r"$$A \left(H \cdot \frac{H}{A} + \frac{H}{A}\right) = H^{2} + H$$",
                    "**Every term that holds $A$.**", "N(A) &= ", "The terms of $N(A)$ that hold $A$",
                    "No other term contains $A$, so $N$ does not depend on $A$. ∎",
                    "As a formal check", r"\frac{\partial N}{\partial A} = 0", "**With numbers.**",
                    "| 768 | 109,482,240 |")
    assert "derivative by $A$:" not in heads  # the derivative is the check, not the argument


def test_bert_base_lists_q_k_v_collected_as_the_only_terms_holding_a(bert_en):
    heads = section(bert_en, 5)
    listed = heads[heads.index("The terms of $N(A)$ that hold $A$"):]
    terms = re.findall(r"^- \$(.*)\$: (.*)$", listed, re.M)
    assert terms == [(r"3 L \cdot A \left(H \cdot \frac{H}{A} + \frac{H}{A}\right) = 3 L \left(H^{2} + H\right)",
                      "query $W^Q$, key $W^K$, value $W^V$")]
    written = re.search(r"N\(A\) &= .*?\\end\{aligned\}", heads, re.S).group(0)
    assert written.count(r"\frac{H}{A} + \frac{H}{A}") == 1 and r"3 A \Bigl(H" in written  # once, times 3


def test_bert_base_closed_form_ends_with_the_rule_of_thumb_and_how_close_it_is(bert_en):
    closed = section(bert_en, 4)
    assert (BERT_THUMB, BERT_EXACT) == (108_770_304, 109_482_240)
    assert r"N \approx 12 L \cdot H^{2} + \left(V + P + S\right) H = 108{,}770{,}304" in closed
    assert "That is 99.35% of the exact count, 109,482,240." in closed
    assert f"The {BERT_EXACT - BERT_THUMB:,} parameters it leaves out (0.65%)" in closed


@pytest.mark.parametrize("name,own", [("llama-2-70b", True), ("t5-small", True), ("distilbart-12-6", False)])
def test_the_one_stack_rule_is_not_claimed_for_other_layers(name, own):
    # LLaMA and T5 get their family's rule with its error (tests/analysis/test_family_rules.py); BART none
    closed = section(document(name, "md", "en"), 4)
    assert r"12 L \cdot H^{2}" not in closed
    if own:
        assert "The rule's error, the exact count minus the rule, is $" in closed and "not used" not in closed
    else:
        assert r"\approx" not in closed.replace(r"$N \approx 12 L H^2 + V H$", "")
        assert "is built otherwise, so the rule is not used for it." in closed


def test_chinese_proof_has_its_premise_and_ends_with_qed():
    heads = section(document("bert-base", "md", "zh"), 5)
    assert in_order(heads, "**前提。**", r"- $A \mid H$（$A$ 整除 $H$）：$H/A$", "**单个头。**", "**含 $A$ 的项。**",
                    "其他项都不含 $A$，所以 $N$ 与 $A$ 无关。 ∎", "形式上再检验一次", "**代入数值。**")


def test_latex_boxes_the_closed_form_and_sets_the_proof_in_a_proof_environment():
    tex = document("bert-base", "tex", "en")
    closed = tex[tex.index(r"\label{sec:closed_form}"):tex.index(r"\label{sec:heads}")]
    assert r"\boxed{" in closed and "108{,}770{,}304" in closed and r"99.35\%" in closed
    proof = tex[tex.index(r"\begin{proof}"):tex.index(r"\end{proof}")]
    assert r"\textbf{One head.}" in proof and "so $N$ does not depend on $A$." in proof
    assert r"\usepackage{amsmath,amssymb,amsthm}" in tex


def test_grouped_query_attention_gives_a_two_row_counterexample_then_holds_g_over_a_fixed():
    heads = section(document("llama-2-70b", "md", "en"), 5)
    rows = re.findall(r"^\| (\d+) \| ([\d,]+) \|$", heads, re.M)
    # Llama 2 70B: V = 32000, H = 8192, L = 80, F = 28672, G = 8; K and V are H × (G·H/A) each
    def total(a):
        return 32000 * 8192 + 80 * (2 * 8192**2 + 2 * 8192 * (8 * 8192 // a) + 3 * 8192 * 28672 + 2 * 8192) + 8192
    assert rows == [("64", f"{total(64):,}"), ("128", f"{total(128):,}")]
    assert in_order(heads, r"$2 L \cdot G \cdot H \cdot \frac{H}{A} = 2 L \frac{G H^{2}}{A}$: key $W^K$, value $W^V$",
                    "but multiplied out these do not all lose it", "**A counterexample.**",
                    r"Hold $\frac{G}{A} = \rho$ fixed", "Then the count no longer depends on $A$.")
    assert "∎" not in heads


def test_t5_says_in_words_which_part_still_holds_a_with_a_times_d_fixed():
    heads = section(document("t5-small", "md", "zh"), 5)
    assert heads.count("**前提。** 这里每个头有自己的宽度 $D$") == 1
    assert in_order(heads, "如果改为固定 $A D = W$", "即便如此，参数量仍然依赖 $A$。", "仍含 $A$ 的部分：",
                    "- **相对位置偏置**（`encoder.block.0.layer.0.SelfAttention.relative_attention_bias`、"
                    "`decoder.block.0.layer.0.SelfAttention.relative_attention_bias`）：共 $2 A B$ 个参数，"
                    "$2$ 份中每份 $A B$ 个，即每个头 $B$ 个：无论每个头多宽，它都随头数增长。")
