"""BART and Marian against transformers on the meta device, read from config dicts.

Each case writes a config dict, reads it with :func:`symparams.model`
and builds the transformers model from the *same* dict (``from_dict`` of the
config class, as ``from_pretrained`` does); every parameter tensor, the total
and the trainable count must agree.
"""

import pytest
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import divisors

from symparams import SymparamsError, model
from symparams.core.symbols import A, A_d, H, L, L_d, V_d, r, r_d
from symparams.families import bart, marian
from tests.reference.hf import assert_matches, build

pytestmark = pytest.mark.crosscheck

CLASSES = {"bart": bart.CLASSES, "marian": marian.CLASSES}


def reference(data, head=None):
    config = transformers.CONFIG_MAPPING[data["model_type"]].from_dict(dict(data))
    return build(CLASSES[data["model_type"]][head][0], config)


def check(data, head=None):
    m = model(data, head=head)
    assert_matches(m, reference(data, head), strip="model." if head else None)
    return m


def small(model_type, **extra):
    data = dict(model_type=model_type, vocab_size=100, d_model=8, encoder_layers=1, decoder_layers=1,
                encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16,
                max_position_embeddings=10, pad_token_id=0)
    data.update(extra)
    return data


# -- published totals, and the same figures by hand --------------------------

def test_bart_base_is_139_420_416_and_matches_bart_model():
    # shared 50265·768; two position tables (1024 + 2)·768; two embedding LayerNorms 2·768;
    # encoder layer 4·(768² + 768) + (768·3072 + 3072) + (3072·768 + 768) + 2·2·768 = 7,087,872;
    # decoder layer adds cross-attention and its LayerNorm: 7,087,872 + 2,362,368 + 1,536 = 9,451,776
    by_hand = 50265 * 768 + 2 * 1026 * 768 + 2 * 2 * 768 + 6 * 7_087_872 + 6 * 9_451_776
    m = model("bart-base")
    assert m.count == by_hand == 139_420_416
    assert m.components == {"shared": 38_603_520, "encoder": 43_316_736, "decoder": 57_500_160}
    assert_matches(m, build("BartModel", transformers.BartConfig(
        vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
        decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072, max_position_embeddings=1024)))


def test_bart_large_is_406_291_456():
    # facebook/bart-large's config.json: V 50265, d_model 1024, 12 + 12 layers of 16 heads, FFN 4096, 1024 positions
    # (each table 2 rows longer); an encoder layer is 4 attention projections, 2 norms and the FFN, a decoder
    # layer one attention and one norm more
    attention, norm, ffn = 4 * (1024**2 + 1024), 2 * 1024, 2 * 1024 * 4096 + 4096 + 1024
    by_hand = 50265 * 1024 + 2 * 1026 * 1024 + 2 * norm + 12 * (attention + 2 * norm + ffn) \
        + 12 * (2 * attention + 3 * norm + ffn)
    m = model("bart-large")
    assert m.count == by_hand == 406_291_456
    assert_matches(m, build("BartModel", transformers.BartConfig(
        vocab_size=50265, d_model=1024, encoder_layers=12, decoder_layers=12, encoder_attention_heads=16,
        decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096, max_position_embeddings=1024)))


def test_distilbart_12_6_is_305_510_400_with_six_decoder_layers():
    m = model("distilbart-12-6")
    assert m.values[L_d] == 6 and m.count == 305_510_400
    # one decoder layer at H=1024: 3·(4·(1024² + 1024)) [self-attn, cross-attn, fc1 = 1024·4096 + 4096]
    # + (4096·1024 + 1024) [fc2] + 3·2·1024 [LayerNorms] = 16,796,672
    decoder_layer = 3 * 4 * (1024**2 + 1024) + 4096 * 1024 + 1024 + 3 * 2 * 1024
    assert m.count == model("bart-large", V=50264).count - 6 * decoder_layer
    assert decoder_layer == 16_796_672
    assert_matches(m, reference(dict(model_type="bart", vocab_size=50264, d_model=1024, encoder_layers=12,
                                     decoder_layers=6, encoder_attention_heads=16, decoder_attention_heads=16,
                                     encoder_ffn_dim=4096, decoder_ffn_dim=4096)))


def test_opus_mt_en_de_is_74_410_496_of_which_73_886_208_trainable():
    m = model("opus-mt-en-de")
    # the two sinusoidal tables 2·512·512 are registered but frozen
    assert (m.count, m.trainable) == (74_410_496, 73_886_208)
    assert m.count - m.trainable == 2 * 512 * 512


def test_bart_positions_have_two_extra_rows_per_stack():
    m = model("bart-base")
    for stack in ("encoder", "decoder"):
        assert m.evaluate(m.block(f"{stack}.embed_positions").count) == (1024 + 2) * 768


def test_final_logits_bias_is_a_buffer_not_a_parameter():
    for model_type, head in (("bart", "seq2seq-lm"), ("marian", "seq2seq-lm")):
        module = reference(small(model_type), head)
        assert "final_logits_bias" in dict(module.named_buffers())
        assert "final_logits_bias" not in dict(module.named_parameters())
        assert model(small(model_type), head=head).count == model(small(model_type)).count  # lm_head tied


@pytest.mark.parametrize("head", [None, "seq2seq-lm", "sequence-classification", "question-answering"])
@pytest.mark.parametrize("tie", [True, False])
def test_bart_heads_and_tying_match(head, tie):
    check(small("bart", tie_word_embeddings=tie), head)


def test_bart_classification_head_default_is_three_labels():
    m = model(small("bart"), head="sequence-classification")
    assert m.evaluate(m.block("head.classification_head.out_proj").count) == 8 * 3 + 3
    assert model(small("bart", id2label={"0": "a", "1": "b"}), head="sequence-classification").count == m.count - 9
    check(small("bart", num_labels=7), "sequence-classification")


@pytest.mark.parametrize("share", [True, False])
@pytest.mark.parametrize("tie", [True, False])
@pytest.mark.parametrize("decoder_vocab", [None, 77])
@pytest.mark.parametrize("head", [None, "seq2seq-lm"])
def test_marian_share_tie_and_decoder_vocab_match(share, tie, decoder_vocab, head):
    data = small("marian", share_encoder_decoder_embeddings=share, tie_word_embeddings=tie)
    if decoder_vocab:
        data["decoder_vocab_size"] = decoder_vocab
    check(data, head)


def test_marian_untied_shared_model_holds_three_tables():
    # transformers 5: tie_word_embeddings=false unties encoder and decoder from `shared` too
    tied = model(small("marian"))
    untied = model(small("marian", tie_word_embeddings=False, decoder_vocab_size=77))
    assert untied.count - tied.count == 100 * 8 + 77 * 8
    assert V_d in untied.tree.total.free_symbols


def test_marian_decoder_vocab_size_is_irrelevant_while_shared_and_tied():
    assert model(small("marian", decoder_vocab_size=77)).count == model(small("marian")).count


@pytest.mark.parametrize("key", ["decoder_attention_heads", "decoder_ffn_dim"])
@pytest.mark.parametrize("model_type", ["bart", "marian"])
@pytest.mark.parametrize("head", [None, "seq2seq-lm", "causal-lm"])
def test_decoder_heads_or_ffn_of_their_own_are_counted_exactly(model_type, key, head):
    data = small(model_type, **{key: 4 if key == "decoder_attention_heads" else 32})
    m = check(data, head)
    if key == "decoder_attention_heads":
        assert m.switches["split_heads"] and m.values[A_d] == 4 and A_d in m.symbols  # (it cancels, as A does)
    else:  # the decoder's FFN is 32 = r_d·H wide, the encoder's 16 = r·H
        assert m.switches["split_ffn"] and m.values[r_d] == 4
        assert m.values.get(r) == (None if head == "causal-lm" else 2)  # causal-lm: no encoder, r unused


def test_a_decoder_key_missing_takes_the_config_class_default_not_the_encoder_value():
    data = small("bart", encoder_attention_heads=4, encoder_ffn_dim=24)
    del data["decoder_attention_heads"], data["decoder_ffn_dim"]
    data["d_model"] = 16  # BartConfig's decoder defaults: 16 heads, FFN 4096
    m = check(data)
    assert (m.values[A], m.values[A_d], m.values[r_d]) == (4, 16, 256)


def test_decoder_heads_must_divide_the_hidden_size():
    with pytest.raises(SymparamsError, match="H=8 is not divisible by A_d=3") as err:
        model(small("bart", decoder_attention_heads=3))
    assert "\n" not in str(err.value)


def test_attribute_map_aliases_are_read_as_the_encoder_keys_and_two_values_are_refused():
    data = small("bart", num_hidden_layers=2, hidden_size=12, num_attention_heads=3, decoder_attention_heads=3)
    for key in ("encoder_layers", "d_model", "encoder_attention_heads"):
        del data[key]
    m = check(data)  # only the aliases: transformers stores them as the encoder's keys
    assert (m.values[L], m.values[H], m.values[A]) == (2, 12, 3)
    both = {**data, "encoder_layers": 3}
    assert transformers.BartConfig.from_dict(dict(both)).encoder_layers == 2  # transformers silently takes one
    with pytest.raises(SymparamsError, match=r"keys encoder_layers \(3\) and num_hidden_layers \(2\) name one "
                                             r"field of BartConfig with different values; keep one$"):
        model(both)
    assert model({**data, "encoder_layers": 2}).count == m.count  # the same value under both names


def test_padding_index_outside_the_vocabulary_is_refused():
    data = small("marian", vocab_size=100)
    del data["pad_token_id"]  # MarianConfig's default 58100 does not fit 100 rows
    with pytest.raises(Exception):
        reference(data)
    with pytest.raises(SymparamsError, match="pad_token_id=58100 is outside vocab_size=100"):
        model(data)
    check(small("marian", pad_token_id=None))  # null: no padding index


def test_scale_embedding_and_static_positions_do_not_change_counts():
    assert model(small("bart", scale_embedding=True)).count == model(small("bart")).count
    check(small("marian", scale_embedding=True, static_position_embeddings=False))


# -- property tests: random configurations, zero mismatches -------------------

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def stacks(draw, model_type):
    """A config dict with random sizes (the decoder's heads and FFN its own or the encoder's), written with the
    encoder keys or transformers' aliases."""
    heads = draw(st.integers(1, 8))
    hidden = heads * draw(st.integers(1, 24))
    decoder_heads = draw(st.one_of(st.just(heads), st.sampled_from(divisors(hidden)[:8])))
    ffn = draw(st.integers(1, 4 * hidden))
    decoder_ffn = draw(st.one_of(st.just(ffn), st.integers(1, 4 * hidden)))
    enc, dec = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    vocab = draw(st.integers(2, 3000))
    data = dict(model_type=model_type, vocab_size=vocab, encoder_layers=enc, decoder_layers=dec,
                decoder_attention_heads=decoder_heads, encoder_ffn_dim=ffn, decoder_ffn_dim=decoder_ffn,
                max_position_embeddings=draw(st.integers(1, 1100)),
                tie_word_embeddings=draw(st.booleans()))
    data["hidden_size" if draw(st.booleans()) else "d_model"] = hidden
    data["num_attention_heads" if draw(st.booleans()) else "encoder_attention_heads"] = heads
    if draw(st.booleans()):
        data["num_hidden_layers"] = enc
    return data


@SETTINGS
@given(data=stacks("bart"), head=st.sampled_from(list(CLASSES["bart"])), labels=st.integers(1, 9),
       how=st.sampled_from(["num_labels", "id2label", None]))
def test_bart_random_configurations_match_transformers(data, head, labels, how):
    data["pad_token_id"] = min(1, data["vocab_size"] - 1)
    if how == "num_labels":
        data["num_labels"] = labels
    elif how == "id2label":
        data["id2label"] = {str(i): f"L{i}" for i in range(labels)}
    check(data, head)


@SETTINGS
@given(data=stacks("marian"), head=st.sampled_from(list(CLASSES["marian"])), share=st.booleans(),
       decoder_vocab=st.one_of(st.none(), st.integers(2, 3000)))
def test_marian_random_configurations_match_transformers(data, head, share, decoder_vocab):
    data["share_encoder_decoder_embeddings"] = share
    if decoder_vocab is not None:
        data["decoder_vocab_size"] = decoder_vocab
    data["pad_token_id"] = min(data["vocab_size"], decoder_vocab or data["vocab_size"]) - 1
    data["decoder_start_token_id"] = data["pad_token_id"]
    shared_vocabulary = share and data["tie_word_embeddings"]
    if head == "causal-lm" and shared_vocabulary and (decoder_vocab or data["vocab_size"]) != data["vocab_size"]:
        with pytest.raises(SymparamsError, match="key decoder_vocab_size"):  # refused: see test_more_seq2seq.py
            model(data, head=head)
        return
    check(data, head)
