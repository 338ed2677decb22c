"""Each family's rule of thumb against the model transformers builds on the meta device.

The rules are transcribed here by hand from the config's fields (the published forms: 12·L·H² + 16·L·H² for the
article's Transformer, 2·H²·(1 + G/A) + 3·H·F per GQA + SwiGLU layer, N_e or k_e experts of 3·H·F_e, T5's
4·H·A·D + 2·H·F and 8·H·A·D + 2·H·F); the error is transformers' count minus the rule, and it must be what
:func:`family_rule` gives and what the generated document prints.
"""

import re

import pytest
import transformers

from symparams import model
from symparams.analysis.family_rules import family_rule, rule_error
from symparams.analysis.thumb import rule_of_thumb
from symparams.core.algebra import whole
from symparams.core.formatting import percent, thousands
from symparams.core.symbols import r
from symparams.documents.render import render
from tests.reference import FIXTURES, ROOT
from tests.reference.hf import build, totals
from tests.reference.moe import active

DOCS = ROOT / "docs"


def config(hub_id: str):
    return transformers.AutoConfig.from_pretrained(FIXTURES / hub_id)


def printed_rule(preset: str) -> str:
    """The rule-of-thumb paragraphs of the English Markdown document (up to the next section)."""
    text = (DOCS / f"{preset}.en.md").read_text()
    return text[text.index("**A rule of thumb.**"):text.index("\n## ", text.index("**A rule of thumb.**"))]


def assert_error(preset: str, rule, count: int, by_hand: int) -> None:
    """transformers' count minus the hand-written rule is the rule's error, and the document prints it."""
    assert (rule.value, rule.total) == (by_hand, count)
    error = count - by_hand
    assert error > 0  # the rule leaves out norms (and biases, routers, relative-position tables)
    printed = printed_rule(preset)
    assert f"{thousands(error)} parameters, {percent(rule.share)}" in printed
    assert thousands(by_hand).replace(",", "{,}") in printed


def assert_all_and_active(preset: str, module, c, by_hand, experts: int) -> None:
    """A mixture of experts' rule for all its parameters (every routed expert) and for those a token uses (the
    config's top-k), against the module: each error is what the document prints."""
    rule = family_rule(model(preset))
    assert_error(preset, rule, totals(module)[0], by_hand(experts))
    used = active(module, c)
    assert (rule.active.value, rule.active.total) == (by_hand(c.num_experts_per_tok), used)
    assert f"{thousands(used - rule.active.value)} parameters, {percent(rule.active.share)}" in printed_rule(preset)


def test_llama_3_8b_gqa_swiglu_rule():
    c = config("meta-llama/Meta-Llama-3-8B")
    h, f, layers = c.hidden_size, c.intermediate_size, c.num_hidden_layers
    by_hand = layers * (2 * h * h * (c.num_attention_heads + c.num_key_value_heads) // c.num_attention_heads
                        + 3 * h * f) + c.vocab_size * h
    count = totals(build("LlamaModel", c))[0]
    assert_error("llama-3-8b", family_rule(model("llama-3-8b")), count, by_hand)
    # with the untied head the rule adds V·H again, and the error stays the norms
    head = family_rule(model("llama-3-8b", head="causal-lm"))
    assert head.value == by_hand + c.vocab_size * h and head.total - head.value == count - by_hand



def test_the_rule_says_the_untied_output_layer_is_counted_only_where_it_is():
    c = config("meta-llama/Meta-Llama-3-8B")
    released = build("LlamaForCausalLM", c)
    output = dict(released.named_parameters())["lm_head.weight"]
    assert tuple(output.shape) == (c.vocab_size, c.hidden_size)
    assert output is not released.model.embed_tokens.weight  # untied: a matrix of its own
    base = family_rule(model("llama-3-8b"))
    head = family_rule(model("llama-3-8b", head="causal-lm"))
    assert head.value - base.value == output.numel() and (base.output_layer, head.output_layer) == (False, True)
    assert "an untied output layer, which this count leaves out, would add as much again" in printed_rule("llama-3-8b")
    with_head = render(model("llama-3-8b", head="causal-lm"), format="md", lang="en")
    assert "The token embedding adds $VH$, and the untied output layer as much again:" in with_head

def test_mixtral_rule_for_all_parameters_and_for_those_a_token_uses():
    c = config("mistralai/Mixtral-8x7B-v0.1")
    h, layers = c.hidden_size, c.num_hidden_layers
    attention = 2 * h * h * (c.num_attention_heads + c.num_key_value_heads) // c.num_attention_heads

    def by_hand(experts):
        return layers * (attention + experts * 3 * h * c.intermediate_size) + c.vocab_size * h

    assert_all_and_active("mixtral-8x7b", build("MixtralModel", c), c, by_hand, c.num_local_experts)


def test_t5_base_encoder_decoder_rule():
    c = config("t5-base")
    h, inner, f = c.d_model, c.num_heads * c.d_kv, c.d_ff
    by_hand = c.num_layers * (4 * h * inner + 2 * h * f) + c.num_decoder_layers * (8 * h * inner + 2 * h * f) \
        + c.vocab_size * h
    assert_error("t5-base", family_rule(model("t5-base")), totals(build("T5Model", c))[0], by_hand)


def marian(vocab: int):
    """The Transformer base of Vaswani et al. as MarianModel builds it: shared embeddings, sinusoidal positions."""
    return transformers.MarianConfig(vocab_size=vocab, decoder_vocab_size=vocab, d_model=512, encoder_layers=6,
                                     decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
                                     encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512,
                                     share_encoder_decoder_embeddings=True, pad_token_id=vocab - 1)


def test_transformer_base_rule_error_is_marians_biases_and_norms():
    c = marian(37000)
    module = build("MarianModel", c)
    # 12·L·H² per encoder layer, 16·L·H² per decoder layer, the shared table and the two sinusoidal tables
    by_hand = 12 * 6 * 512**2 + 16 * 6 * 512**2 + (37000 + 2 * 512) * 512
    biases_and_norms = sum(p.numel() for name, p in module.named_parameters() if p.dim() == 1)
    rule = family_rule(model("transformer-base"))
    assert_error("transformer-base", rule, totals(module)[0], by_hand)
    assert rule.total - rule.value == biases_and_norms


def test_the_article_transformer_rule_is_exact_and_the_document_says_so_only_there():
    # the article's accounting: MarianModel's weight matrices and shared table (every 2-D trainable tensor) and
    # one learned position table of P·H, no biases, no LayerNorm
    module = build("MarianModel", marian(32000))
    weights = sum(p.numel() for p in module.parameters() if p.dim() == 2 and p.requires_grad)
    assert weights + 512 * 512 == 12 * 6 * 512**2 + 16 * 6 * 512**2 + (32000 + 512) * 512 == 60_686_336
    rule = family_rule(model("transformer-base-article"))
    assert (rule.value, rule.total, rule.error) == (60_686_336, 60_686_336, 0)
    exact = re.compile(r"the rule is exact|经验公式是精确的")
    claiming = {p.name.split(".")[0] for p in DOCS.glob("*.md") if exact.search(p.read_text())}
    assert claiming == {"transformer-base-article"}


@pytest.mark.parametrize("preset", ["bert-base", "gpt2", "distilbart-12-6"])
def test_families_with_another_rule_or_none_get_no_family_rule(preset):
    # BERT and GPT-2 have the one-stack 12·L·H² rule; DistilBART (decoder of its own depth) has none written
    assert family_rule(model(preset)) is None


@pytest.mark.parametrize("preset,hub_id,cls,tables", [
    ("bert-base", "bert-base-uncased", "BertModel", lambda c: c.vocab_size + c.max_position_embeddings
     + c.type_vocab_size),
    ("gpt2", "gpt2", "GPT2Model", lambda c: c.vocab_size + c.n_positions)])
def test_the_one_stack_rules_error_formula_is_what_transformers_holds_beyond_it(preset, hub_id, cls, tables):
    c = config(hub_id)
    count = totals(build(cls, c))[0]
    by_hand = 12 * c.num_hidden_layers * c.hidden_size**2 + tables(c) * c.hidden_size
    m = model(preset)
    thumb = rule_of_thumb(m)
    assert thumb.value == by_hand
    assert whole(rule_error(m.closed_form, thumb.formula, {r: 4}), m.values) == count - by_hand
    assert f"The {count - by_hand:,} parameters it leaves out" in (DOCS / f"{preset}.en.md").read_text()


def test_bart_base_is_an_encoder_decoder_of_the_articles_shape():
    # BART's learned position tables hold P + 2 rows each (two offset rows); BartModel's 1-D tensors (biases,
    # LayerNorms) are what the rule leaves out
    c = config("facebook/bart-base")
    module = build("BartModel", c)
    h, layers, positions = c.d_model, c.encoder_layers, c.max_position_embeddings + 2
    by_hand = 12 * layers * h * h + 16 * c.decoder_layers * h * h + (c.vocab_size + 2 * positions) * h
    rule = family_rule(model("bart-base"))
    assert_error("bart-base", rule, totals(module)[0], by_hand)
    assert rule.total - rule.value == sum(p.numel() for p in module.parameters() if p.dim() == 1)


def test_gemma_2b_multi_query_gated_rule():
    c = config("google/gemma-2b")
    h, layers = c.hidden_size, c.num_hidden_layers
    # one key/value head (G = 1): q and o are H × A·D, k and v H × D, with A·D = H here
    assert c.num_attention_heads * c.head_dim == h
    by_hand = layers * (2 * h * h * (c.num_attention_heads + c.num_key_value_heads) // c.num_attention_heads
                        + 3 * h * c.intermediate_size) + c.vocab_size * h
    assert_error("gemma-2b", family_rule(model("gemma-2b")), totals(build("GemmaModel", c))[0], by_hand)


def test_deepseek_v3_latent_attention_and_experts_rule():
    c = config("deepseek-ai/DeepSeek-V3")
    h, heads, layers, dense = c.hidden_size, c.num_attention_heads, c.num_hidden_layers, c.first_k_dense_replace
    attention = h * c.q_lora_rank + c.q_lora_rank * heads * (c.qk_nope_head_dim + c.qk_rope_head_dim) \
        + h * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank * heads * (c.qk_nope_head_dim + c.v_head_dim) \
        + heads * c.v_head_dim * h

    def by_hand(experts):
        return layers * attention + dense * 3 * h * c.intermediate_size \
            + (layers - dense) * (experts + c.n_shared_experts) * 3 * h * c.moe_intermediate_size + c.vocab_size * h

    assert_all_and_active("deepseek-v3", build("DeepseekV3Model", c), c, by_hand, c.n_routed_experts)


def test_an_encoder_only_t5_gets_no_encoder_decoder_rule():
    # T5ForTokenClassification keeps the encoder only: a rule with a decoder would count more than the model
    import torch

    m = model("t5-small", head="token-classification")
    with torch.device("meta"):
        module = transformers.T5ForTokenClassification(config("t5-small"))
    assert not any(name.startswith("decoder.") for name, _ in module.named_parameters())
    assert family_rule(m) is None


@pytest.mark.parametrize("preset", ["llama-3-8b", "mixtral-8x7b", "t5-base", "bart-base", "deepseek-v2-lite"])
def test_no_head_makes_a_rule_count_more_than_the_model(preset):
    # the rule keeps only matrices and tables the model holds: its error is never negative, with any head
    for head in (None, *model(preset).family.heads):
        rule = family_rule(model(preset, head=head))
        assert rule is None or rule.value <= rule.total, head
