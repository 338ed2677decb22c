"""FLOPs and KV cache of the BERT-like encoders (BERT, ALBERT, RoBERTa, ELECTRA, DistilBERT, DeBERTa-v2, MPNet,
ModernBERT) against PyTorch's FlopCounterMode on tiny real transformers models.

Every family with every head (and the base model), and the switches that change what is multiplied, is
read from a config.json dict by :func:`symparams.model`; the same dict builds the transformers model on the
CPU with eager attention and random weights.  The forward pass and the forward + backward pass are counted
by ``torch.utils.flop_counter.FlopCounterMode`` and must equal ``m.flops(s, b)`` exactly.

- ``b`` is the number of sequences.  The multiple-choice heads read ``[batch, choices, s]`` and flatten it
  to ``[batch·choices, s]``: here one question with three choices (``b = 3``), then two (``b = 6``).
- The causal-lm heads (``BertLMHeadModel``, ``RobertaForCausalLM``, ``ElectraForCausalLM``) are built with
  ``is_decoder = true``, as they are meant to be (transformers warns otherwise): their self-attention is
  causal and caches K and V, A·(H/A) each, 2·H elements per token per layer; a forward pass with
  ``use_cache=True`` must leave exactly that (fp32: 4 bytes an element).  Every other model caches nothing.
- ModernBERT alternates global and local (sliding-window) layers; the sizes keep s = 7 and 12 below the
  window (``local_attention`` 128, ±64), and one case sets the window to 4 with s = 9 and 13: eager attention computes
  the full s × s square and masks it, so the count does not change.
- MPNet's relative buckets B are 32: transformers' ``compute_position_bias`` always asks for 32 buckets,
  so a smaller table fails there (the count itself is exact for any B).

The last tests write a preset of each family by hand from its published sizes.
"""

import pytest
import transformers

from symparams import model
from symparams.analysis.cache import cache_per_token
from symparams.core.symbols import H, L
from tests.reference import flops as ref
from tests.reference.more_families import config as reference_config

pytestmark = pytest.mark.crosscheck

CHOICES = 3
#: (s, b) of each comparison: two lengths and two batch sizes (a term in s² is not one in s), b a multiple of the
#: choices
RUNS = ((7, 3), (12, 6))

#: the transformers class of each head, written out rather than read from the families' own tables (a wrong entry
#: there would be mirrored here and pass)
CLASSES = {
    "bert": {None: "BertModel", "sequence-classification": "BertForSequenceClassification",
             "token-classification": "BertForTokenClassification", "question-answering": "BertForQuestionAnswering",
             "masked-lm": "BertForMaskedLM", "multiple-choice": "BertForMultipleChoice",
             "causal-lm": "BertLMHeadModel", "pretraining": "BertForPreTraining",
             "next-sentence": "BertForNextSentencePrediction"},
    "roberta": {None: "RobertaModel", "sequence-classification": "RobertaForSequenceClassification",
                "token-classification": "RobertaForTokenClassification",
                "question-answering": "RobertaForQuestionAnswering", "masked-lm": "RobertaForMaskedLM",
                "multiple-choice": "RobertaForMultipleChoice", "causal-lm": "RobertaForCausalLM"},
    "deberta-v2": {None: "DebertaV2Model", "sequence-classification": "DebertaV2ForSequenceClassification",
                   "token-classification": "DebertaV2ForTokenClassification",
                   "question-answering": "DebertaV2ForQuestionAnswering", "masked-lm": "DebertaV2ForMaskedLM",
                   "multiple-choice": "DebertaV2ForMultipleChoice"},
    "mpnet": {None: "MPNetModel", "sequence-classification": "MPNetForSequenceClassification",
              "token-classification": "MPNetForTokenClassification",
              "question-answering": "MPNetForQuestionAnswering", "masked-lm": "MPNetForMaskedLM",
              "multiple-choice": "MPNetForMultipleChoice"},
    "modernbert": {None: "ModernBertModel", "sequence-classification": "ModernBertForSequenceClassification",
                   "token-classification": "ModernBertForTokenClassification",
                   "question-answering": "ModernBertForQuestionAnswering", "masked-lm": "ModernBertForMaskedLM",
                   "multiple-choice": "ModernBertForMultipleChoice"},
    "distilbert": {None: "DistilBertModel", "sequence-classification": "DistilBertForSequenceClassification",
                   "token-classification": "DistilBertForTokenClassification",
                   "question-answering": "DistilBertForQuestionAnswering", "masked-lm": "DistilBertForMaskedLM",
                   "multiple-choice": "DistilBertForMultipleChoice"},
    "electra": {None: "ElectraModel", "sequence-classification": "ElectraForSequenceClassification",
                "token-classification": "ElectraForTokenClassification",
                "question-answering": "ElectraForQuestionAnswering", "masked-lm": "ElectraForMaskedLM",
                "causal-lm": "ElectraForCausalLM", "pretraining": "ElectraForPreTraining",
                "multiple-choice": "ElectraForMultipleChoice"},
    "albert": {None: "AlbertModel", "sequence-classification": "AlbertForSequenceClassification",
               "token-classification": "AlbertForTokenClassification",
               "question-answering": "AlbertForQuestionAnswering", "masked-lm": "AlbertForMaskedLM",
               "pretraining": "AlbertForPreTraining", "multiple-choice": "AlbertForMultipleChoice"},
}

#: tiny config.json dicts (transformers' keys) of the families written by hand
COMMON = dict(vocab_size=100, max_position_embeddings=40)
TINY = {
    "bert": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, type_vocab_size=2),
    "roberta": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                    type_vocab_size=1, pad_token_id=1),
    "distilbert": dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64),
    "electra": dict(embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=64),
    # three layers through two groups of two distinct layers: group 0 runs twice, group 1 once
    "albert": dict(embedding_size=16, hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                   intermediate_size=64, num_hidden_groups=2, inner_group_num=2),
}

#: variants that change what is multiplied (or how often)
VARIANTS = {
    "bert": [{}],  # an untied BERT decoder is refused (from_config)
    "roberta": [{}, {"tie_word_embeddings": False}],
    "distilbert": [{}, {"sinusoidal_pos_embds": True}],
    "electra": [{}, {"embedding_size": 32}],  # E = H: no embeddings_project
    "albert": [{}, {"num_hidden_groups": 1, "inner_group_num": 1, "num_hidden_layers": 2}],
}


def labels(head):
    """num_labels: 2 for question answering (start, end), 3 where the head is sized by it."""
    return 2 if head == "question-answering" else 3


def hand_cases():
    for family, tiny in TINY.items():
        for variant in VARIANTS[family]:
            for head in CLASSES[family]:
                data = {"model_type": family, **COMMON, **tiny, **variant, "num_labels": labels(head)}
                if head == "causal-lm":
                    data["is_decoder"] = True
                yield pytest.param(data, head, id=f"{family}-{head}-{'-'.join(variant) or 'default'}")


DEBERTA = dict(V=100, H=32, L=2, A=4, r=2, B=6)
DEBERTA_SWITCHES = [
    {},  # deberta-v3: relative, share_att_key, c2p and p2c
    {"share_att_key": False},  # pos_key_proj and pos_query_proj, on the table only
    {"share_att_key": False, "c2p": False},
    {"p2c": False},  # query_proj still projects the table (forward) but nothing uses it (no backward)
    {"c2p": False, "p2c": False},
    {"share_att_key": False, "c2p": False, "p2c": False},
    {"relative": False},
    {"positions": True, "segments": True, "project": True, "rel_norm": False},
]
MODERNBERT_SWITCHES = [
    {},
    {"norm_bias": True, "attention_bias": True, "mlp_bias": True, "classifier_bias": True, "decoder_bias": False,
     "tie": False},
]


def with_label_count(head, values):
    return {**values, "C": labels(head)} if head in ("sequence-classification", "token-classification",
                                                     "question-answering") else values


def built_cases():
    """Families whose config the reference writes from a symparams model (tests/reference/more_families.py)."""
    for head in CLASSES["deberta-v2"]:
        for switches in DEBERTA_SWITCHES:
            values = dict(DEBERTA)
            for switch, symbol, value in (("positions", "P", 40), ("segments", "S", 2), ("project", "E", 16)):
                if switches.get(switch):
                    values[symbol] = value
            if switches.get("relative") is False:
                del values["B"]
            m = model("deberta_v2", head=head, **with_label_count(head, values), **switches)
            yield pytest.param(reference_config(m), head, id=f"deberta_v2-{head}-{'-'.join(switches) or 'default'}")
    for switches in ({"legacy": False}, {"tie": False}):
        m = model("deberta_v2", head="masked-lm", **DEBERTA, **switches)
        yield pytest.param(reference_config(m), "masked-lm", id=f"deberta_v2-masked-lm-{'-'.join(switches)}")
    for head in CLASSES["mpnet"]:
        m = model("mpnet", head=head, **with_label_count(head, dict(V=100, H=32, L=2, A=4, r=2, B=32, P=40)))
        yield pytest.param(reference_config(m), head, id=f"mpnet-{head}")
    for head in CLASSES["modernbert"]:
        for switches in MODERNBERT_SWITCHES:
            # four layers: global, local, local, global
            m = model("modernbert", head=head, **with_label_count(head, dict(V=100, H=32, L=4, A=4, F=48)),
                      **switches)
            yield pytest.param(reference_config(m), head,
                               id=f"modernbert-{head}-{'-'.join(switches) or 'default'}")


def check(data, head, runs=RUNS):
    """FlopCounterMode's FLOPs of the tiny model of ``data`` equal ours at each ``(s, b)`` of ``runs`` (forward and
    training at the first, forward at the others), and its cache's bytes at the first."""
    m = model(dict(data), head=head)
    config = transformers.AutoConfig.for_model(**data)
    module = ref.real(CLASSES[data["model_type"]][head], config)
    for i, (seq, batch) in enumerate(runs):
        ids = ref.token_ids(data["vocab_size"], seq, batch)
        if head == "multiple-choice":
            ids = ids.reshape(batch // CHOICES, CHOICES, seq)  # b = batch·choices sequences
        f = m.flops(s=seq, b=batch)
        if i == 0:
            assert (f.forward, f.training) == ref.counted(module, dict(input_ids=ids)), f.by_kind
        else:  # the forward pass alone: the first run checked the backward pass
            assert f.forward == ref.forward_counted(module, dict(input_ids=ids)), (seq, batch, f.by_kind)
    seq, batch = runs[0]
    own, cross = cache_per_token(m.tree)
    assert cross == 0
    if head == "causal-lm":
        assert own == 2 * H * L
        inputs = dict(input_ids=ref.token_ids(data["vocab_size"], seq, batch))
        assert ref.cache_bytes(module, inputs) == (4 * seq * batch * int(m.evaluate(own)), 0)
    else:
        assert own == 0
    return m


@pytest.mark.parametrize("data,head", list(hand_cases()))
def test_bert_albert_roberta_electra_distilbert_match_the_flop_counter(data, head):
    check(data, head)


@pytest.mark.parametrize("data,head", list(built_cases()))
def test_deberta_mpnet_modernbert_match_the_flop_counter(data, head):
    check(data, head)


@pytest.mark.parametrize("head", [None, "masked-lm", "sequence-classification"])
def test_modernbert_local_layers_multiply_the_whole_square_in_eager(head):
    # a window of 4 (±2) shorter than s = 9: eager computes every score and masks those outside it
    m = model("modernbert", head=head, **with_label_count(head, dict(V=100, H=32, L=4, A=4, F=48)))
    data = {**reference_config(m), "local_attention": 4}
    check(data, head, runs=((9, 3), (13, 6)))


# -- presets by hand ----------------------------------------------------------------------------------------------
# Per layer, a BERT-like encoder multiplies 4·H² (Q, K, V, output) and 2·r·H² = 8·H² (the FFN, r = 4) weights
# on every position, and two s × s products of width H (QKᵀ over A heads of H/A, then softmax(·)·V): 2·2·s²·H
# per sequence.  A linear map costs 2·weights per position; training is 3 × forward.


def attention(s, h):
    return 2 * 2 * s * s * h


def test_bert_base_masked_lm_by_hand():
    s, h, layers, vocab = 128, 768, 12, 30522
    f = model("bert-base", head="masked-lm").flops(s=s)
    # no pooler; the transform H·H and the tied decoder H·V on every position
    assert f.forward == 2 * s * (layers * 12 * h * h + h * h + h * vocab) + layers * attention(s, h)
    assert f.training == 3 * f.forward


def test_bert_base_causal_lm_caches_keys_and_values_and_is_causal():
    s, h, layers = 128, 768, 12
    m = model("bert-base", head="causal-lm")
    assert m.evaluate(cache_per_token(m.tree)[0]) == 2 * h * layers  # 18,432 elements per token
    full, causal = m.flops(s=s).forward, m.flops(s=s, causal=True).forward
    assert full - causal == layers * 2 * 2 * (s * s - s * (s + 1) // 2) * h
    masked = model("bert-base", head="masked-lm")
    assert masked.flops(s=s, causal=True).forward == masked.flops(s=s).forward  # an encoder: the whole square


def test_bert_base_multiple_choice_by_hand():
    s, h, layers, choices = 128, 768, 12, 4
    f = model("bert-base", head="multiple-choice").flops(s=s, b=choices)  # one question, four choices
    # the pooler H·H and the classifier H·1 on the first token of each of the four sequences
    assert f.forward == choices * (2 * s * layers * 12 * h * h + 2 * (h * h + h) + layers * attention(s, h))


def test_roberta_base_sequence_classification_by_hand():
    s, h, layers, labels_ = 128, 768, 12, 2
    f = model("roberta-base", head="sequence-classification").flops(s=s)
    # no pooler; the classification head (dense H·H, out_proj H·C) on the first token only
    assert f.forward == 2 * s * layers * 12 * h * h + 2 * (h * h + h * labels_) + layers * attention(s, h)


def test_albert_base_v2_by_hand():
    s, e, h, layers = 128, 128, 768, 12
    f = model("albert-base-v2").flops(s=s)
    # embedding_hidden_mapping_in E·H, the one shared layer's 12·H² run L = 12 times, the pooler H·H on one token
    assert f.forward == 2 * s * (e * h + layers * 12 * h * h) + 2 * h * h + layers * attention(s, h)
    # the same weights run twice as often in 24 layers: the count stays, the FLOPs of the layers double
    deeper = model("albert-base-v2", L=24)
    assert deeper.count == model("albert-base-v2").count
    assert deeper.flops(s=s).forward - f.forward == 12 * (2 * s * 12 * h * h + attention(s, h))


def test_distilbert_base_by_hand():
    s, h, layers = 128, 768, 6
    assert model("distilbert-base").flops(s=s).forward == 2 * s * layers * 12 * h * h + layers * attention(s, h)


def test_electra_small_by_hand():
    s, e, h, layers = 128, 128, 256, 12
    f = model("electra-small").flops(s=s)
    assert f.forward == 2 * s * (e * h + layers * 12 * h * h) + layers * attention(s, h)


def test_deberta_v3_base_by_hand():
    s, h, layers, buckets = 128, 768, 12, 256
    f = model("deberta-v3-base").flops(s=s)
    per_layer = (2 * s * 12 * h * h + attention(s, h)
                 + 2 * 2 * (2 * buckets) * h * h  # key_proj and query_proj on the 2B-row table
                 + 2 * 2 * s * (2 * buckets) * h)  # c2p Q·pos_Kᵀ and p2c K·pos_Qᵀ, s × 2B of width H each
    assert f.forward == layers * per_layer
    assert f.training == 3 * f.forward


def test_deberta_v3_base_without_p2c_projects_the_table_queries_but_does_not_train_them():
    s, h, layers, buckets = 128, 768, 12, 256
    both = model("deberta-v3-base").flops(s=s)
    c2p = model("deberta-v3-base", p2c=False).flops(s=s)
    assert both.forward - c2p.forward == layers * 2 * s * 2 * buckets * h  # p2c's product K·pos_Qᵀ only
    table_queries = layers * 2 * 2 * buckets * h * h
    assert c2p.training == 3 * c2p.forward - 2 * table_queries


def test_mpnet_base_by_hand():
    s, h, layers = 128, 768, 12
    f = model("mpnet-base").flops(s=s)
    # the relative bias is a table lookup added to the scores: no matmul
    assert f.forward == 2 * s * layers * 12 * h * h + 2 * h * h + layers * attention(s, h)


def test_modernbert_base_by_hand():
    s, h, layers, ffn = 128, 768, 22, 1152
    f = model("modernbert-base").flops(s=s)
    # Wqkv 3·H², Wo H², Wi H·2F (gate and up), Wo F·H; global and local layers alike under eager attention
    assert f.forward == layers * (2 * s * (4 * h * h + 3 * ffn * h) + attention(s, h))


@pytest.mark.parametrize("name", ["bert", "albert", "roberta", "electra", "distilbert", "deberta_v2", "mpnet",
                                  "modernbert"])
def test_only_a_causal_lm_caches(name):
    fam = model(name).family
    for head in (None, *fam.heads):
        own, cross = cache_per_token(model(name, head=head).tree)
        assert (own, cross) == ((2 * H * L, 0) if head == "causal-lm" else (0, 0)), head
