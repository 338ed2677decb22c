"""RoBERTa, DistilBERT, ELECTRA and ALBERT against transformers on the meta device.

Every model is read from a config dict with :func:`symparams.model`
(the fixtures, random configurations) and the same dict builds the
transformers model (``AutoConfig.for_model``); every parameter tensor is
compared by path (layers folded as ``*``), plus the total and the trainable
count.
"""

import json
import subprocess
import sys

import pytest
import sympy as sp
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symparams import SymparamsError, model
from symparams.core.symbols import A, H
from symparams.families.lookup import from_config
from symparams.families.registry import all_families
from tests.reference import FIXTURES
from tests.reference.hf import assert_matches, build

pytestmark = pytest.mark.crosscheck

FAMILY_NAMES = ("roberta", "distilbert", "electra", "albert")

CLASSES = {
    "roberta": {
        None: "RobertaModel",
        "sequence-classification": "RobertaForSequenceClassification",
        "token-classification": "RobertaForTokenClassification",
        "question-answering": "RobertaForQuestionAnswering",
        "masked-lm": "RobertaForMaskedLM",
        "causal-lm": "RobertaForCausalLM",
        "multiple-choice": "RobertaForMultipleChoice",
    },
    "distilbert": {
        None: "DistilBertModel",
        "sequence-classification": "DistilBertForSequenceClassification",
        "token-classification": "DistilBertForTokenClassification",
        "question-answering": "DistilBertForQuestionAnswering",
        "masked-lm": "DistilBertForMaskedLM",
        "multiple-choice": "DistilBertForMultipleChoice",
    },
    "electra": {
        None: "ElectraModel",
        "sequence-classification": "ElectraForSequenceClassification",
        "token-classification": "ElectraForTokenClassification",
        "question-answering": "ElectraForQuestionAnswering",
        "masked-lm": "ElectraForMaskedLM",
        "causal-lm": "ElectraForCausalLM",
        "pretraining": "ElectraForPreTraining",
        "multiple-choice": "ElectraForMultipleChoice",
    },
    "albert": {
        None: "AlbertModel",
        "sequence-classification": "AlbertForSequenceClassification",
        "token-classification": "AlbertForTokenClassification",
        "question-answering": "AlbertForQuestionAnswering",
        "masked-lm": "AlbertForMaskedLM",
        "pretraining": "AlbertForPreTraining",
        "multiple-choice": "AlbertForMultipleChoice",
    },
}

FIXTURE_PATHS = {
    "roberta-base": "roberta",
    "distilbert-base-uncased": "distilbert",
    "google/electra-small-discriminator": "electra",
    "albert-base-v2": "albert",
    "albert-xxlarge-v2": "albert",
}


def fixture(name):
    return FIXTURES / name / "config.json"


def reference(data, head=None, **kwargs):
    """The transformers model for ``head`` built from the same config dict, on the meta device."""
    config = transformers.AutoConfig.for_model(**data)
    if kwargs:  # e.g. add_pooling_layer=False
        with torch.device("meta"):
            return getattr(transformers, CLASSES[data["model_type"]][head])(config, **kwargs)
    return build(CLASSES[data["model_type"]][head], config)


def check(data, head=None, overrides=None, module=None):
    """Our count of ``data`` (with ``head``) equals transformers', tensor by tensor."""
    m = model(data, head=head, **(overrides or {}))
    module = reference(data, head) if module is None else module
    assert_matches(m, module, strip=None if head is None else data["model_type"] + ".")
    return m


def test_every_family_reads_its_model_type_and_has_the_heads_transformers_has():
    for name in FAMILY_NAMES:
        fam = all_families()[name]
        assert fam.config_types[0] == name  # (roberta also reads xlm-roberta: tests/families/test_more_encoders.py)
        assert set(fam.heads) == set(CLASSES[name]) - {None}


# -- fixtures: the published config.json files, every head --------------------

@pytest.mark.parametrize("name,head", [(n, h) for n, fam in FIXTURE_PATHS.items() for h in CLASSES[fam]])
def test_fixture_matches_transformers_for_every_head(name, head):
    data = json.loads(fixture(name).read_text())
    assert from_config(str(fixture(name)), head).count == check(data, head).count


@pytest.mark.parametrize("name", ["roberta-base", "albert-base-v2"])
def test_fixture_without_pooler_matches_add_pooling_layer_false(name):
    data = json.loads(fixture(name).read_text())
    check(data, overrides={"pooler": "false"}, module=reference(data, None, add_pooling_layer=False))


@pytest.mark.parametrize("name", list(FIXTURE_PATHS))
def test_count_config_json_on_the_command_line(name):
    path = fixture(name)
    proc = subprocess.run([sys.executable, "-m", "symparams", "count", "--config", str(path), "--json"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    module = reference(json.loads(path.read_text()))
    assert (data["total"], data["trainable"]) == (sum(p.numel() for p in module.parameters()),) * 2
    assert data["family"] == FIXTURE_PATHS[name] and data["model"] == path.parent.name


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_missing_keys_take_the_transformers_config_class_defaults(name):
    data = {"model_type": name}
    for head in CLASSES[name]:
        check(data, head)


@pytest.mark.parametrize("preset,family", [
    ("roberta-base", "roberta"), ("roberta-large", "roberta"), ("distilroberta-base", "roberta"),
    ("distilbert-base", "distilbert"), ("electra-small", "electra"), ("electra-base", "electra"),
    ("electra-large", "electra"), ("albert-base-v2", "albert"), ("albert-large-v2", "albert"),
    ("albert-xxlarge-v2", "albert"),
])
def test_presets_match_transformers_with_every_head(preset, family):
    v = {s.name: x for s, x in model(preset).values.items()}
    data = {"model_type": family, "vocab_size": int(v["V"]), "max_position_embeddings": int(v["P"]),
            "hidden_size": int(v["H"]), "num_attention_heads": int(v["A"]),
            "intermediate_size": int(v["r"] * v["H"])}
    if family == "distilbert":
        data["n_layers"] = int(v["L"])
    else:
        data["type_vocab_size"] = int(v["S"])
        data["embedding_size"] = int(v.get("E", v["H"]))
        data["num_hidden_layers"] = int(v.get("L", 12))
    for head in CLASSES[family]:
        assert model(preset, head=head).count == check(data, head).count


# -- published totals, each derived here by hand ------------------------------

def encoder_layer(h, inter):
    """One BERT-style layer: Q K V and attention output (4·(h² + h)), two LayerNorms, the FFN."""
    return 4 * (h * h + h) + 2 * 2 * h + (h * inter + inter) + (inter * h + h)


def test_roberta_base_published_total():
    # RoBERTa paper / HF model card: 125M; exactly (50265 + 514 + 1)·768 + 2·768 embeddings,
    # 12 layers, pooler 768² + 768.
    expected = (50265 + 514 + 1) * 768 + 2 * 768 + 12 * encoder_layer(768, 3072) + 768 * 768 + 768
    assert expected == 124_645_632
    assert from_config(str(fixture("roberta-base"))).count == 124_645_632


def test_distilbert_base_uncased_published_total():
    # Sanh et al. 2019: 66M; (30522 + 512)·768 + 2·768 embeddings, 6 layers, no pooler.
    expected = (30522 + 512) * 768 + 2 * 768 + 6 * encoder_layer(768, 3072)
    assert expected == 66_362_880
    assert from_config(str(fixture("distilbert-base-uncased"))).count == 66_362_880


def test_albert_base_v2_published_total():
    # Lan et al. 2019: 12M; (30000 + 512 + 2)·128 + 2·128 embeddings, mapping 128·768 + 768,
    # ONE shared layer, pooler.
    expected = (30000 + 512 + 2) * 128 + 2 * 128 + 128 * 768 + 768 + encoder_layer(768, 3072) + 768 * 768 + 768
    assert expected == 11_683_584
    assert from_config(str(fixture("albert-base-v2"))).count == 11_683_584


def test_albert_xxlarge_v2_published_total():
    # Lan et al. 2019: 235M for xxlarge (their count; HF's AlbertModel holds 222,595,584):
    # the same embeddings, mapping 128·4096 + 4096, one shared layer, pooler 4096² + 4096.
    expected = ((30000 + 512 + 2) * 128 + 2 * 128 + 128 * 4096 + 4096 + encoder_layer(4096, 16384)
                + 4096 * 4096 + 4096)
    assert expected == 222_595_584
    assert from_config(str(fixture("albert-xxlarge-v2"))).count == 222_595_584


def test_electra_small_discriminator_published_total():
    # Clark et al. 2020: 14M; (30522 + 512 + 2)·128 + 2·128 embeddings, projection 128·256 + 256,
    # 12 layers of width 256, no pooler.
    expected = (30522 + 512 + 2) * 128 + 2 * 128 + 128 * 256 + 256 + 12 * encoder_layer(256, 1024)
    assert expected == 13_483_008
    assert from_config(str(fixture("google/electra-small-discriminator"))).count == 13_483_008


# -- structure the families must get right --------------------------------------

def test_roberta_sequence_classification_head_replaces_the_pooler():
    m = from_config(str(fixture("roberta-base")), "sequence-classification")
    assert m.components["pooler"] == 0
    assert m.count == 124_645_632 - (768 * 768 + 768) + (768 * 768 + 768) + (768 * 2 + 2)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_untied_lm_head_matches_transformers(name):
    data = {"model_type": name, "tie_word_embeddings": False, "vocab_size": 97, "hidden_size": 24,
            "num_attention_heads": 4, "intermediate_size": 40, "num_hidden_layers": 2, "embedding_size": 8,
            "dim": 24, "n_heads": 4, "hidden_dim": 40, "n_layers": 2}
    tied = model({**data, "tie_word_embeddings": True}, head="masked-lm")
    untied = check(data, "masked-lm")
    # the decoder gets its own V × width weight: ELECTRA and ALBERT decode from the embedding width E = 8,
    # RoBERTa and DistilBERT from the hidden width 24; RoBERTa's and ALBERT's decoders share the head's bias
    # V only while tied, so untied they hold their own bias too (as transformers builds them, checked above)
    extra = {"roberta": 97 * 24 + 97, "distilbert": 97 * 24, "electra": 97 * 8, "albert": 97 * 8 + 97}[name]
    assert untied.count - tied.count == extra


def test_distilbert_sinusoidal_table_is_a_trainable_parameter_in_transformers():
    data = {**json.loads(fixture("distilbert-base-uncased").read_text()), "sinusoidal_pos_embds": True}
    m = check(data)
    assert m.switches["sinusoidal"] is True
    assert m.trainable == m.count == 66_362_880


def test_distilbert_reads_the_attribute_map_names():
    data = {"model_type": "distilbert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3,
            "hidden_dim": 100}
    m = check(data)
    assert {s.name: int(v) for s, v in m.values.items() if s.name in "HAL"} == {"H": 64, "A": 4, "L": 3}


def test_electra_with_embedding_size_equal_to_hidden_size_has_no_projection():
    data = {"model_type": "electra", "embedding_size": 256, "hidden_size": 256}
    m = check(data)
    assert m.switches["project"] is False and m.components["embeddings_project"] == 0


@pytest.mark.parametrize("groups,inner", [(1, 1), (2, 1), (1, 3), (3, 2)])
def test_albert_layer_groups_are_distinct_copies(groups, inner):
    data = {**json.loads(fixture("albert-base-v2").read_text()), "num_hidden_groups": groups,
            "inner_group_num": inner}
    m = check(data, "pretraining")
    one_layer = from_config(str(fixture("albert-base-v2")), "pretraining")
    assert m.count == one_layer.count + (groups * inner - 1) * encoder_layer(768, 3072)


def test_albert_count_does_not_depend_on_the_number_of_layers():
    data = json.loads(fixture("albert-base-v2").read_text())
    assert check({**data, "num_hidden_layers": 48}).count == 11_683_584


@pytest.mark.parametrize("preset,family", [
    ("distilbert-base", "distilbert"), ("electra-small", "electra"), ("electra-base", "electra"),
    ("albert-base-v2", "albert"), ("albert-xxlarge-v2", "albert"),
])
def test_multiple_choice_head_adds_what_transformers_builds(preset, family):
    # DistilBERT: pre_classifier H·H + H, classifier H + 1; ELECTRA: sequence_summary.summary H·H + H,
    # classifier H + 1; ALBERT: classifier H + 1 on the pooler the base model already has
    h = int(model(preset).values[H])
    extra = {"distilbert": h * h + h + h + 1, "electra": h * h + h + h + 1, "albert": h + 1}[family]
    assert model(preset, head="multiple-choice").count == model(preset).count + extra


@pytest.mark.parametrize("key,value", [("summary_use_proj", False), ("summary_proj_to_labels", True),
                                       ("summary_type", "attn")])
def test_electra_multiple_choice_refuses_other_sequence_summaries(key, value):
    data = {"model_type": "electra", key: value}
    model(data)  # the key shapes only the multiple-choice head
    with pytest.raises(SymparamsError, match=f"key {key}=") as err:
        model(data, head="multiple-choice")
    assert "\n" not in str(err.value)


def test_electra_summary_keys_change_what_transformers_builds():
    # why they are refused: transformers builds a different sequence_summary (or none) for each
    plain = sum(p.numel() for p in reference({"model_type": "electra"}, "multiple-choice").parameters())
    unprojected = reference({"model_type": "electra", "summary_use_proj": False}, "multiple-choice")
    to_labels = reference({"model_type": "electra", "summary_proj_to_labels": True, "num_labels": 3},
                          "multiple-choice")
    assert sum(p.numel() for p in unprojected.parameters()) == plain - (256 * 256 + 256)
    assert sum(p.numel() for p in to_labels.parameters()) == plain - (256 * 256 + 256) + (256 * 3 + 3)


def test_albert_sop_classifier_is_sized_by_num_labels():
    data = {**json.loads(fixture("albert-base-v2").read_text()), "num_labels": 5}
    check(data, "pretraining")


# -- the prover ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["roberta", "distilbert", "electra", "albert", "roberta-base", "distilbert-base",
                                  "electra-small", "electra-base", "albert-base-v2", "albert-xxlarge-v2"])
def test_every_encoder_is_invariant_in_the_head_count(name):
    m = model(name)
    p = m.prove()
    assert p.invariant and p.derivative == 0 and p.dependence == 0
    assert A in p.written.free_symbols and A not in p.closed_form.free_symbols
    assert [c.latex for c in p.conditions] == [r"A \mid H"]
    if m.free:  # a family without values: nothing to substitute
        assert p.witness == {}
    else:  # a preset: every divisor of H is an admissible head count, and each gives the model's own total
        assert sorted(p.witness) == sp.divisors(int(m.values[H]))
        assert set(p.witness.values()) == {m.count}


@pytest.mark.parametrize("name", list(FIXTURE_PATHS))
def test_fixtures_are_invariant_with_a_witness_for_every_divisor(name):
    m = from_config(str(fixture(name)), "pretraining" if "albert" in name else None)
    p = m.prove()
    assert p.invariant and set(p.witness.values()) == {m.count}
    assert sorted(p.witness) == sp.divisors(int(m.values[H]))
    assert p.counterexample is None


# -- bad input: one line naming the key ---------------------------------------

@pytest.mark.parametrize("data,message", [
    ({"model_type": "roberta", "hidden_size": "768"}, "key hidden_size must be a whole number"),
    ({"model_type": "roberta", "tie_word_embeddings": "yes"}, "key tie_word_embeddings must be true or false"),
    ({"model_type": "roberta", "add_cross_attention": True}, "key add_cross_attention=true"),
    ({"model_type": "roberta", "num_attention_heads": 7}, "H=768 is not divisible by A=7"),
    ({"model_type": "distilbert", "dim": 768.0}, "key dim must be a whole number"),
    ({"model_type": "distilbert", "n_layers": 0}, "key n_layers must be at least 1"),
    ({"model_type": "distilbert", "sinusoidal_pos_embds": "no"}, "key sinusoidal_pos_embds must be true or false"),
    ({"model_type": "electra", "embedding_size": -1}, "key embedding_size must be at least 1"),
    ({"model_type": "electra", "add_cross_attention": True}, "key add_cross_attention=true"),
    ({"model_type": "electra", "intermediate_size": 1000, "hidden_size": 256, "num_attention_heads": 3},
     "H=256 is not divisible by A=3"),
    ({"model_type": "albert", "num_hidden_groups": 0}, "key num_hidden_groups must be at least 1"),
    ({"model_type": "albert", "inner_group_num": "2"}, "key inner_group_num must be a whole number"),
    ({"model_type": "albert", "num_hidden_layers": True}, "key num_hidden_layers must be a whole number"),
    ({"model_type": "albert", "id2label": []}, "key id2label must be a non-empty object"),
])
def test_bad_config_values_are_one_line_errors(data, message):
    with pytest.raises(SymparamsError, match=message) as err:
        model(data, head="sequence-classification")
    assert "\n" not in str(err.value)


def test_distilbert_question_answering_needs_two_labels_as_in_transformers():
    data = {"model_type": "distilbert", "num_labels": 3}
    with pytest.raises(ValueError, match="num_labels should be 2"):
        reference(data, "question-answering")
    with pytest.raises(SymparamsError, match="key num_labels must be 2 for DistilBertForQuestionAnswering") as err:
        model(data, head="question-answering")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name,kwargs,message", [
    ("electra-small", {"H": 128}, "E=128 equals H=128: transformers builds no embeddings_project"),
    ("albert-base-v2", {"hidden_groups": "two"}, "switch hidden_groups takes a positive whole number"),
    ("albert-base-v2", {"inner_groups": 0}, "switch inner_groups takes a positive whole number"),
    ("distilbert-base", {"S": 2}, "symbol S is not used by distilbert-base"),
])
def test_bad_values_and_switches_are_one_line_errors(name, kwargs, message):
    with pytest.raises(SymparamsError, match=message) as err:
        model(name, **kwargs)
    assert "\n" not in str(err.value)


def test_bad_config_on_the_command_line_exits_2_with_one_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "albert", "embedding_size": "128"}))
    proc = subprocess.run([sys.executable, "-m", "symparams", "count", "--config", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0 and "embedding_size" in proc.stderr


# -- property tests: random configurations, zero mismatches -------------------

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def encoder_configs(draw, model_type):
    """A random config.json of ``model_type`` (HF keys), and a head."""
    heads = draw(st.integers(1, 8))
    hidden = heads * draw(st.integers(1, 24))
    inter = draw(st.integers(1, 4 * hidden))
    layers = draw(st.integers(1, 3))
    head = draw(st.sampled_from([None, *all_families()[model_type].heads]))
    data = {"model_type": model_type, "vocab_size": draw(st.integers(2, 3000)),
            "max_position_embeddings": draw(st.integers(2, 600)),
            "tie_word_embeddings": draw(st.booleans())}
    if model_type == "distilbert":
        alias = draw(st.booleans())  # DistilBertConfig also takes BERT's names (its attribute_map)
        data.update({("hidden_size" if alias else "dim"): hidden,
                     ("num_attention_heads" if alias else "n_heads"): heads,
                     ("num_hidden_layers" if alias else "n_layers"): layers,
                     "hidden_dim": inter, "sinusoidal_pos_embds": draw(st.booleans())})
    else:
        data.update(hidden_size=hidden, num_attention_heads=heads, num_hidden_layers=layers,
                    intermediate_size=inter, type_vocab_size=draw(st.integers(1, 4)))
    if model_type == "electra":
        data["embedding_size"] = draw(st.one_of(st.just(hidden), st.integers(1, 48)))
    if model_type == "albert":
        data.update(embedding_size=draw(st.integers(1, 48)), num_hidden_groups=draw(st.integers(1, 3)),
                    inner_group_num=draw(st.integers(1, 3)))
    labels = 2 if (model_type, head) == ("distilbert", "question-answering") else draw(st.integers(1, 12))
    if draw(st.booleans()):
        data["num_labels"] = labels
    else:
        data["id2label"] = {str(i): f"LABEL_{i}" for i in range(labels)}
    return data, head


@pytest.mark.parametrize("family", FAMILY_NAMES)
@SETTINGS
@given(data=st.data())
def test_random_configurations_match_transformers(family, data):
    check(*data.draw(encoder_configs(family), label="config, head"))
