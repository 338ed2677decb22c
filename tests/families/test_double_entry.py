"""Double entry: a hand family's count of a config.json against the formula inferred from transformers builds.

A wrong term planted on either side (the inferred entry's data, the family's
Block tree) is caught with both figures named; a field that changes the
count and that the family never read is refused by name when the formulas
cannot vouch for the family; configurations the formulas were not fitted on
are not compared (and say why), so a family that is right is never refused.
"""

import copy
import dataclasses
import json

import pytest
import torch
import transformers

from symparams import SymparamsError, model
from symparams.core.blocks import linear
from symparams.core.symbols import H
from symparams.families import config, inferred
from tests.reference import FIXTURES
from tests.reference.hf import totals

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100}
QWEN3_MOE = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=128, moe_intermediate_size=32, num_experts=8, vocab_size=100)


@pytest.fixture
def plant(monkeypatch):
    """``plant(model_type, entries)``: the inferred data holds ``entries`` for the type (the inferred families are
    cached by their numbers, so the cache is emptied before and after: nothing planted leaks)."""
    def planted(model_type, entries):
        monkeypatch.setattr(inferred, "entries", lambda t: entries if t == model_type else None)
        inferred.family.cache_clear()

    yield planted
    inferred.family.cache_clear()


def transformers_count(data: dict, auto: str = "AutoModel") -> int:
    with torch.device("meta"):
        return totals(getattr(transformers, auto).from_config(transformers.AutoConfig.for_model(**data)))[0]


def test_a_fixture_is_counted_twice_and_both_counts_agree():
    m = model(str(FIXTURES / "meta-llama" / "Meta-Llama-3-8B" / "config.json"))
    record = m.to_dict()["double_entry"]
    assert record["against"] == "the formula inferred from transformers 5.24 meta-device builds"
    assert record["classes"] == {"LlamaModel": {"agrees": ["total", "trainable"]},
                                 "LlamaForCausalLM": {"agrees": ["total", "trainable"]}}
    moe = model(str(FIXTURES / "mistralai" / "Mixtral-8x7B-v0.1" / "config.json"), head="causal-lm")
    assert moe.double_entry["classes"] == {"MixtralForCausalLM": {"agrees": ["total", "trainable", "active"]}}


@pytest.mark.crosscheck
def test_a_wrong_term_planted_in_the_inferred_data_is_an_error_naming_both_figures(plant):
    right = transformers_count(LLAMA)
    assert model(LLAMA).count == right
    entries = copy.deepcopy(inferred.entries("llama"))
    norm = next(p for p in entries["base"]["parameters"] if p[0] == "norm.weight")
    norm[1] = 2  # the final norm twice: H parameters too many
    plant("llama", entries)
    with pytest.raises(SymparamsError) as err:
        model(LLAMA)
    assert str(err.value) == (
        f"config: symparams' llama family counts {right:,} parameters, {right:,} trainable, the formula inferred "
        f"from transformers 5.24 builds of LlamaModel counts {right + 64:,} parameters, {right + 64:,} trainable; "
        f"one of them misreads this config, so neither is printed")


@pytest.mark.crosscheck
def test_a_wrong_term_planted_in_a_family_tree_is_an_error_naming_both_figures(monkeypatch):
    right = transformers_count(LLAMA, "AutoModelForCausalLM")
    fam = config.family_for("llama", "config")

    def build(switches, head):
        tree = fam.build(switches, head)
        return dataclasses.replace(tree, children=(*tree.children, linear("planted", H, 1, bias=False)))

    planted = dataclasses.replace(fam, build=build)
    monkeypatch.setattr(config, "family_for", lambda *args, **kwargs: planted)
    with pytest.raises(SymparamsError, match=(
            rf"^config: symparams' llama family counts {right + 64:,} parameters, {right + 64:,} trainable with "
            rf"the causal-lm head, the formula inferred from transformers 5.24 builds of LlamaForCausalLM counts "
            rf"{right:,} parameters, {right:,} trainable; ")):
        model(LLAMA, head="causal-lm")


@pytest.mark.crosscheck
def test_the_qwen3_moe_misreading_is_caught_by_the_double_entry_alone(monkeypatch, tmp_path):
    transformers.AutoConfig.for_model("qwen3_moe", **QWEN3_MOE).save_pretrained(tmp_path)
    path = str(tmp_path / "config.json")
    right = transformers_count({"model_type": "qwen3_moe", **QWEN3_MOE})
    assert model(path).count == right
    monkeypatch.setattr(config.ConfigReader, "spellings", lambda self, key: (key,))  # the reader before spellings
    with pytest.raises(SymparamsError, match=rf"the formula inferred from transformers 5.24 builds of "
                                             rf"Qwen3MoeModel counts {right:,} parameters"):
        model(path)


def test_a_field_that_changes_the_count_and_that_the_family_never_read_is_refused_by_name(monkeypatch):
    # head_dim set: outside the inferred formula's fields, so nothing vouches for the family's count
    data = {"model_type": "qwen3_moe", **QWEN3_MOE, "num_local_experts": 8, "head_dim": 16}
    del data["num_experts"]
    assert model(data).double_entry["classes"]["Qwen3MoeModel"] == {
        "not_compared": "key head_dim is outside the inferred formula's fields (it may change shapes the formula "
                        "does not follow)"}
    monkeypatch.setattr(config.ConfigReader, "spellings", lambda self, key: (key,))  # reads num_experts only
    with pytest.raises(SymparamsError, match=r"^config: key num_local_experts=8 \(transformers' default: 128\) "
                                             r"changes the count of Qwen3MoeModel, and symparams' qwen3_moe "
                                             r"family does not read it$"):
        model(data)
    assert model({**data, "num_local_experts": 128}).count  # at the default the family's reading is right


def test_set_values_are_written_into_the_file_and_the_edited_file_is_compared(plant):
    data = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 100}
    m = model(data, H=128, L=3)
    assert m.count == model({**data, "n_embd": 128, "n_layer": 3}).count
    assert m.double_entry["of"] == "the config as read"
    assert m.double_entry["classes"]["GPT2Model"] == {"agrees": ["total", "trainable"]}
    assert model(data, H=128, r=2).double_entry["of"] == "the config as read, before --set"  # r names no field
    entries = copy.deepcopy(inferred.entries("gpt2"))
    entries["base"]["parameters"].append(["planted.weight", 1, ["H"]])
    plant("gpt2", entries)
    with pytest.raises(SymparamsError, match="^config with H=128, L=3: symparams' gpt2 family counts .* builds of "
                                             "GPT2Model counts"):
        model(data, H=128, L=3)  # the edited file is compared too


def test_configurations_the_formula_was_not_fitted_on_are_not_compared_and_say_why():
    electra = json.loads((FIXTURES / "google" / "electra-small-discriminator" / "config.json").read_text())
    electra["embedding_size"] = electra["hidden_size"]  # no embeddings_project in transformers then
    assert model(electra).double_entry["classes"]["ElectraModel"]["not_compared"].startswith(
        f"keys hidden_size and embedding_size are both {electra['hidden_size']}")
    qwen = model({"model_type": "qwen2_moe", "num_hidden_layers": 4, "mlp_only_layers": [1, 2]})
    assert qwen.double_entry["classes"]["Qwen2MoeModel"] == {
        "not_compared": "key mlp_only_layers is [1, 2]; the inferred formula holds only for its default []"}
    t5 = model({"model_type": "t5", "num_hidden_layers": 2}, head="seq2seq-lm")
    assert t5.double_entry["classes"]["T5ForConditionalGeneration"] == {
        "not_compared": "key num_hidden_layers is an alias, which transformers applies after deriving "
                        "num_decoder_layers from num_layers; the inferred reading does not follow that"}


def test_a_family_that_counts_the_checkpoint_on_purpose_is_not_compared_for_that_head():
    m = model(str(FIXTURES / "google" / "flan-t5-base" / "config.json"))
    assert m.double_entry["classes"]["T5Model"] == {"agrees": ["total", "trainable"]}
    assert m.double_entry["classes"]["T5ForConditionalGeneration"]["not_compared"].startswith(
        "the seq2seq-lm head is counted untied, as the checkpoint holds it")


def test_a_head_the_family_refuses_for_this_config_is_not_compared_and_the_base_count_stands():
    bert = {**json.loads((FIXTURES / "bert-base-uncased" / "config.json").read_text()), "tie_word_embeddings": False}
    m = model(bert)
    assert m.count == 109_482_240
    assert m.double_entry["classes"]["BertForMaskedLM"] == {
        "not_compared": "key tie_word_embeddings=false (an untied masked-LM decoder, with its own weight and bias) "
                        "is not modelled by symparams' bert family"}
