"""BERT and the original Transformer against transformers on the meta device.

Every parameter tensor is compared by path (layers folded as ``*``), plus
the total and the trainable count.
"""

import pytest
import sympy as sp
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symparams import model
from symparams.families.bert import CLASSES, HEADS
from symparams.families.presets import all_presets
from tests.reference.hf import assert_matches, build

pytestmark = pytest.mark.crosscheck

HEAD_CLASSES = {head: cls for head, (cls, _) in CLASSES.items()}


def bert_config(m):
    v = {s.name: int(x) if x.is_Integer else x for s, x in m.values.items()}
    return transformers.BertConfig(
        vocab_size=v["V"], max_position_embeddings=v["P"], type_vocab_size=v["S"], hidden_size=v["H"],
        num_hidden_layers=v["L"], num_attention_heads=v["A"], intermediate_size=int(v["r"] * v["H"]),
        num_labels=v.get("C", 2))


def marian_config(m):
    v = {s.name: x for s, x in m.values.items()}
    inter = int(v["r"] * v["H"])
    return transformers.MarianConfig(
        vocab_size=int(v["V"]), max_position_embeddings=int(v["P"]), d_model=int(v["H"]),
        encoder_layers=int(v["L"]), decoder_layers=int(v["L"]), encoder_attention_heads=int(v["A"]),
        decoder_attention_heads=int(v["A"]), encoder_ffn_dim=inter, decoder_ffn_dim=inter,
        pad_token_id=0, decoder_start_token_id=0, eos_token_id=0, forced_eos_token_id=0)


def check_bert(m):
    config = bert_config(m)
    if m.head is None:
        module = build("BertModel", config) if m.switches["pooler"] else _bert_without_pooler(config)
        assert_matches(m, module)
    else:
        assert_matches(m, build(HEAD_CLASSES[m.head], config), strip="bert.")


def _bert_without_pooler(config):
    import torch

    with torch.device("meta"):
        return transformers.BertModel(config, add_pooling_layer=False)


@pytest.mark.parametrize("name", [p.name for p in all_presets().values() if p.reference == "BertModel"])
def test_bert_presets_match_bert_model(name):
    check_bert(model(name))


def test_bert_base_without_pooler_matches_bert_model_without_pooling_layer():
    m = model("bert-base", pooler=False)
    assert m.count == 109_482_240 - 590_592
    check_bert(m)


@pytest.mark.parametrize("head", list(HEADS))
def test_bert_base_heads_match_transformers_task_models(head):
    check_bert(model("bert-base", head=head))


@pytest.mark.parametrize("head", ["sequence-classification", "token-classification", "question-answering"])
def test_heads_sized_by_the_number_of_labels(head):
    m = model("bert-base", head=head, C=5)
    assert m.count - model("bert-base", head=head, C=2).count == 3 * (768 + 1)
    check_bert(m)


@pytest.mark.parametrize("name", [p.name for p in all_presets().values() if p.reference == "MarianModel"])
def test_transformer_presets_match_marian_model(name):
    m = model(name)
    assert_matches(m, build("MarianModel", marian_config(m)))


def test_bert_large_is_335_141_888_and_matches_bert_model():
    # 24·(12·1024² + 13·1024) + (30522 + 512 + 2 + 2)·1024 + 1024² + 1024
    m = model("bert-large")
    assert m.count == 24 * (12 * 1024**2 + 13 * 1024) + (30522 + 512 + 2 + 2) * 1024 + 1024**2 + 1024 == 335_141_888
    check_bert(m)


def test_transformer_base_is_63_606_784_with_63_082_496_trainable_and_matches_marian_model():
    # shared 37000·512 and two sinusoidal tables 2·512·512 (frozen); encoder layer 4·(512² + 512)
    # + (512·2048 + 2048) + (2048·512 + 512) + 2·2·512 = 3,152,384; a decoder layer adds cross-attention
    # 4·(512² + 512) and its LayerNorm 2·512: 4,204,032; the output layer is tied to the shared table
    m = model("transformer-base")
    layer = 4 * (512**2 + 512) + (512 * 2048 + 2048) + (2048 * 512 + 512) + 2 * 2 * 512
    assert (layer, layer + 4 * (512**2 + 512) + 2 * 512) == (3_152_384, 4_204_032)
    assert m.components == {"embeddings": 37000 * 512 + 2 * 512 * 512, "encoder": 6 * 3_152_384,
                            "decoder": 6 * 4_204_032, "output": 0}
    assert (m.count, m.trainable) == (63_606_784, 63_606_784 - 2 * 512 * 512) == (63_606_784, 63_082_496)
    assert_matches(m, build("MarianModel", marian_config(m)))


def test_transformer_at_marian_sizes_is_exactly_marian_model():
    m = model("transformer", V=58101, P=512, H=512, L=6, A=8, r=4)
    assert (m.count, m.trainable) == (74_410_496, 73_886_208)
    assert_matches(m, build("MarianModel", marian_config(m)))


# -- property tests: random configurations, zero mismatches -------------------

@st.composite
def sizes(draw, segments=True):
    heads = draw(st.integers(1, 16))
    head_dim = draw(st.integers(1, 64))
    hidden = heads * head_dim
    inter = draw(st.integers(1, 4 * hidden))
    values = dict(V=draw(st.integers(2, 60000)), P=draw(st.integers(1, 2048)), H=hidden,
                  L=draw(st.integers(1, 4)), A=heads, r=sp.Rational(inter, hidden))
    if segments:
        values["S"] = draw(st.integers(1, 8))
    return values


SETTINGS = settings(max_examples=200, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(values=sizes(), head=st.sampled_from([None, *HEADS]), labels=st.integers(1, 20))
def test_bert_random_configurations_match_transformers(values, head, labels):
    extra = {"C": labels} if head in ("sequence-classification", "token-classification", "question-answering") else {}
    check_bert(model("bert", head=head, **values, **extra))


@SETTINGS
@given(values=sizes(segments=False))
def test_transformer_random_configurations_match_marian(values):
    m = model("transformer", **values)
    assert_matches(m, build("MarianModel", marian_config(m)))
