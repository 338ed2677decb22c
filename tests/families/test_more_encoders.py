"""XLM-RoBERTa, DeBERTa-v2/v3, MPNet, ModernBERT and BERT's added heads against transformers on the meta device.

Every model is compared tensor by tensor (layers folded as ``*``), in total and in trainable count, with the
transformers class its family's ``CLASSES`` table names: every preset with every head, every fixture with
every head, and random configurations read from config.json dicts (the same dict builds both).
"""

import itertools
import json

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symparams import SymparamsError, model
from symparams.core.symbols import A, B
from symparams.documents.environment import catalog
from symparams.families import registry, roberta
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from symparams.families.registry import family, for_config_type
from tests.reference import FIXTURES
from tests.reference.hf import totals
from tests.reference.more_families import check, config, reference

pytestmark = pytest.mark.crosscheck

NEW = ("deberta_v2", "mpnet", "modernbert")
#: the presets whose every head is checked here, and the model_type that builds them
PRESETS = {"xlm-roberta-base": "xlm-roberta", "xlm-roberta-large": "xlm-roberta", "deberta-v3-base": None,
           "deberta-v3-large": None, "mpnet-base": None, "modernbert-base": None}
#: the fixtures (config.json files written from the published ones), by family
FIXTURE_FAMILIES = {"FacebookAI/xlm-roberta-base": "roberta", "microsoft/deberta-v3-base": "deberta_v2",
                    "microsoft/mpnet-base": "mpnet", "answerdotai/ModernBERT-base": "modernbert"}


def fixture(name):
    return json.loads((FIXTURES / name / "config.json").read_text())


def heads_of(name):
    return [None, *family(name).heads]


# -- every preset, every head -------------------------------------------------------------------------------

@pytest.mark.parametrize("preset,head", [(p, h) for p in PRESETS for h in heads_of(all_presets()[p].family)])
def test_preset_with_every_head_matches_transformers(preset, head):
    check(model(preset, head=head), model_type=PRESETS[preset])


@pytest.mark.parametrize("preset,head", [(p.name, h) for p in all_presets().values() if p.family in ("bert", "roberta")
                                         for h in ("causal-lm", "multiple-choice", "next-sentence")
                                         if h in family(p.family).heads])
def test_bert_and_roberta_presets_with_the_added_heads_match_transformers(preset, head):
    check(model(preset, head=head), model_type=PRESETS.get(preset))


def test_the_presets_reference_the_base_model_transformers_builds():
    for name, model_type in PRESETS.items():
        preset = all_presets()[name]
        table = roberta.XLM_ROBERTA_CLASSES if model_type == "xlm-roberta" else registry.module(preset.family).CLASSES
        assert preset.reference == table[None][0], name


# -- fixtures ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,head", [(n, h) for n, fam in FIXTURE_FAMILIES.items() for h in heads_of(fam)])
def test_fixture_with_every_head_matches_transformers(name, head):
    data = fixture(name)
    m = from_config(str(FIXTURES / name / "config.json"), head)
    assert m.family.name == FIXTURE_FAMILIES[name]
    check(m, data)


def test_xlm_roberta_is_read_by_the_roberta_module():
    assert for_config_type("xlm-roberta") is family("roberta")
    assert for_config_type("deberta-v2") is family("deberta_v2")
    assert model({"model_type": "xlm-roberta"}).count == check(model({"model_type": "xlm-roberta"}),
                                                               {"model_type": "xlm-roberta"}).count


@pytest.mark.parametrize("model_type", ["xlm-roberta", "deberta-v2", "mpnet", "modernbert"])
def test_missing_keys_take_the_transformers_config_class_defaults(model_type):
    data = {"model_type": model_type}
    for head in heads_of(for_config_type(model_type).name):
        check(model(data, head=head), data)


# -- published totals, each derived here by hand ----------------------------------------------------------

def bert_layer(h, inter):
    """One BERT-style layer: Q K V and attention output 4·(h² + h), two LayerNorms 4h, the FFN."""
    return 4 * (h * h + h) + 4 * h + (h * inter + inter) + (inter * h + h)


def test_xlm_roberta_base_is_278_043_648():
    # HF model card of FacebookAI/xlm-roberta-base: 278M parameters (XLMRobertaModel with its pooler);
    # (250002 + 514 + 1)·768 + 2·768 embeddings, 12 layers, pooler 768² + 768
    by_hand = (250002 + 514 + 1) * 768 + 2 * 768 + 12 * bert_layer(768, 3072) + 768 * 768 + 768
    assert by_hand == 278_043_648
    assert model("xlm-roberta-base").count == by_hand
    assert from_config(str(FIXTURES / "FacebookAI/xlm-roberta-base/config.json")).count == by_hand


def test_xlm_roberta_large_is_560m():
    # HF model card of FacebookAI/xlm-roberta-large: 560M parameters (the XLM-R paper, Conneau et al. 2020,
    # Table 7, says 550M)
    by_hand = (250002 + 514 + 1) * 1024 + 2 * 1024 + 24 * bert_layer(1024, 4096) + 1024 * 1024 + 1024
    assert model("xlm-roberta-large").count == by_hand == 559_890_432
    assert round(by_hand / 1e6) == 560


def test_deberta_v3_base_has_98m_embedding_and_184m_in_all():
    # microsoft/deberta-v3-base model card: "86M backbone parameters with a vocabulary containing 128K tokens
    # which introduces 98M parameters in the Embedding layer"; the hub lists 184M in all.
    word = 128100 * 768
    rest = 2 * 768 + 12 * bert_layer(768, 3072) + 2 * 256 * 768 + 2 * 768  # LayerNorms, layers, rel table
    m = model("deberta-v3-base")
    assert m.count == word + rest == 183_831_552
    assert m.evaluate(m.block("embeddings.word_embeddings").count) == word and round(word / 1e6) == 98
    assert round(m.count / 1e6) == 184
    # the card's 86M backbone also holds the pretraining head's dense layer; the base model holds 85.45M
    assert round(rest / 1e4) == 8545


def test_deberta_v3_large_has_131m_embedding():
    # microsoft/deberta-v3-large model card: "304M backbone parameters ... 131M parameters in the Embedding
    # layer" (the card's backbone again counts the pretraining head: the base model's is 302.8M)
    word = 128100 * 1024
    rest = 2 * 1024 + 24 * bert_layer(1024, 4096) + 2 * 256 * 1024 + 2 * 1024
    assert model("deberta-v3-large").count == word + rest == 434_012_160
    assert round(word / 1e6) == 131 and round(rest / 1e5) == 3028


def test_mpnet_base_is_110m():
    # Song et al. 2020 (MPNet), Section 4: MPNet-base has 110M parameters, BERT-base's size;
    # (30527 + 514)·768 + 2·768 embeddings, 12 layers, relative bias 32·12, pooler 768² + 768
    by_hand = (30527 + 514) * 768 + 2 * 768 + 12 * bert_layer(768, 3072) + 32 * 12 + 768 * 768 + 768
    assert model("mpnet-base").count == by_hand == 109_486_464
    assert abs(by_hand - 110_000_000) < 0.01 * 110_000_000


def test_modernbert_base_is_149m():
    # answerdotai/ModernBERT-base model card: 149M parameters. 50368·768 tokens and norm 768; per layer Wqkv
    # 768·2304, Wo 768², mlp_norm 768, Wi 768·2304, Wo 1152·768; 21 attn_norms; final_norm 768
    layer = 768 * 2304 + 768 * 768 + 768 + 768 * 2304 + 1152 * 768
    by_hand = 50368 * 768 + 768 + 22 * layer + 21 * 768 + 768
    assert model("modernbert-base").count == by_hand == 149_014_272
    assert round(by_hand / 1e6) == 149
    assert from_config(str(FIXTURES / "answerdotai/ModernBERT-base/config.json")).count == by_hand


# -- structure --------------------------------------------------------------------------------------------

def test_bert_causal_lm_is_the_masked_lm_head_without_the_pooler():
    assert model("bert-base", head="causal-lm").count == model("bert-base", head="masked-lm").count
    assert model("bert-base", head="causal-lm").components["pooler"] == 0


def test_multiple_choice_scores_each_choice_with_one_output_on_the_pooler():
    for name in ("bert-base", "roberta-base", "mpnet-base"):
        assert model(name, head="multiple-choice").count == model(name).count + 768 + 1
    assert model("deberta-v3-base", head="multiple-choice").count == \
        model("deberta-v3-base").count + (768 * 768 + 768) + 768 + 1  # ContextPooler, then the score


def test_next_sentence_head_is_two_logits_on_the_pooler():
    assert model("bert-base", head="next-sentence").count == model("bert-base").count + 2 * 768 + 2


def test_modernbert_first_layer_has_no_attention_norm():
    m = model("modernbert-base")
    assert m.block("encoder.attn_norm").repeat == sp.Symbol("L", positive=True, integer=True) - 1
    data = {**fixture("answerdotai/ModernBERT-base"), "num_hidden_layers": 1}
    one = check(model(data), data)  # L = 1: no attn_norm at all
    assert one.count == 50368 * 768 + 768 + (768 * 2304 + 768 * 768 + 768 + 768 * 2304 + 1152 * 768) + 768


@pytest.mark.parametrize("tie,bias", [(True, True), (True, False), (False, True), (False, False)])
def test_modernbert_decoder_ties_its_weight_only(tie, bias):
    data = {**fixture("answerdotai/ModernBERT-base"), "tie_word_embeddings": tie, "decoder_bias": bias}
    m = check(model(data, head="masked-lm"), data)
    head = m.count - model(data).count
    assert head == (768 * 768 + 768) + (0 if tie else 50368 * 768) + (50368 if bias else 0)


@pytest.mark.parametrize("legacy", [True, False])
@pytest.mark.parametrize("tie", [True, False])
def test_deberta_masked_lm_heads(legacy, tie):
    data = {**fixture("microsoft/deberta-v3-base"), "legacy": legacy, "tie_word_embeddings": tie}
    m = check(model(data, head="masked-lm"), data)
    # legacy: transform dense and LayerNorm, bias, decoder (own weight and bias when untied);
    # not legacy: dense, LayerNorm and bias, no decoder at all
    extra = 768 * 768 + 768 + 2 * 768 + 128100 + (128100 * 768 + 128100 if legacy and not tie else 0)
    assert m.count - model(data).count == extra


def test_deberta_position_projections_exist_only_without_share_att_key():
    data = {**fixture("microsoft/deberta-v3-base"), "share_att_key": False}
    shared, own = model(fixture("microsoft/deberta-v3-base")), check(model(data), data)
    assert own.count - shared.count == 12 * 2 * (768 * 768 + 768)  # pos_key_proj, pos_query_proj per layer
    c2p_only = {**data, "pos_att_type": ["c2p"]}
    assert check(model(c2p_only), c2p_only).count - shared.count == 12 * (768 * 768 + 768)


def test_deberta_v2_with_positions_segments_and_a_projection():
    data = {"model_type": "deberta-v2", "vocab_size": 300, "hidden_size": 32, "num_attention_heads": 4,
            "num_hidden_layers": 2, "intermediate_size": 40, "embedding_size": 16, "type_vocab_size": 3,
            "position_biased_input": True, "max_position_embeddings": 50, "relative_attention": True,
            "max_relative_positions": 7}
    for head in heads_of("deberta_v2"):
        m = check(model(data, head=head), data)
    assert m.values[B] == 7  # no position_buckets: max_relative_positions


# -- the prover ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["xlm-roberta-base", "xlm-roberta-large", "deberta-v3-base", "deberta-v3-large",
                                  "modernbert-base", "deberta_v2", "modernbert"])
def test_invariant_in_the_head_count(name):
    p = model(name).prove()
    assert p.invariant and p.derivative == 0 and A not in p.closed_form.free_symbols
    per_head = [s for s in p.steps if s.key == "per_head"]
    assert per_head and all(A in s.lhs.free_symbols for s in per_head)  # Q, K, V written per head, A cancels


def test_deberta_with_its_own_position_projections_stays_invariant():
    assert model("deberta-v3-base", share_att_key=False).prove().invariant


def test_mpnet_depends_on_the_head_count_through_its_relative_bias():
    m = model("mpnet-base")
    p = m.prove()
    assert not p.invariant and p.dependence == A * B and p.derivative == B
    (a1, n1), (a2, n2) = p.counterexample
    assert n2 - n1 == (a2 - a1) * 32  # B = 32 buckets, one number per head each
    for a, n in ((a1, n1), (a2, n2)):  # transformers agrees: both head counts built
        module, _ = reference({**config(m), "num_attention_heads": a})
        assert totals(module)[0] == n
    assert model("mpnet").prove().counterexample_source == "preset mpnet-base"


# -- documents: every block has a title in both catalogs ----------------------------------------------------

@pytest.mark.parametrize("name", ["bert", "roberta", *NEW])
def test_every_block_title_is_in_both_catalogs(name):
    en, zh = catalog("en")["blocks"], catalog("zh")["blocks"]
    fam = family(name)
    flags = [sw for sw in fam.switches if isinstance(sw.default, bool) or sw.default is None]
    for head in heads_of(name):
        for combo in itertools.product([False, True], repeat=len(flags)):
            tree = fam.build(fam.resolve({sw.name: v for sw, v in zip(flags, combo)}, head), head)
            for _, block, _ in tree.walk():
                if block is not tree:
                    key = block.title_key
                    assert (key in en and key in zh) or (f"{name}/{key}" in en and f"{name}/{key}" in zh), (head, key)


# -- refused, with the key named ------------------------------------------------------------------------------

@pytest.mark.parametrize("data,head,message", [
    ({"model_type": "deberta-v2", "conv_kernel_size": 3}, None, "key conv_kernel_size=3"),
    ({"model_type": "deberta-v2", "attention_head_size": 32}, None, "key attention_head_size=32"),
    ({"model_type": "deberta-v2", "pooler_hidden_size": 100}, "sequence-classification", "key pooler_hidden_size=100"),
    ({"model_type": "deberta-v2", "pos_att_type": 3}, None, "key pos_att_type must be"),
    ({"model_type": "deberta-v2", "vocab_size": 10, "pad_token_id": 10}, None, "pad_token_id=10 is outside"),
    ({"model_type": "deberta-v2", "hidden_size": 100}, None, "H=100 is not divisible by A=24"),
    ({"model_type": "mpnet", "vocab_size": 1}, None, "key vocab_size=1 leaves no room"),
    ({"model_type": "mpnet", "max_position_embeddings": 1}, None, "key max_position_embeddings=1 leaves no room"),
    ({"model_type": "modernbert", "vocab_size": 1000}, None, "pad_token_id=50283 is outside vocab_size=1000"),
    ({"model_type": "modernbert", "num_attention_heads": 7}, None, "H=768 is not divisible by A=7"),
    ({"model_type": "modernbert", "norm_bias": "no"}, None, "key norm_bias must be true or false"),
    ({"model_type": "xlm-roberta", "add_cross_attention": True}, None, "key add_cross_attention=true"),
])
def test_what_cannot_be_counted_is_refused_in_one_line(data, head, message):
    with pytest.raises(SymparamsError, match=message) as err:
        model(data, head=head)
    assert "\n" not in str(err.value)


def test_deberta_refusals_are_what_transformers_refuses_or_what_symparams_does_not_model():
    with pytest.raises(ValueError):  # transformers refuses it too
        reference({"model_type": "deberta-v2", "hidden_size": 100})
    reference({"model_type": "deberta-v2", "conv_kernel_size": 3})  # transformers builds it; symparams refuses


# -- property tests: random configurations, zero mismatches ---------------------------------------------------

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def sizes(draw):
    heads = draw(st.integers(1, 6))
    hidden = heads * draw(st.integers(1, 12))
    return dict(vocab_size=draw(st.integers(2, 2000)), hidden_size=hidden, num_attention_heads=heads,
                num_hidden_layers=draw(st.integers(1, 3)), intermediate_size=draw(st.integers(1, 3 * hidden)),
                num_labels=draw(st.integers(1, 9)))


@st.composite
def deberta_configs(draw):
    data = {"model_type": "deberta-v2", **sizes(draw), "pad_token_id": 0,
            "max_position_embeddings": draw(st.integers(1, 300)),
            "type_vocab_size": draw(st.integers(0, 3)), "position_biased_input": draw(st.booleans()),
            "relative_attention": draw(st.booleans()), "share_att_key": draw(st.booleans()),
            "position_buckets": draw(st.sampled_from([-1, 0, 1, 16, 256])),
            "max_relative_positions": draw(st.sampled_from([-1, 0, 5, 64])),
            "norm_rel_ebd": draw(st.sampled_from(["none", "layer_norm", "layer_norm|none"])),
            "legacy": draw(st.booleans()), "tie_word_embeddings": draw(st.booleans())}
    pos = draw(st.sampled_from([None, "p2c|c2p", "c2p", "p2c", ["c2p"], ["p2c", "c2p"], []]))
    if pos is not None:
        data["pos_att_type"] = pos
    if draw(st.booleans()):
        data["embedding_size"] = draw(st.integers(1, 40))
    return data


@st.composite
def mpnet_configs(draw):
    return {"model_type": "mpnet", **sizes(draw), "max_position_embeddings": draw(st.integers(2, 600)),
            "relative_attention_num_buckets": draw(st.integers(1, 64)), "tie_word_embeddings": draw(st.booleans())}


@st.composite
def modernbert_configs(draw):
    data = {"model_type": "modernbert", **sizes(draw), "tie_word_embeddings": draw(st.booleans()),
            **{k: draw(st.booleans()) for k in ("norm_bias", "attention_bias", "mlp_bias", "classifier_bias",
                                                "decoder_bias")}}
    data["pad_token_id"] = draw(st.integers(0, data["vocab_size"] - 1))
    data["global_attn_every_n_layers"] = draw(st.integers(1, 3))
    return data


@st.composite
def roberta_configs(draw):
    return {"model_type": draw(st.sampled_from(["xlm-roberta", "roberta"])), **sizes(draw),
            "max_position_embeddings": draw(st.integers(2, 600)), "type_vocab_size": draw(st.integers(1, 3)),
            "tie_word_embeddings": draw(st.booleans())}


@st.composite
def bert_configs(draw):
    return {"model_type": "bert", **sizes(draw), "max_position_embeddings": draw(st.integers(1, 600)),
            "type_vocab_size": draw(st.integers(1, 3))}


def family_heads(model_type):
    return st.sampled_from(heads_of(for_config_type(model_type).name))


@SETTINGS
@given(data=deberta_configs(), choice=st.data())
def test_deberta_random_configurations_match_transformers(data, choice):
    check(model(data, head=choice.draw(family_heads("deberta-v2"))), data)


@SETTINGS
@given(data=mpnet_configs(), choice=st.data())
def test_mpnet_random_configurations_match_transformers(data, choice):
    check(model(data, head=choice.draw(family_heads("mpnet"))), data)


@SETTINGS
@given(data=modernbert_configs(), choice=st.data())
def test_modernbert_random_configurations_match_transformers(data, choice):
    check(model(data, head=choice.draw(family_heads("modernbert"))), data)


@SETTINGS
@given(data=roberta_configs(), choice=st.data())
def test_xlm_roberta_and_roberta_random_configurations_match_transformers(data, choice):
    check(model(data, head=choice.draw(family_heads("roberta"))), data)


@SETTINGS
@given(data=bert_configs(), head=st.sampled_from(["causal-lm", "multiple-choice", "next-sentence"]))
def test_bert_added_heads_on_random_configurations_match_transformers(data, head):
    check(model(data, head=head), data)
