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


def test_proof_displays_state_the_derivative_the_side_condition_and_the_witness():
    p = model("bert-base").prove()
    latex = p._repr_latex_()
    assert r"\frac{\partial N}{\partial A} &= 0" in latex
    assert r"\text{given } A \mid H" in latex
    html = p._repr_html_()
    assert "<mtable>" in html and "&#x2202;" in html and "unevaluatedexpr" not in html
    md = p._repr_markdown_()
    assert "- side condition: A divides H: H/A is the head dimension, a whole number" in md
    assert f"- witness: A in {{{DIVISORS_OF_768}}} all give {BERT_BASE:,}" in md
    for shown in (html, md):
        assert "given: " not in shown and "admissible head counts give" not in shown  # the old wording


def test_proof_equations_are_the_steps_in_latex_and_mathml():
    per_head, simplified, derivative = proof_equations(model("bert-base").prove())
    assert per_head[0][0] == r"A \left(H \frac{H}{A} + \frac{H}{A}\right)" and per_head[1][0] == "H^{2} + H"
    assert per_head[0][1].startswith("<mrow><mi>A</mi>") and "<mfrac><mi>H</mi><mi>A</mi></mfrac>" in per_head[0][1]
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
