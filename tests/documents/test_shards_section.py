"""The documents' section on which activations tensor parallelism divides, in both languages.

Its numbers are checked against the ``memory`` command's and against Korthikanti et al.'s Table 2
(arXiv:2205.05198) evaluated by hand for the model's published sizes.
"""

import json
import subprocess
import sys

import pytest

from symparams import model
from symparams.core.formatting import thousands
from symparams.documents.render import render
from tests.documents.test_head_count_section import section
from tests.reference.documents import document


def memory_cli(*args) -> dict:
    proc = subprocess.run([sys.executable, "-m", "symparams", "memory", *args, "--json"], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout)


def gpt2_table_2(t: int, sequence_parallel: bool) -> int:
    """GPT-2 small (Radford et al.: L = 12, h = 768, a = 12) at s = 1024, b = 1, by Table 2's rows."""
    s, b, h, a, layers = 1024, 1, 768, 12, 12
    if sequence_parallel:
        return layers * (34 * s * b * h + 5 * a * s * s * b) // t
    return layers * (s * b * h * 10 + s * b * h * 24 // t + 5 * a * s * s * b // t)


@pytest.fixture(scope="session")
def gpt2_docs():
    m = model("gpt2")
    return {lang: section(render(m, format="md", lang=lang), 7) for lang in ("en", "zh")}


def test_gpt2_section_holds_table_2_figures_in_both_languages(gpt2_docs):
    one_gpu = gpt2_table_2(1, False)
    rows = [thousands(one_gpu), thousands(gpt2_table_2(4, False)), thousands(gpt2_table_2(4, True))]
    whole = 12 * 10 * 1024 * 768
    for lang, text in gpt2_docs.items():
        assert all(row in text for row in rows), lang
        assert thousands(whole) in text
    assert "Which activations tensor parallelism divides" in gpt2_docs["en"]
    assert "张量并行切分哪些激活值" in gpt2_docs["zh"]
    # GPT-2 is the GPT layer the forms describe: no difference is named
    assert "Its layers have the widths and parts these forms assume" in gpt2_docs["en"]
    assert "它的层具有这些公式假定的宽度和组成" in gpt2_docs["zh"]


def test_gpt2_section_figures_are_the_memory_commands(gpt2_docs):
    plain = memory_cli("gpt2", "--seq", "1024")
    tensor = memory_cli("gpt2", "--seq", "1024", "--tensor-parallel", "4")
    both = memory_cli("gpt2", "--seq", "1024", "--tensor-parallel", "4", "--sequence-parallel")
    figures = [plain["activations"], tensor["per_rank"]["activations"], both["per_rank"]["activations"]]
    assert figures == [gpt2_table_2(1, False), gpt2_table_2(4, False), gpt2_table_2(4, True)]
    for text in gpt2_docs.values():
        assert all(thousands(n) in text for n in figures)


def test_section_shows_table_2_forms(gpt2_docs):
    text = gpt2_docs["en"]
    assert "$$M_{\\text{layer}} = 5 a b s^{2} + 34 b h s$$" in text
    assert "b h s \\left(10 + \\frac{24}{t}\\right)" in text
    assert "\\frac{5 a b s^{2}}{t} + \\frac{34 b h s}{t}" in text


def test_llama_section_says_what_the_forms_do_not_cover():
    """Llama-3-8B: 8 key/value heads of 32, a SwiGLU MLP of 14,336 (not 4 × 4,096)."""
    en = section(document("llama-3-8b", "md", "en"), 7)
    zh = section(document("llama-3-8b", "md", "zh"), 7)
    assert "fewer key/value heads than query heads" in en and "its MLP is gated" in en and "not $4H$ wide" in en
    assert "键值头共享" in zh and "门控" in zh and "不是 $4H$" in zh
    assert "have the widths and parts these forms assume" not in en
    s, h, a, layers, t = 2048, 4096, 32, 32, 8  # Table 2, tensor parallel, for its published sizes
    assert thousands(layers * (s * h * 10 + s * h * 24 // t + 5 * a * s * s // t)) in en


def test_t5_section_gives_the_refusal_and_one_gpu():
    """T5's relative attention bias is a module the layout does not split: the section says so."""
    en = section(document("t5-base", "md", "en"), 7)
    proc = subprocess.run([sys.executable, "-m", "symparams", "memory", "t5-base", "--seq", "2048",
                           "--tensor-parallel", "8"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.removeprefix("symparams: error: ").strip() in en
    assert "cross-attention layers, which the forms leave out" in en
    assert "tensor parallel, $t$" not in en


def test_an_inferred_type_says_its_layers_are_not_read():
    """OLMo-1B (gated MLP 8,192 wide for H = 2,048, norms without parameters): its inferred tree names none of
    that, so the section claims neither that its layers fit the forms nor how they differ."""
    from symparams.families.inferred import model as inferred_model
    from tests.documents.test_inferred_documents import OLMO

    en = section(render(inferred_model(OLMO, source="OLMo-1B-hf"), format="md", lang="en"), 7)
    assert "does not read the layers of a type inferred from transformers" in en
    assert "have the widths and parts" not in en and "differ from the GPT layer these forms describe" not in en


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang,exactly", [("en", "not every one of its layers runs exactly two norms"),
                                          ("zh", "并非每层都恰好有两个归一化")])
def test_a_layer_of_four_norms_is_said_not_to_run_exactly_two(lang, exactly):
    """DeepseekV3DecoderLayer runs four RMSNorms (two around its sub-layers, two on MLA's latents): "do not run two
    norms each" would read as fewer than two."""
    from tests.documents.test_statements import TINY_DEEPSEEK
    from tests.reference.hf import build
    from tests.reference.moe import deepseek_config

    built = build("DeepseekV3Model", deepseek_config(model("deepseek-v3", **TINY_DEEPSEEK)))
    assert [sum(type(m).__name__ == "DeepseekV3RMSNorm" for m in layer.modules()) for layer in built.layers] == [4, 4]
    assert exactly in section(document("deepseek-v3", "md", lang), 7)
