"""How notebooks and IPython show models, breakdowns and proofs (symparams.documents.notebook)."""

import json
from pathlib import Path

import sympy as sp
from IPython.lib.pretty import pretty

from symparams import model
from symparams.documents.notebook import heading, text
from symparams.documents.proof_text import proof_equations, proof_lines

# bert-base by hand: embeddings, 12 encoder layers, pooler
EMB = (30522 + 512 + 2) * 768 + 2 * 768
ENC = 12 * (4 * (768 * 768 + 768) + 4 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 768)
POOL = 768 * 768 + 768
BERT_BASE = EMB + ENC + POOL
DIVISORS_OF_768 = "1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 768"


def write_config(folder: Path, **data) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps({"model_type": "bert", **data}))
    return path


def test_heading_names_the_model_its_family_and_its_settings():
    assert heading(model("bert-base")) == "bert-base (BERT): V=30522 P=512 S=2 H=768 L=12 A=12 r=4 pooler=true"
    assert heading(model("bert-base", head="masked-lm")).endswith("pooler=false head=masked-lm")


def test_symbolic_breakdown_shows_formulas():
    b = model("bert").breakdown()
    assert "| embeddings | $" in b._repr_markdown_()
    assert "<math" in b._repr_html_()


def test_model_latex_shows_closed_form_and_count():
    latex = model("bert-base")._repr_latex_()
    assert latex.startswith("$") and latex.endswith("$")
    assert sp.latex(model("bert").closed_form) in latex
    assert latex.endswith(f"= {BERT_BASE:,}$".replace(",", "{,}"))


def test_model_html_has_mathml_and_a_row_per_component():
    html = model("bert-base")._repr_html_()
    assert html.count("<math") == 1 and "<msup><mi>H</mi><mn>2</mn></msup>" in html
    for name, value in (("embeddings", EMB), ("encoder", ENC), ("pooler", POOL), ("total", BERT_BASE)):
        assert f">{name}</" in html and f">{value:,}<" in html


def test_model_markdown_table_and_formula():
    md = model("bert-base")._repr_markdown_()
    assert f"| embeddings | {EMB:,} | 21.77% |" in md
    assert f"| **total** | **{BERT_BASE:,}** | **100.00%** |" in md
    assert "$$N = " in md


def test_pretty_text_in_ipython():
    m = model("bert-base")
    shown = pretty(m)
    assert shown == text(m)
    assert shown.splitlines()[0] == heading(m)
    assert f"{BERT_BASE:,}" in shown and "21.77%" in shown
    assert pretty(m.breakdown()).splitlines()[-1].split() == ["total", f"{BERT_BASE:,}", "100.00%"]
    proof = pretty(m.prove())
    assert proof == "\n".join(proof_lines(m.prove()))  # the command line's wording
    assert "does not depend" in proof and "dN/dA = 0" in proof


def test_proof_displays_state_the_premise_first_then_the_cancellation_and_the_witness():
    p = model("bert-base").prove()
    latex = p._repr_latex_()
    assert latex.startswith(r"$\text{given } A \mid H:")  # the premise before any equation
    assert r"\frac{\partial N}{\partial A} &= 0" in latex
    html = p._repr_html_()
    assert "&#x2202;" in html and "unevaluatedexpr" not in html
    assert "columnalign" not in html and html.count("<tr>") == 4  # the "=" in a cell of their own
    md = p._repr_markdown_()
    notes = [line for line in md.splitlines() if line.startswith("- ")]
    assert notes == [
        "- premise: A divides H: H/A is the head dimension, a whole number",
        "- each loses A when multiplied out, and no other term contains A: N does not depend on A ∎",
        "- formal check, A as a symbol: N = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3), "
        "a polynomial of degree 0 in A: dN/dA = 0",
        f"- witness: A in {{{DIVISORS_OF_768}}} all give {BERT_BASE:,}"]


def test_proof_text_follows_the_documents_order():
    # premise, one head, the terms of N(A) holding A, the verdict, the formal check, the numbers
    lines = proof_lines(model("bert-base").prove())
    keys = [line.strip().split(":")[0].split(" =")[0] for line in lines[1:]]
    assert keys == ["premise", "one head", "terms holding A",
                    "each loses A when multiplied out, and no other term contains A", "formal check, A as a symbol",
                    "witness"]
    assert "terms holding A: 3*L*A*(H*(H/A) + H/A) = 3*L*(H**2 + H)" in lines[3]


def test_proof_text_of_grouped_query_attention_names_what_keeps_a_and_holds_g_over_a_fixed():
    lines = "\n".join(proof_lines(model("llama-2-70b").prove()))
    assert "premise: G divides A" in lines
    assert "one head: H*(H/A); G heads: G*(H*(H/A)) = G*H**2/A" in lines
    assert "terms holding A: 2*L*G*(H*(H/A)) = 2*L*G*H**2/A   (still holds A)" in lines
    # Llama 2 70B: V = 32000, H = 8192, L = 80, F = 28672, G = 8; K and V are H × (G·H/A) each
    for a in (64, 128):
        n = 32000 * 8192 + 80 * (2 * 8192**2 + 2 * 8192 * (8 * 8192 // a) + 3 * 8192 * 28672 + 2 * 8192) + 8192
        assert f"A={a} gives {n:,}" in lines
    assert "holding G/A = rho fixed" in lines and "invariant again" in lines


def test_proof_text_of_t5_says_which_part_still_holds_a_with_a_times_d_fixed():
    lines = proof_lines(model("t5-small").prove())
    assert lines[1] == "  premise: each head has a width D of its own; A need not divide H"
    assert lines[-1].startswith("  still holding A: 2*A*B, B for each head   [encoder.block.0.layer.0.SelfAttention"
                                ".relative_attention_bias, decoder.block.0.layer.0.SelfAttention.relative_attention_bias]")


def test_proof_equations_are_the_steps_in_latex_and_mathml():
    per_head, copies, simplified, derivative = proof_equations(model("bert-base").prove())
    assert per_head[0][0] == r"A \left(H \frac{H}{A} + \frac{H}{A}\right)" and per_head[1][0] == "H^{2} + H"
    assert per_head[0][1].startswith("<mrow><mi>A</mi>") and "<mfrac><mi>H</mi><mi>A</mi></mfrac>" in per_head[0][1]
    assert copies[0][0] == r"3 L A \left(H \frac{H}{A} + \frac{H}{A}\right)"  # Q, K, V of every layer
    assert copies[1][0] == r"3 L \left(H^{2} + H\right)"
    assert simplified[0] == ("N", "<mi>N</mi>") and simplified[1][0] == sp.latex(model("bert").closed_form)
    assert derivative[0][0] == r"\frac{\partial N}{\partial A}" and derivative[1] == ("0", "<mn>0</mn>")


def test_user_text_is_escaped_in_every_display(tmp_path):
    name = "<b>evil<|b> $x$ 100% _a_ #1 {}"
    m = model(str(write_config(tmp_path / name)))
    assert m.name == name
    html = m._repr_html_()
    assert "<b>evil" not in html and "&lt;b&gt;evil&lt;|b&gt;" in html
    md = m._repr_markdown_()
    assert r"\$x\$" in md and r"\_a\_" in md and r"\<b\>evil\<\|b\>" in md and "<b>" not in md
    assert m.breakdown().name == name


def test_derive_renders_through_the_documents():
    text_ = model("bert-base").derive(format="md")
    assert f"**{BERT_BASE:,}**" in text_ and text_.startswith("# ")
