"""The notebook-friendly Python API: model() from names, paths and dicts; displays."""

import json
from pathlib import Path

import pytest
import sympy as sp
from IPython.lib.pretty import pretty

import symparams
from symparams import SymparamsError, model
from symparams.symbols import A, H, L, P, S, V, r

# bert-base by hand: 30522·768 + 512·768 + 2·768 + 2·768 (embeddings),
# 12 · (4·(768² + 768) + 2·2·768 + 768·3072 + 3072 + 3072·768 + 768) (encoder), 768² + 768 (pooler)
EMB = (30522 + 512 + 2) * 768 + 2 * 768
ENC = 12 * (4 * (768 * 768 + 768) + 4 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 768)
POOL = 768 * 768 + 768
BERT_BASE = EMB + ENC + POOL


def write_config(folder: Path, **data) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps({"model_type": "bert", **data}))
    return path


def test_model_reads_a_config_path_a_folder_and_a_dict(tmp_path):
    path = write_config(tmp_path / "tiny", hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                        intermediate_size=1024)
    by_hand = ((30522 + 512 + 2) * 256 + 2 * 256 + 4 * (4 * (256 * 256 + 256) + 4 * 256 + 2 * 256 * 1024 + 1024 + 256)
               + 256 * 256 + 256)
    assert model(str(path)).count == by_hand
    assert model(path).count == by_hand  # a pathlib.Path
    assert model(str(path.parent)).count == by_hand  # the folder holding config.json
    assert model(json.loads(path.read_text())).count == by_hand
    assert model(str(path)).name == "tiny"


def test_model_from_a_config_takes_keyword_overrides(tmp_path):
    path = write_config(tmp_path / "m")  # every key missing: BertConfig's defaults, i.e. bert-base
    assert model(str(path)).count == BERT_BASE
    assert model(str(path), L=24).count == BERT_BASE + 12 * (ENC // 12)
    assert model(str(path), pooler=False).count == BERT_BASE - POOL


def test_model_from_a_missing_config_is_one_line(tmp_path):
    with pytest.raises(SymparamsError, match="no such file"):
        model(str(tmp_path / "nothing" / "config.json"))
    with pytest.raises(SymparamsError, match="takes a name, a config.json path or a dict"):
        model(42)
    with pytest.raises(SymparamsError, match="unknown model 'bert-bsae'"):
        model("bert-bsae")


def test_subs_returns_a_new_model_and_leaves_the_old_one():
    m = model("bert-base")
    big = m.subs(L=24, H=1024, A=16)
    assert m.count == BERT_BASE
    assert big.count == 24 * (12 * 1024**2 + 13 * 1024) + (30522 + 512 + 2 + 2) * 1024 + 1024**2 + 1024
    assert big is not m and m.values[H] == 768


def test_count_names_the_free_symbols():
    m = model("bert", V=30522, P=512, S=2, r=4)
    with pytest.raises(SymparamsError, match="no value for H, L, A"):
        m.count
    assert sp.expand(m.total - (H**2 * (12 * L + 1) + H * (13 * L + 31039))) == 0


def test_breakdown_is_a_table_that_iterates_as_rows():
    b = model("bert-base").breakdown()
    rows = list(b)
    assert rows == [("embeddings", EMB, sp.Rational(EMB, BERT_BASE)), ("encoder", ENC, sp.Rational(ENC, BERT_BASE)),
                    ("pooler", POOL, sp.Rational(POOL, BERT_BASE))]
    assert sum(s for _, _, s in b) == 1
    assert len(b) == 3 and b[1][0] == "encoder" and b.total == BERT_BASE
    component, count, share = b[0]
    assert (component, count) == ("embeddings", EMB)


def test_symbolic_breakdown_has_formulas_and_no_shares():
    b = model("bert").breakdown()
    assert [s for _, _, s in b] == [None, None, None]
    assert sp.expand(b[0][1] - (H * (V + P + S) + 2 * H)) == 0
    assert "| embeddings | $" in b._repr_markdown_()
    assert "<math" in b._repr_html_()


def test_model_latex_shows_closed_form_and_count():
    text = model("bert-base")._repr_latex_()
    assert text.startswith("$") and text.endswith("$")
    assert sp.latex(model("bert").closed_form) in text
    assert text.endswith("= 109{,}482{,}240$")
    assert f"{BERT_BASE:,}".replace(",", "{,}") in text


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
    text = pretty(model("bert-base"))
    assert text.splitlines()[0].startswith("bert-base (BERT): V=30522")
    assert f"{BERT_BASE:,}" in text and "21.77%" in text
    assert pretty(model("bert-base").breakdown()).splitlines()[-1].split() == ["total", f"{BERT_BASE:,}", "100.00%"]
    proof = pretty(model("bert-base").prove())
    assert "does not depend" in proof and "dN/dA = 0" in proof


def test_proof_displays_state_the_derivative_and_the_side_condition():
    p = model("bert-base").prove()
    assert r"\frac{\partial N}{\partial A} &= 0" in p._repr_latex_()
    assert r"A \mid H" in p._repr_latex_()
    html = p._repr_html_()
    assert "<mtable>" in html and "&#x2202;" in html and "unevaluatedexpr" not in html
    assert "given: A divides H" in p._repr_markdown_()


def test_user_text_is_escaped_in_every_display(tmp_path):
    name = "<b>evil<|b> $x$ 100% _a_ #1 {}"
    m = model(str(write_config(tmp_path / name)))
    assert m.name == name
    html = m._repr_html_()
    assert "<b>evil" not in html and "&lt;b&gt;evil&lt;|b&gt;" in html
    md = m._repr_markdown_()
    assert r"\$x\$" in md and r"\_a\_" in md and "&lt;b&gt;" in md
    b = m.breakdown()
    assert b.name == name


def test_derive_renders_through_the_documents():
    text = model("bert-base").derive(format="md")
    assert f"{BERT_BASE:,}" in text


def test_public_api_names():
    assert set(symparams.__all__) == {"Model", "SymparamsError", "model", "solve", "sweep"}
    assert symparams.solve(model("bert-base", L=24, A=16), 10**9, "H").value == 1808
