"""The class a config.json's ``architectures`` names: the head its checkpoint holds, counted beside the base model."""

import json

import pytest
import torch
import transformers

from symparams import model
from tests.reference import FIXTURES
from tests.reference.cli_runner import command

BERT = dict(model_type="bert", vocab_size=120, hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=96, max_position_embeddings=64, type_vocab_size=2)


def meta_count(class_name: str, **config) -> int:
    with torch.device("meta"):
        built = getattr(transformers, class_name)(transformers.BertConfig(**config))
    return sum(p.numel() for p in built.parameters())


def test_the_released_qwen_checkpoint_is_named_and_counted_beside_the_base_model():
    saved = model(FIXTURES / "Qwen" / "Qwen2.5-7B").to_dict()["saved_as"]
    # Qwen2.5-7B's model card: 7.61B; its checkpoint (Qwen2ForCausalLM, lm_head untied) holds 7,615,616,512
    assert saved == {"class": "Qwen2ForCausalLM", "head": "causal-lm", "total": 7_615_616_512}


@pytest.mark.crosscheck
@pytest.mark.parametrize("class_name,head", [("BertForSequenceClassification", "sequence-classification"),
                                             ("BertForMaskedLM", "masked-lm"), ("BertLMHeadModel", "causal-lm"),
                                             ("BertForPreTraining", "pretraining")])
def test_a_saved_class_is_the_head_transformers_builds_for_it(class_name, head):
    config = {**BERT, "num_labels": 3, "architectures": [class_name]}
    m = model(config)
    assert m.head is None and m.count == meta_count("BertModel", **BERT)  # the count stays the base model's
    saved = m.to_dict()["saved_as"]
    fields = {k: v for k, v in config.items() if k not in ("model_type", "architectures")}
    assert saved == {"class": class_name, "head": head, "total": meta_count(class_name, **fields)}


def test_a_class_not_counted_here_is_said_so_and_the_base_model_is_counted():
    config = dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=4, vocab_size=100, n_positions=32,
                  architectures=["GPT2DoubleHeadsModel"])
    assert model(config).to_dict()["saved_as"] == {"class": "GPT2DoubleHeadsModel", "head": None, "total": None}


@pytest.mark.parametrize("classes", [None, [], ["BertModel", "BertForMaskedLM"], [7], ""])
def test_no_single_class_named_means_nothing_said(classes):
    assert "saved_as" not in model({**BERT, "architectures": classes}).to_dict()


def test_count_names_the_saved_class_in_its_counted_line(tmp_path):
    code, out, err = command("count", "--config", str(FIXTURES / "Qwen" / "Qwen2.5-7B"))
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == ("counted: the base model, no task head; as saved (Qwen2ForCausalLM), with the "
                                    "causal-lm head (--head causal-lm): 7,615,616,512")
    code, out, _ = command("count", "--config", str(FIXTURES / "facebook" / "bart-base"))
    assert "counted: the base model, the class the config names (BartModel); with the seq2seq-lm head" in out
    hostile = tmp_path / "config.json"
    hostile.write_text(json.dumps({**BERT, "architectures": ["Bert\x1b[2JFor" + "X" * 200]}))
    code, out, err = command("count", "--config", str(hostile))
    note = out.splitlines()[-1]
    assert code == 0 and err == "" and "\x1b" not in out and len(note) < 160
    assert note.startswith("note: the config's architectures names Bert [2JFor") and note.endswith("..., a class "
                                                                                                   "not counted here")
