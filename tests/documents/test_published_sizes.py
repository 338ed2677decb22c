"""The published sizes the documents reconcile with the exact count.

Every generated document of a preset with published figures (both languages, Markdown and LaTeX) states each
figure in its introduction and its conclusion.  The numbers that reconcile them are compared with the models
transformers builds from the released checkpoints' config.json on the meta device (totals with the LM head,
the LM head's own tensor, the routed experts' tensors, the active count from the config's top-k), and each
published figure with its source's own rounding of those counts.
"""

import re

import pytest
import transformers

from symparams import model
from symparams.analysis.explain import parse_claim
from symparams.core.formatting import thousands
from symparams.documents.derivation import derive
from symparams.documents.published_view import published_view
from symparams.families.presets import all_presets
from symparams.families.published import FIGURES, figures
from tests.reference import FIXTURES, ROOT
from tests.reference.hf import build, totals
from tests.reference.moe import EXPERT_TENSORS

DOCS = ROOT / "docs"
#: a section heading: ``## 8. Conclusion`` in Markdown, ``\section*{8.\quad …}`` in LaTeX
HEADING = {"md": re.compile(r"^## \d+\. ", re.M), "tex": re.compile(r"^\\section\*\{\d+\.", re.M)}


def introduction_and_conclusion(text: str, fmt: str) -> tuple[str, str]:
    """The first numbered section of a document (the introduction) and its last (the conclusion)."""
    starts = [m.start() for m in HEADING[fmt].finditer(text)]
    assert len(starts) > 2, "a document has an introduction, sections and a conclusion"
    return text[starts[0]:starts[1]], text[starts[-1]:]


def test_every_figure_names_a_preset_and_its_source():
    assert set(FIGURES) <= set(all_presets())
    assert all(f.source and f.claim for fs in FIGURES.values() for f in fs)


@pytest.mark.parametrize("fmt", ["md", "tex"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset", sorted(FIGURES))
def test_every_published_size_is_in_the_introduction_and_the_conclusion(preset, lang, fmt):
    intro, conclusion = introduction_and_conclusion((DOCS / f"{preset}.{lang}.{fmt}").read_text(), fmt)
    for f in figures(preset):
        assert f.claim in intro, f"{preset}.{lang}.{fmt}: {f.claim} missing from the introduction"
        assert f.claim in conclusion, f"{preset}.{lang}.{fmt}: {f.claim} missing from the conclusion"


def test_the_introduction_test_fails_without_the_sentence():
    text = (DOCS / "mixtral-8x7b.en.md").read_text()
    intro, _ = introduction_and_conclusion(text.replace("46.7B", "the published size"), "md")
    assert "46.7B" not in intro


def released(hub_id: str, cls: str):
    config = transformers.AutoConfig.from_pretrained(FIXTURES / hub_id)
    return build(cls, config), config


def routed(module) -> int:
    """The parameters of every routed expert: transformers' fused expert tensors."""
    return sum(p.numel() for name, p in module.named_parameters() if name.endswith(EXPERT_TENSORS))


def in_document(preset: str, *numbers: int) -> None:
    """Each number, with thousands separators, in the English Markdown document's introduction."""
    intro, _ = introduction_and_conclusion((DOCS / f"{preset}.en.md").read_text(), "md")
    for n in numbers:
        assert thousands(n) in intro, f"{preset}: {thousands(n)} not in the introduction"


def test_llama_3_8b_is_llamaforcausallm_with_its_untied_lm_head():
    module, config = released("meta-llama/Meta-Llama-3-8B", "LlamaForCausalLM")
    total, head = totals(module)[0], module.lm_head.weight.numel()
    assert not config.tie_word_embeddings and head == config.vocab_size * config.hidden_size == 525_336_576
    (eight,) = published_view(model("llama-3-8b"), "llama-3-8b")
    assert (eight["count"], eight["count"] - eight["base"]) == (total, head)
    assert parse_claim("8B").explains(total, False)  # the model card's 8B
    # the memory sentence: the released weights in bf16, two bytes each
    assert derive(model("llama-3-8b")).released_bf16 == 2 * total
    in_document("llama-3-8b", total, head)
    # the head is named untied where the figure is reconciled, in both languages
    assert module.lm_head.weight is not module.model.embed_tokens.weight
    for lang, untied, named in (("en", "not tied to the token embedding", "the untied output projection `lm_head`"),
                                ("zh", "不与词嵌入共享权重", "不共享权重的输出投影 `lm_head`")):
        intro, conclusion = introduction_and_conclusion((DOCS / f"llama-3-8b.{lang}.md").read_text(), "md")
        assert untied in intro and named in conclusion


def test_mixtral_totals_active_and_shared_parts_are_mixtralforcausallms():
    module, config = released("mistralai/Mixtral-8x7B-v0.1", "MixtralForCausalLM")
    total, experts = totals(module)[0], routed(module)
    e, k = config.num_local_experts, config.num_experts_per_tok
    shared, active = total - experts, total - experts + experts * k // e
    total_view, active_view = published_view(model("mixtral-8x7b"), "mixtral-8x7b")
    assert (total_view["count"], active_view["count"]) == (total, active)
    v = total_view["experts"]
    assert (v["experts"], v["used"], v["shared"], v["single"]) == (e, k, shared, shared + experts // e)
    assert v["copies"] - (e - 1) * v["shared"] == total
    # Mistral AI: 46.7B in all, 12.9B per token; 8 copies of a 7B model would be 56B
    assert parse_claim("46.7B").explains(total, False) and parse_claim("12.9B").explains(active, False)
    assert parse_claim("7B").explains(v["single"], False) and not parse_claim("56B").explains(total, False)
    in_document("mixtral-8x7b", total, active, shared, v["single"], v["copies"])


def test_deepseek_v3_totals_active_and_the_mtp_module_transformers_leaves_out():
    module, config = released("deepseek-ai/DeepSeek-V3", "DeepseekV3ForCausalLM")
    total, experts = totals(module)[0], routed(module)
    active = total - experts + experts * config.num_experts_per_tok // config.n_routed_experts
    head = module.lm_head.weight.numel()
    total_view, active_view, checkpoint = published_view(model("deepseek-v3"), "deepseek-v3")
    assert (total_view["count"], active_view["count"], active_view["base"]) == (total, active, active - head)
    # the technical report: 671B in all, 37B activated; 37B is the active count cut to two digits, or the
    # count without the LM head rounded, not the count with it rounded (38B)
    assert parse_claim("671B").explains(total, False)
    assert not parse_claim("37B").explains(active, False) and parse_claim("37B").explains(active, False, cut=True)
    assert parse_claim("37B").explains(active - head, False) and active_view["cut"]
    # the config asks for an MTP layer, yet no parameter of layer 61 (the MTP module) is built
    assert config.num_mtp_layers == 1 and checkpoint["counts"] == "checkpoint"
    layers = {int(m.group(1)) for name, _ in module.named_parameters()
              if (m := re.match(r"model\.layers\.(\d+)\.", name))}
    assert max(layers) == config.num_hidden_layers - 1
    in_document("deepseek-v3", total, active, active - head)
    # the head belongs to the count and the cut to the figure: "… with its causal-lm head cut, not rounded" read
    # as a head cut off
    intro, conclusion = introduction_and_conclusion((DOCS / "deepseek-v3.en.md").read_text(), "md")
    assert f"is {active:,} with its causal-lm head, cut (not rounded) to 2 significant digits" in intro
    assert "head cut" not in intro
    # the card's 685B are 671B and 14B: they include the MTP module, they do not add it to anything
    assert "The 685B of its checkpoint include a module this count leaves out" in conclusion


def test_gpt2_117m_is_no_accounting_of_gpt2lmheadmodel_and_124m_is():
    module, _ = released("gpt2", "GPT2LMHeadModel")
    total = totals(module)[0]
    paper, released_size = published_view(model("gpt2"), "gpt2")
    assert released_size["count"] == total == 124_439_808 and parse_claim("124M").explains(total, False)
    assert not paper["explained"] and not parse_claim("117M").explains(total, False)
    in_document("gpt2", total)


@pytest.mark.parametrize("preset,hub_id", [("bert-base", "bert-base-uncased"), ("bert-large", "bert-large-uncased")])
def test_bert_sizes_are_bertmodels_rounded(preset, hub_id):
    module, _ = released(hub_id, "BertModel")
    total = totals(module)[0]
    (view,) = published_view(model(preset), preset)
    assert view["count"] == total and parse_claim(view["claim"]).explains(total, False)
    in_document(preset, total)


@pytest.mark.parametrize("preset,hub_id,cls", [("t5-small", "t5-small", "T5ForConditionalGeneration"),
                                               ("t5-base", "t5-base", "T5ForConditionalGeneration"),
                                               ("llama-2-7b", "meta-llama/Llama-2-7b-hf", "LlamaForCausalLM")])
def test_generative_sizes_are_the_released_classes_rounded(preset, hub_id, cls):
    module, _ = released(hub_id, cls)
    total = totals(module)[0]
    (view,) = published_view(model(preset), preset)
    assert view["count"] == total and parse_claim(view["claim"]).explains(total, False)
    in_document(preset, total)


def test_the_papers_65m_is_no_rounding_of_marianmodel():
    # Vaswani et al.'s base model with the shared 37k vocabulary as MarianModel builds it: 63.6M, not 65M
    config = transformers.MarianConfig(vocab_size=37000, decoder_vocab_size=37000, d_model=512, encoder_layers=6,
                                       decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
                                       encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512,
                                       share_encoder_decoder_embeddings=True, pad_token_id=36999)
    total = totals(build("MarianModel", config))[0]
    (view,) = published_view(model("transformer-base"), "transformer-base")
    assert view["base"] == total and not parse_claim("65M").explains(total, False) and not view["explained"]
