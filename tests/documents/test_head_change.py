"""The count with a base model's LM head says what the head drops and adds, part by part, in both languages.

Every figure is worked out from the two modules transformers builds on the meta device from the published
config (tests/fixtures): the base model and the model with its head.  BertForMaskedLM has no pooler and adds
a transform, its LayerNorm and an output bias, its decoder reusing the word embeddings; T5's and GPT-2's
``lm_head`` is the token embedding's weight; Llama 3's ``lm_head`` is a V × H matrix of its own.
"""

from __future__ import annotations

import re

import pytest

from symparams import model
from symparams.core.formatting import thousands
from symparams.documents.head_change import head_change
from symparams.documents.render import render
from tests.reference import FIXTURES
from tests.reference.documents import document

#: preset (None: the family inferred from the config), published config, base class, class with the LM head,
#: the base model's prefix in the latter
REFERENCES = [
    ("bert-base", "bert-base-uncased", "BertModel", "BertForMaskedLM", "bert."),
    ("t5-base", "t5-base", "T5Model", "T5ForConditionalGeneration", ""),
    ("llama-3-8b", "meta-llama/Meta-Llama-3-8B", "LlamaModel", "LlamaForCausalLM", "model."),
    # inferred families: the head's model holds the base model one level down, as ``transformer``
    (None, "flaubert/flaubert_base_cased", "FlaubertModel", "FlaubertWithLMHeadModel", "transformer."),
    (None, "EleutherAI/gpt-neo-125M", "GPTNeoModel", "GPTNeoForCausalLM", "transformer."),
]


def _built(checkpoint: str, cls: str):
    import transformers

    from tests.reference.hf import build

    return build(cls, transformers.AutoConfig.from_pretrained(FIXTURES / checkpoint))


def _module_of(module, name: str) -> str:
    """The module a parameter belongs to as the documents name it: its leaf module (``…dense``), or the
    parameter itself where a container holds it bare (``cls.predictions.bias``)."""
    owner, _, _ = name.rpartition(".")
    return owner if not list(module.get_submodule(owner).children()) else name


def reference_change(checkpoint: str, base_cls: str, head_cls: str, prefix: str) -> dict:
    """From transformers: the base model's top-level modules the headed model lacks (with their sizes), the
    headed model's modules outside the base model (with theirs; a tied weight is listed once, under the
    module that owns it) and the totals."""
    base, headed = _built(checkpoint, base_cls), _built(checkpoint, head_cls)
    in_base = {prefix + name for name, _ in base.named_parameters()}
    in_headed = {name for name, _ in headed.named_parameters()}
    dropped, added = {}, {}
    for name, p in base.named_parameters():
        if prefix + name not in in_headed:
            top = name.split(".")[0]
            dropped[top] = dropped.get(top, 0) + p.numel()
    for name, p in headed.named_parameters():
        if name not in in_base:
            key = _module_of(headed, name)
            added[key] = added.get(key, 0) + p.numel()
    total = sum(p.numel() for p in headed.parameters())
    return {"base": sum(p.numel() for p in base.parameters()), "total": total, "dropped": dropped,
            "added": added, "headed": headed}


@pytest.mark.crosscheck
@pytest.mark.parametrize("name, checkpoint, base_cls, head_cls, prefix", REFERENCES, ids=[r[1] for r in REFERENCES])
def test_the_parts_a_head_drops_and_adds_are_the_ones_transformers_builds(name, checkpoint, base_cls, head_cls,
                                                                         prefix):
    ref = reference_change(checkpoint, base_cls, head_cls, prefix)
    change = head_change(model(name or str(FIXTURES / checkpoint / "config.json")))
    assert (change.base, change.total) == (ref["base"], ref["total"])
    assert {p.name: p.count for p in change.dropped} == ref["dropped"]
    assert {p.name: p.count for p in change.added} == ref["added"]
    headed = ref["headed"]
    for p in change.tied:  # a tied part's weight is its target's tensor, not a copy
        # an inferred tree names its modules as the class with the head does (``transformer.wte``), a
        # hand-written family's as the base model does
        target = p.tied_name if name is None else prefix + p.tied_name
        assert headed.get_submodule(p.name).weight is headed.get_submodule(target).weight


def test_the_figures_of_bert_base_are_the_ones_worked_out_by_hand():
    # BertForMaskedLM drops the pooler, H·H + H, and adds the transform (H·H + H), its LayerNorm (2H) and the
    # output bias (V): H = 768, V = 30522
    change = head_change(model("bert-base"))
    assert [(p.name, p.count) for p in change.dropped] == [("pooler", 768 * 768 + 768)]
    assert sum(p.count for p in change.added) == 768 * 768 + 768 + 2 * 768 + 30522 == 622_650
    assert change.total - change.base == 32_058
    assert [(p.name, p.tied_name) for p in change.tied] == [("cls.predictions.decoder", "embeddings.word_embeddings")]


def _intro(name: str, lang: str) -> str:
    lead = "With its" if lang == "en" else "加上 "
    text = document(name, "md", lang)
    return next(s for line in text.splitlines() for s in [line[line.find(lead):]] if lead in line and "--head" in line)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bert_base_says_it_drops_the_pooler_and_adds_the_transform_layernorm_and_bias(lang):
    text = _intro("bert-base", lang)
    more = "32,058 more than the base model" if lang == "en" else "比基础模型多 32,058 个"
    assert "**109,514,298**" in text and more in text
    for module, figure in (("pooler", "590{,}592"), ("cls.predictions.transform.dense", "590{,}592"),
                           ("cls.predictions.transform.LayerNorm", "1{,}536"), ("cls.predictions.bias", "30{,}522")):
        assert re.search(rf"`{re.escape(module)}`\s?[（(]\$[^$]* = {re.escape(figure)}\$", text), module
    dropped, added = text.index("`pooler`"), text.index("`cls.predictions.bias`")
    assert dropped < added and ("drops" if lang == "en" else "去掉了") in text[:dropped]
    tied = "is tied to the token embeddings `embeddings.word_embeddings`" if lang == "en" else \
        "与词嵌入（Token Embedding）`embeddings.word_embeddings` 共享权重"
    assert tied in text


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name, target", [("t5-base", "shared"), ("gpt2", "wte")])
def test_a_tied_head_is_said_to_add_nothing(name, target, lang):
    text = _intro(name, lang)
    same, adds_nothing = (("as many as the base model", "the tied head adds no parameters") if lang == "en"
                          else ("与基础模型相同", "共享权重的任务头不增加参数"))
    assert same in text and adds_nothing in text and "`lm_head`" in text and f"`{target}`" in text
    assert "more than" not in text and "多 " not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_llama_3_8b_adds_its_untied_output_projection(lang):
    # LlamaForCausalLM's lm_head: V × H = 128256 × 4096, not tied (tie_word_embeddings is false)
    text = _intro("llama-3-8b", lang)
    assert thousands(128256 * 4096) == "525,336,576"
    more = "525,336,576 more than the base model" if lang == "en" else "比基础模型多 525,336,576 个"
    assert "**8,030,261,248**" in text and more in text
    assert re.search(r"`lm_head`\s?[（(]\$H \\cdot V = 525\{,\}336\{,\}576\$", text)
    untied = "; it is a matrix of its own, not tied to the token embedding." if lang == "en" \
        else "；它是独立的矩阵，不与词嵌入共享权重。"
    assert untied in text and "adding no parameters" not in text and "不增加参数" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_head_that_drops_more_than_it_adds_says_fewer(lang):
    # ALBERT-base: the pooler is H·H + H = 768·768 + 768; the MLM head adds E·H + E, 2E and V (E = 128, V = 30000)
    text = _intro("albert-base-v2", lang)
    fewer = 768 * 768 + 768 - (128 * 768 + 128 + 2 * 128 + 30000)
    assert (f"{thousands(fewer)} fewer than the base model" if lang == "en" else f"比基础模型少 {thousands(fewer)} 个") \
        in text


def test_a_model_with_its_head_or_without_an_lm_head_has_no_such_sentence():
    assert head_change(model("bert-base", head="masked-lm")) is None
    assert head_change(model("transformer-base")) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_inferred_tied_head_names_the_module_it_is_tied_to(lang):
    # GPTNeoForCausalLM's lm_head is the token embedding: named_parameters() lists it under transformer.wte
    # (which module it is, the cross-check above reads off transformers' build)
    text = render(model(str(FIXTURES / "EleutherAI/gpt-neo-125M/config.json")), format="md", lang=lang)
    tied = "as many as the base model: the head's `lm_head` is tied to the `transformer.wte`, so the tied head " \
        "adds no parameters." if lang == "en" else "与基础模型相同：任务头中的 `lm_head` 与 `transformer.wte` 共享权重"
    assert tied in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_head_without_parameters_of_its_own_says_so(lang):
    # Gemma 4's formula holds tie_word_embeddings true: its count has no lm_head to name
    import transformers

    config = {**transformers.AutoConfig.for_model("gemma4_text").to_dict(), "model_type": "gemma4_text"}
    text = render(model(config), format="md", lang=lang)
    own = "as many as the base model: the head holds no parameters of its own." if lang == "en" else \
        "与基础模型相同：任务头没有自己的参数。"
    assert own in text


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_head_that_lists_a_base_tensor_elsewhere_gets_the_count_and_the_difference_only(lang):
    # CamembertForMaskedLM's inferred build lists the tied word embeddings under lm_head.decoder: a list of
    # parts would say the head drops the word embeddings, which it does not
    import transformers

    from symparams.families.inferred import model as inferred_model
    from tests.reference.hf import build, totals

    config = transformers.CamembertConfig()
    base, headed = totals(build("CamembertModel", config))[0], totals(build("CamembertForMaskedLM", config))[0]
    text = render(inferred_model({"model_type": "camembert"}), format="md", lang=lang)
    sentence = (f"With its masked-lm head (`--head masked-lm`) the model has **{headed:,}** parameters, "
                f"{headed - base:,} more than the base model." if lang == "en" else
                f"加上 masked-lm 头（`--head masked-lm`），模型共有 **{headed:,}** 个参数，比基础模型多 {headed - base:,} 个。")
    assert sentence in text
