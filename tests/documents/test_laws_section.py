"""The documents' section that sets the published FLOPs laws beside the exact count, in both languages.

Its figures are read off the rendered Markdown and checked against each source's own arithmetic, transcribed in
``tests/analysis/test_laws.py`` (Megatron-LM's ``num_floating_point_operations``, MaxText's
``calculate_tflops_training_per_device``, Narayanan et al.'s eq. (3), Chinchilla's appendix F), run on the
model's published config, and each part's difference against what that source counts for the part: a law
value, a part or a difference that is wrong, or a law set beside a model it does not describe, fails.
"""

import re
from fractions import Fraction

import pytest

from symparams import model
from symparams.core.formatting import thousands
from tests.analysis.test_laws import (chinchilla_forward_flops, maxtext_training_flops,
                                      megatron_num_floating_point_operations, narayanan_flops_per_iteration)
from tests.documents.test_head_count_section import section
from tests.reference.documents import document

# GPT-2 small as Radford et al. publish it; its document works at s = P = 1,024
S, H, L, A, V = 1024, 768, 12, 12, 50257
GPT2 = {"hidden": H, "heads": A, "groups": A, "layers": L, "ffn": 4 * H, "vocab": V, "swiglu": False,
        "experts": None, "topk": None, "kv_channels": H // A}


@pytest.fixture(scope="session")
def gpt2_docs():
    return {lang: section(document("gpt2", "md", lang), 8) for lang in ("en", "zh")}


def law_block(text: str, number: int) -> str:
    """Subsection 8.``number`` of the section."""
    return re.search(rf"^### 8\.{number} .*?(?=^### |\Z)", text, re.S | re.M).group(0)


def per_token(block: str) -> tuple[int, int, int]:
    """(law, exact, exact − law) per token, as the block's sentence states them, in either language."""
    line = re.search(r"^(Per token|每个词元).*$", block, re.M).group(0)
    law, exact, difference = (int(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*", line))
    return law, exact, difference


def row(block: str, part: str) -> int:
    """The FLOPs per token the table gives the part."""
    found = re.search(rf"^\| {re.escape(part)} \| .*? \| (-?[\d,]+) \|", block, re.M)
    assert found, (part, block)
    return int(found.group(1).replace(",", ""))


def exact_training_per_token() -> int:
    """GPT-2's exact training FLOPs per token with its LM head: every product 2·in·out a token, forward and twice
    backward; attention's two s × s products per head over the full square."""
    weights = L * (H * 3 * H + H * H + 2 * H * 4 * H) + H * V
    return 3 * (2 * weights + L * 2 * 2 * S * H)


def test_every_law_value_is_its_sources_arithmetic(gpt2_docs):
    en = gpt2_docs["en"]
    exact = exact_training_per_token()
    expected = {2: megatron_num_floating_point_operations(GPT2, 1, S) / S,
                5: Fraction(maxtext_training_flops(GPT2, 1, S), S),
                1: narayanan_flops_per_iteration(1, S, L, H, V) / S,
                6: Fraction(chinchilla_forward_flops(S, V, H, A, H // A, 4 * H, L), S)}
    for number, law in expected.items():
        stated, stated_exact, difference = per_token(law_block(en, number))
        assert stated == law and stated_exact - stated == difference, number
    assert per_token(law_block(en, 2))[1] == exact


def test_megatron_differs_by_the_causal_half_of_the_attention_square(gpt2_docs):
    block = law_block(gpt2_docs["en"], 2)
    # the counter multiplies all s² scores of QKᵀ and the weighted sum (3 × 2·2·s·H a token a layer);
    # num_floating_point_operations counts query_projection_size · seq_length/2 · 2 of them
    assert row(block, "attention scores") == 3 * 4 * S * H * L - 6 * (H * S // 2 * 2) * L
    assert "seq_length / 2" in block and "| logits |" not in block


def test_narayanan_agrees_with_gpt2_recomputing_the_layers_and_not_the_logits(gpt2_docs):
    # GPT-2 is eq. (3)'s model (h-wide heads, a 4h MLP, tied logits); both recompute the layers' forward
    # pass (4 × 24·s·h² + 4·s²·h a layer) and count the logits 3 × 2·s·h·V
    layers = 2 * L * (H * 3 * H + H * H + 2 * H * 4 * H) + L * 2 * 2 * S * H  # forward, per token
    block = law_block(gpt2_docs["en"], 1)
    assert per_token(block) == (4 * layers + 3 * 2 * H * V, 4 * layers + 3 * 2 * H * V, 0)
    assert per_token(block)[0] == narayanan_flops_per_iteration(1, S, L, H, V) / S
    assert "| logits |" not in block and "| logits |" not in law_block(gpt2_docs["zh"], 1)


def test_nanogpt_counts_biases_and_norms_as_products(gpt2_docs):
    block = law_block(gpt2_docs["en"], 3)
    assert row(block, "attention projections") == -6 * L * (3 * H + H)  # c_attn's and c_proj's biases
    assert row(block, "feed-forward") == -6 * L * (4 * H + H)
    assert row(block, "norms") == -6 * 2 * H * (2 * L + 1)
    assert "a bias add multiplies nothing" in block


def test_chinchilla_counts_the_lookup_and_the_softmax(gpt2_docs):
    forward, training = law_block(gpt2_docs["en"], 6), law_block(gpt2_docs["en"], 7)
    assert row(forward, "embeddings") == -2 * V * H and row(forward, "softmax") == -3 * A * S * L
    assert row(training, "embeddings") == -3 * 2 * V * H and row(training, "softmax") == -3 * 3 * A * S * L


def test_maxtext_agrees_and_says_so_in_both_languages(gpt2_docs):
    assert "agree, part by part" in law_block(gpt2_docs["en"], 5)
    assert "逐部分一致" in law_block(gpt2_docs["zh"], 5)


def test_chinese_section_holds_the_same_figures(gpt2_docs):
    en, zh = gpt2_docs["en"], gpt2_docs["zh"]
    assert "已发表的 FLOPs 定律与精确计数并列" in zh
    for number in range(1, 8):
        assert per_token(law_block(zh, number)) == per_token(law_block(en, number))
    assert "查表不做乘法" in law_block(zh, 6) and "| 嵌入 |" in law_block(zh, 6)


def test_a_base_model_is_set_beside_its_lm_head_and_the_command_says_so(gpt2_docs):
    assert "with its language-model head" in gpt2_docs["en"]
    assert "`symparams flops gpt2 --head causal-lm --seq 1024`" in gpt2_docs["en"]


def test_llama_differences_name_grouped_query_attention_and_the_untied_table():
    text = section(document("llama-3-8b", "md", "en"), 8)
    nanogpt, chinchilla = law_block(text, 3), law_block(text, 6)
    assert row(nanogpt, "embeddings") == -6 * 128256 * 4096  # 6N counts the untied token table
    # Appendix F's keys and values as wide as the queries: 8 key/value heads of 32, 128 wide, in 4 projections
    assert row(chinchilla, "attention projections") == -2 * 2 * 4096 * (32 - 8) * 128 * 32
    assert row(chinchilla, "feed-forward") == 2 * 4096 * 14336 * 32  # the gate's third matrix


def test_laws_that_do_not_describe_the_model_are_refused_with_their_reason():
    en = section(document("mixtral-8x7b", "md", "en"), 8)
    zh = section(document("mixtral-8x7b", "md", "zh"), 8)
    assert "- Narayanan et al. 2021, eq. (3): a mixture of experts (the source's formula is for dense models)." in en
    assert "混合专家模型（来源的公式针对稠密模型）" in zh
    megatron = law_block(en, 1)  # the first law set beside it
    assert row(megatron, "feed-forward") == 6 * 4096 * 32 * 8  # the router Megatron-LM leaves out
    encoder = section(document("bert-base", "md", "en"), 8)
    assert "No law here describes bert-base: not a decoder-only causal language model" in encoder
    assert "### 8.1" not in encoder and "with its language-model head" not in encoder


def test_the_figures_are_the_flops_commands():
    f = model("gpt2", head="causal-lm").flops(S)
    text = section(document("gpt2", "md", "en"), 8)
    for number, law in enumerate((law for law in f.laws if "source" in law), 1):
        assert thousands(law["law_value"]) in law_block(text, number)


def test_the_live_page_shows_the_same_laws_at_the_documents_values():
    page = document("gpt2", "html", "zh")
    start = page.index('<section id="laws">')
    laws = page[start:page.index("</section>", start)]
    megatron = megatron_num_floating_point_operations(GPT2, 1, S) / S
    assert thousands(int(megatron)) in laws and thousands(3 * 4 * S * H * L - 6 * H * S * L) in laws
    assert "不随上面的取值变化" in laws and "<math" in laws  # static figures, formulas as MathML


@pytest.mark.parametrize("lang,below", [("en", "Each law below"), ("zh", "下面每条定律")])
def test_the_section_speaks_of_the_laws_below_only_where_some_follow(lang, below):
    # no law describes DeepSeek-V3 (shared experts); GPT-2 has its section of laws
    deepseek, gpt2 = (section(document(name, "md", lang), 8) for name in ("deepseek-v3", "gpt2"))
    assert "### 8.1 " not in deepseek and below not in deepseek
    assert "### 8.1 " in gpt2 and below in gpt2


def test_the_live_page_speaks_of_the_laws_below_only_where_some_follow():
    deepseek, gpt2 = (document(name, "html", "en") for name in ("deepseek-v3", "gpt2"))
    assert "compare throughput with them." in deepseek and "Each law below" not in deepseek
    assert "Each law below" in gpt2


@pytest.mark.parametrize("lang,same,refused", [("en", "prints the same laws", "lists these laws, each with the reason"),
                                               ("zh", "打印同样的定律", "列出这些定律及各自不适用的原因")])
def test_the_command_line_is_said_to_print_the_laws_only_where_it_applies_some(lang, same, refused):
    # the flops command sets no law of the section beside BERT-base or DeepSeek-V3: it lists them as refused
    for name in ("bert-base", "deepseek-v3"):
        f = model(name).flops(2048)
        assert not [law for law in f.laws if "source" in law] and f.laws_refused
        text = section(document(name, "md", lang), 8)
        assert refused in text and "`laws_refused`" in text and same not in text
    gpt2 = section(document("gpt2", "md", lang), 8)
    assert same in gpt2 and refused not in gpt2


def test_a_difference_is_written_as_the_sum_of_its_tables_rows():
    """Each law's exact − law is printed as its table's rows added in order (Llama's Chinchilla difference was
    the expanded 2FHL − 3ALs − 4H²L − 2HV + 4GH²L/A, whose terms no row shows); the rows' values are checked
    against the sources above, and here their sum against the figure printed for the whole difference."""
    written = 0
    for name in ("gpt2", "llama-3-8b", "mixtral-8x7b", "qwen3-30b-a3b"):
        text = section(document(name, "md", "en"), 8)
        for law in text.split("\n### ")[1:]:
            difference = re.search(r"F_\{\\text\{exact\}\} - F_\{\\text\{law\}\} = (.+)\$\$", law)[1]
            rows = re.findall(r"^\| [^|]+ \| \$(.+?)\$ \| (-?[\d,]+) \|", law, flags=re.M)
            per_token = re.search(r"exact − law = (-?[\d,]+)\.", law)[1]
            assert sum(int(v.replace(",", "")) for _, v in rows) == int(per_token.replace(",", "")), (name, law)
            if len(rows) > 1:
                assert difference == " + ".join(r for r, _ in rows).replace("+ - ", "- "), (name, law[:40])
                written += 1
    assert written >= 8
