"""The documents walk a model as its article does: BERT's layer as multi-head attention, Add & Norm,
feed-forward, Add & Norm, with named subtotals and a running total."""

from __future__ import annotations

import re

import pytest

from symparams import model
from symparams.documents.derivation import derive, presented
from tests.reference.variants import one_preset_per_variant
from tests.reference.documents import document

# BERT-base as Devlin et al. give it: V = 30522, P = 512, S = 2, H = 768, L = 12, intermediate 3072
H, INTER = 768, 3072
ATTENTION = 4 * (H * H + H)                     # Q, K, V and W^O, each a weight and a bias
FEED_FORWARD = (H * INTER + INTER) + (INTER * H + H)
LAYER = ATTENTION + 2 * H + FEED_FORWARD + 2 * H


@pytest.mark.crosscheck
def test_the_article_subtotals_are_what_transformers_builds():
    import transformers

    from tests.reference.hf import build

    layer = build("BertModel", transformers.BertConfig()).encoder.layer[0]  # bert-base's sizes

    def size(*modules):
        return sum(p.numel() for m in modules for p in m.parameters())

    attention = size(layer.attention.self, layer.attention.output.dense)  # its LayerNorm is Add & Norm's
    feed_forward = size(layer.intermediate, layer.output.dense)
    assert (attention, feed_forward, size(layer)) == (ATTENTION, FEED_FORWARD, LAYER)
    assert (ATTENTION, FEED_FORWARD, LAYER) == (2_362_368, 4_722_432, 7_087_872)  # the article's figures


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bert_walkthrough_shows_the_article_subtotals_before_the_errata(lang):
    text = document("bert-base", "md", lang)
    walk = text[text.index("## 2."):text.index("## 3.")]
    for figure in (ATTENTION, FEED_FORWARD, LAYER):
        assert f"{figure:,}".replace(",", "{,}") in walk
    titles = {"en": ["Multi-head attention", "Add & Norm", "Feed-forward network", "Add & Norm"],
              "zh": ["多头注意力", "Add & Norm", "前馈网络", "Add & Norm"]}[lang]
    headings = [line for line in walk.splitlines() if line.startswith("#### ")]
    assert [next(t for t in titles if t in h) for h in headings[-4:]] == titles


def test_bert_layer_steps_name_the_transformers_modules():
    layer = derive(model("bert-base")).sections[1]
    assert [step.names for step in layer.children] == [
        ("attention.self", "attention.output.dense"), ("attention.output.LayerNorm",),
        ("intermediate.dense", "output.dense"), ("output.LayerNorm",)]
    assert [step.count for step in layer.children] == [ATTENTION, 2 * H, FEED_FORWARD, 2 * H]


@pytest.mark.parametrize("name", one_preset_per_variant())
def test_the_walk_holds_every_module_once_and_runs_up_to_the_total(name):
    m = model(name)
    leaves = sorted(id(b) for _, b, _ in m.tree.walk() if b.is_leaf)
    assert sorted(id(b) for _, b, _ in presented(m.tree).walk() if b.is_leaf) == leaves
    sections = derive(m).sections
    assert sections[-1].running == m.count
    assert [s.running for s in sections] == [sum(s.contribution for s in sections[:i + 1])
                                             for i in range(len(sections))]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_parts_carry_no_share_of_their_own(lang):
    """Shares belong to the summary table; the walk states one per component."""
    text = document("llama-3-8b", "md", lang)
    walk = text[text.index("## 2."):text.index("## 3.")]
    share = {"en": "of the whole model", "zh": "占总参数的"}[lang]
    assert walk.count(share) == len(derive(model("llama-3-8b")).sections)


_SUBTOTAL = {"en": re.compile(r"^(.*)(?: in all| in one [^:]+| \(one copy\)):$"),
             "zh": re.compile(r"^(.*)(?:小计|合计)：$")}


def subtotals(text: str, lang: str) -> list[dict[str, set[str]]]:
    """Per section (``###``) of a Markdown document: each subtotal's label → the sums it introduces."""
    out = []
    for section in text.split("\n### ")[1:]:
        lines, sums = section.splitlines(), {}
        for i, line in enumerate(lines):
            if _SUBTOTAL[lang].match(line):  # the display that follows ends with "= the sum"
                display = re.search(r"\$\$(.*?)\$\$", "\n".join(lines[i + 1:]), flags=re.S).group(1)
                sums.setdefault(line, set()).add(re.findall(r"= ([\d{},]+)", display)[-1])
        out.append(sums)
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["t5-small", "flan-t5-small", "bart-base", "transformer-base", "deepseek-v2-lite"])
def test_a_label_names_one_subtotal_within_a_section(name, lang):
    assert any(subtotals(document(name, "md", lang), lang)), "no subtotal label read: the pattern is stale"
    for sums in subtotals(document(name, "md", lang), lang):
        assert {label: found for label, found in sums.items() if len(found) > 1} == {}


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_t5_cross_attention_is_one_level_with_its_norm(lang):
    # T5LayerCrossAttention (decoder layer.1) holds EncDecAttention and a layer_norm: one level, one sum, the
    # norm's in it; the attention's own sum (1,048,576) is no second heading's
    import transformers

    from tests.reference import FIXTURES
    from tests.reference.hf import build

    layer = build("T5Model", transformers.AutoConfig.from_pretrained(FIXTURES / "t5-small")).decoder.block[0].layer[1]
    sub_layer = sum(p.numel() for p in layer.parameters())
    assert sub_layer == 1_049_088
    decoder = subtotals(document("t5-small", "md", lang), lang)[2]
    label = {"en": "Encoder–decoder attention with its RMSNorm in one decoder layer:",
             "zh": "单个解码器层中，编码器-解码器注意力及其归一化（RMSNorm）小计："}[lang]
    assert decoder[label] == {f"{sub_layer:,}".replace(",", "{,}")}
    assert not [found for found in decoder.values() if "1{,}048{,}576" in found]


_TERMS = re.compile(r"= ((?:[\d{},]+ \+ )+[\d{},]+) = ([\d{},]+)\$\$")


def wrapper_levels(text: str, lang: str) -> list[str]:
    """The subtotals of a Markdown document that add up the subtotal just before them and one norm shown
    between them: a level holding one module and its norm, shown as two levels with two sums."""
    found, last, parts = [], None, []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("**") and "`" in line:
            parts.append(line)
        if _SUBTOTAL[lang].match(line) and (m := _TERMS.search(" ".join(lines[i + 1:i + 4]))):
            terms = m.group(1).split(" + ")
            if len(terms) == 2 and last in terms and len(parts) == 1 and "Norm" in parts[0].split("**")[1]:
                found.append(line)
            last, parts = m.group(2), []
        elif line.startswith("#"):
            last, parts = None, []
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["t5-base", "flan-t5-small", "mt5-small", "mpnet-base", "bert-base", "llama-3-8b",
                                  "bart-base", "falcon-7b"])
def test_no_level_only_wraps_one_module_and_its_norm(name, lang):
    """T5's ``layer.0`` holds ``SelfAttention`` and its RMSNorm: shown as two headings, "Self-attention
    sub-layer" 2,360,064 right after "Multi-head self-attention" 2,359,296, it told one thing twice."""
    assert wrapper_levels(document(name, "md", lang), lang) == []


def test_the_wrapper_level_check_sees_the_doubled_level():
    text = "\n".join(["**Attention** (`a`).", "**q** (`q`).", "$$x = 1$$", "**o** (`o`).", "$$x = 2$$",
                      "Attention in all:", "", "$$x = 1 + 2 = 3$$", "**RMSNorm** (`n`).", "$$H = 4$$",
                      "Sub-layer in all:", "", "$$x = 3 + 4 = 7$$"])
    assert wrapper_levels(text, "en") == ["Sub-layer in all:"]


def test_a_subtotal_of_experts_reads_as_english():
    # a plural title takes no "its" and no "one" before it: "Routed experts (one copy)", not "One routed experts"
    text = document("deepseek-v3", "md", "en")
    assert "Shared experts in one decoder layer with experts:" in text and "Routed experts (one copy):" in text
    assert "its parts added up" not in text and "One routed experts" not in text


def _tiny_mixture(preset: str):
    """A two-layer transformers build of ``preset``'s family, its layer 1 a mixture of experts."""
    import transformers

    from tests.documents.test_statements import TINY_DEEPSEEK
    from tests.reference.moe import deepseek_config

    if preset == "deepseek-v3":
        return transformers.DeepseekV3Model(deepseek_config(model(preset, **TINY_DEEPSEEK)))
    return transformers.Qwen3MoeModel(transformers.Qwen3MoeConfig(
        vocab_size=32, hidden_size=16, intermediate_size=32, moe_intermediate_size=8, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, head_dim=8, num_experts=4, num_experts_per_tok=2))


@pytest.mark.crosscheck
@pytest.mark.parametrize("preset,runs", [("deepseek-v3", ["gate", "experts", "shared_experts"]),
                                         ("qwen3-30b-a3b", ["gate", "experts"])])
def test_a_mixture_of_experts_is_walked_in_the_order_transformers_runs_it(preset, runs):
    # the walk follows the model as it computes: DeepseekV3MoE and Qwen3MoeSparseMoeBlock score the experts with
    # their router first
    import torch

    torch.manual_seed(0)
    built, ran = _tiny_mixture(preset).eval(), []
    for name, module in built.layers[1].mlp.named_children():
        module.register_forward_hook(lambda *_, name=name: ran.append(name))
    with torch.no_grad():
        built(input_ids=torch.tensor([[1, 2, 3]]))
    assert ran == runs
    for lang in ("en", "zh"):
        walk = document(preset, "md", lang)
        at = [walk.index(f"`{name}`") for name in ran]
        assert at == sorted(at), lang
