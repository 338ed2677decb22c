"""The documents of an inferred model (no hand-written family): module paths, shapes, the closed form, the proof.

OLMo-1B's inferred formula holds a whole-number division, the head width
⌊H/A⌋, and its tree declares no attention: the documents must say "closed
form" (not "polynomial"), prove under the premise A | H (no derivative of a
floor), show no FLOPs section and no article's story, walk the modules in
the order transformers registers them, write shapes [in, out], suggest only
commands that work, and the live page must divide as transformers does.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from symparams.documents.render import render
from symparams.families.inferred import model as inferred_model
from tests.documents.test_html_page import cli, open_in_chromium
from tests.reference import ROOT

OLMO_PATH = ROOT / "tests" / "fixtures" / "allenai" / "OLMo-1B-hf.json"
OLMO = json.loads(OLMO_PATH.read_text())


@pytest.fixture(scope="session")
def olmo():
    return inferred_model(OLMO, source="OLMo-1B-hf")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_markdown_walks_the_module_paths_and_adds_up(olmo, lang):
    text = render(olmo, format="md", lang=lang).replace("{,}", ",")  # math writes 1{,}024
    assert "`layers.*`" in text and "`embed_tokens`" in text  # a stack is named by its list, not by "*"
    assert "`*`" not in text
    # hand arithmetic: embeddings V·H, one layer 3FH + 4H² (GQA off: G = A), L = 16 layers
    embeddings, layer = 50304 * 2048, 3 * 8192 * 2048 + 4 * 2048 * 2048
    assert f"{embeddings:,}" in text and f"{layer:,}" in text and f"{embeddings + 16 * layer:,}" in text
    assert embeddings + 16 * layer == olmo.count == 1_176_764_416


def test_the_english_markdown_says_only_what_holds_for_a_floor(olmo):
    text = render(olmo, format="md", lang="en")
    assert "closed form in the sizes" in text and "polynomial" not in text
    # the proof reads the formula under A | H: ⌊H/A⌋ = H/A, so ∂N/∂A is evaluated (G = 16 given, held)
    heads = _section(text, 5)
    assert "Derivative" not in heads and "lfloor" not in heads
    assert r"$$\frac{\partial N}{\partial A} = - \frac{2 G H^{2} L}{A^{2}}$$" in heads
    assert r"- $A \mid H$" in heads and r"- $G \mid A$" in heads
    assert "bert-parameter-count" not in text  # no article tells this model's story
    # the costs traced from transformers' builds, for one sequence of its P = 2,048 positions (the base model, no
    # head): per layer 4H² + 3FH weights on s positions and two s × s products of A heads of 128 (hand arithmetic)
    assert "**4,947,802,324,992** FLOPs" in text
    assert 2 * 2048 * 16 * (4 * 2048**2 + 3 * 8192 * 2048) + 16 * 2 * (2 * 16 * 2048**2 * 128) == 4_947_802_324_992
    # the counterexample: A = 32 with G = 16 kept, the K and V projections halve (hand arithmetic)
    assert "1,109,655,552" in text
    assert 1_176_764_416 - 16 * 2 * 2048 * 1024 == 1_109_655_552


def test_the_chinese_markdown_says_closed_form(olmo):
    text = render(olmo, format="md", lang="zh")
    assert "闭式公式" in text and "多项式" not in text and "《Bert系列之模型参数计算》" not in text


@pytest.mark.browser
def test_the_live_page_divides_as_transformers(tmp_path):
    path = tmp_path / "olmo.html"
    cli("derive", "--config", str(OLMO_PATH), "--format", "html", "-o", str(path))
    dom = open_in_chromium(path, "H=3072&A=24&G=8")
    expected = cli("count", "--config", str(OLMO_PATH), "--set", "H=3072", "--set", "A=24", "--set", "G=8",
                   "--json")
    # head width 3072 // 24 = 128: embeddings V·H, per layer 3FH + 2·(A + G)·128·H
    by_hand = 50304 * 3072 + 16 * (3 * 8192 * 3072 + 2 * (24 + 8) * 128 * 3072)
    assert expected["total"] == by_hand
    assert dom.outputs["total"] == f"{by_hand:,}" == dom.outputs["live-total"]
    assert dom.warnings == ""


def _section(text: str, number: int) -> str:
    return text.split(f"\n## {number}. ")[1].split(f"\n## {number + 1}. ")[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_walk_is_the_order_transformers_computes_and_shapes_are_in_out(olmo, lang):
    text = render(olmo, format="md", lang=lang)
    computation = _section(text, 2)
    # OlmoAttention registers q, k, v, o before the MLP's gate, up and down projections
    order = [computation.index(f"`{name}`") for name in ("q_proj", "k_proj", "o_proj", "gate_proj", "down_proj")]
    assert order == sorted(order)
    # q_proj maps H = 2048 features to A·⌊H/A⌋ = 2048, k_proj to G·⌊H/A⌋; down_proj maps F = 8192 to H = 2048:
    # [in, out], where transformers stores down_proj.weight as [2048, 8192]
    assert r"$2 \times [H, G \left\lfloor{\frac{H}{A}}\right\rfloor] = 2 \times [2048, 2048]$" in computation
    assert r"$[F, H] = [8192, 2048]$" in computation
    # each count is written as the product of its shape, in the shape's order: V·H beside [V, H] (it was H·V)
    assert r"$$V \cdot H = 50304 \times 2048 = 103{,}022{,}592$$" in computation
    assert r"$$F \cdot H = 8192 \times 2048 = 16{,}777{,}216$$" in computation
    # a module's name is code wherever it titles a step, "`mlp` in one …:" too (not an escaped \`mlp\`)
    assert "\\`" not in computation and computation.count("`mlp`") >= 2


def test_the_proof_text_is_true_for_olmo_without_key_value_heads(tmp_path):
    """num_key_value_heads left out: transformers sets G = A, and the count is the same at every head count."""
    config = {k: v for k, v in OLMO.items() if k != "num_key_value_heads"}
    m = inferred_model(config, source="OLMo-1B-hf")
    for lang, premise in (("en", "transformers sets $G$ = $A$"), ("zh", "transformers 便取 $G$ = $A$")):
        heads = _section(render(m, format="md", lang=lang), 5)
        assert premise in heads and "∎" in heads and "| 16 | 1,176,764,416 |" in heads
    # every head count in the witness table is one transformers builds to the same total (checked against real
    # builds in tests/analysis/test_proof_inferred.py); here: 16 heads is the config's own
    assert m.count == 1_176_764_416


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_documents_suggest_only_commands_that_work(olmo, lang, tmp_path):
    text = render(olmo, format="md", lang=lang)
    commands = re.findall(r"`(symparams [^`]+)`", text)
    assert commands, text[-400:]
    assert not any("OLMo-1B-hf" in c for c in commands)  # a config's model is named by --config PATH
    assert any(c.startswith("symparams flops") for c in commands)  # OLMo's costs are in the data: suggested
    config = tmp_path / "config.json"
    config.write_text(json.dumps(OLMO))
    for command in commands:  # PATH is the model's config.json, KEY=VALUE any symbol's value
        args = shlex.split(command.replace("PATH", str(config)).replace("KEY=VALUE", "H=4096"))[1:]
        cli(*args, *(["-o", str(tmp_path / "out.md")] if args[0] == "derive" else []))
        assert args[0] != "derive" or "--format" in args


@pytest.mark.parametrize("fmt", ["md", "tex"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_module_without_a_title_is_named_once_and_the_usual_ones_have_their_titles(olmo, lang, fmt):
    # an untitled module's title is its name: "### 2.2 `layers.*` (`layers.*`)" gave it twice
    text = render(olmo, format=fmt, lang=lang)
    code = r"`[^`]+`" if fmt == "md" else r"\\texttt\{[^}]+\}"
    twice = re.findall(rf"({code})\s*[(（]\1", text)
    assert twice == [], twice[:3]
    o_proj, gate_up = (("Output projection", "Gate and up projections") if lang == "en"
                       else ("输出投影", "门控投影与升维投影"))
    assert o_proj in text and gate_up in text


def test_the_chinese_document_says_config_field_in_chinese(olmo):
    text = render(olmo, format="md", lang="zh")
    assert "推断公式读取的、决定某些部分有无的 config.json 字段：" in text and "config field" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_part_of_a_stack_of_several_kinds_shows_its_copies(lang):
    import transformers

    config = {**transformers.AutoConfig.for_model("glm4_moe").to_dict(), "model_type": "glm4_moe"}
    text = render(inferred_model(config, source="glm4_moe"), format="md", lang=lang).replace("{,}", ",")
    norms = text[text.index("`input_layernorm`" + (", " if lang == "en" else "、") + "`post_attention_layernorm`"):][:600]
    # the two norms of each of the 46 layers (hand arithmetic): 2 × 4,096 a layer, 376,832 in all, the sum the
    # layers' total adds
    assert ("$L = 46$ copies:" if lang == "en" else "共 $L = 46$ 份：") in norms
    assert r"46 \times 8,192 = 376,832" in norms and 46 * 2 * 4096 == 376_832


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_a_part_as_many_times_as_a_config_list_says_gives_the_number_once(lang, fmt):
    import transformers

    # Qwen3-Next's default layer_types: every fourth of its 48 layers full attention, 12, the rest linear, 36
    config = transformers.AutoConfig.for_model("qwen3_next")
    assert config.layer_types.count("full_attention") == 12 and config.layer_types.count("linear_attention") == 36
    text = render(inferred_model({**config.to_dict(), "model_type": "qwen3_next"}, source="qwen3_next"),
                  format=fmt, lang=lang)
    assert ("36 copies:" if lang == "en" else "共 36 份：") in text and "12 = 12" not in text and "36 = 36" not in text
    assert r"\times 12" in text and r"\times 36" in text  # the diagram's and the summary's


def test_a_power_of_a_whole_division_is_written():
    """RecurrentGemma's count holds A·⌊H/A⌋²: its document was a traceback where LaTeX wrote the power."""
    import transformers

    config = {**transformers.AutoConfig.for_model("recurrent_gemma").to_dict(), "model_type": "recurrent_gemma"}
    m = inferred_model(config, source="recurrent_gemma")
    text = render(m, format="md", lang="en")
    assert r"\right\rfloor}^{2}" in text and f"**{m.count:,}**" in text
