"""config.json import: the shipped fixtures, configs saved by transformers 5, defaults, errors.

The expected figures are published totals or written out by hand; the
transformers models are built on the meta device from the same config.
"""

import json
import re
from pathlib import Path

import pytest
import torch
import transformers

from symparams import SymparamsError, model
from symparams.core.symbols import A, C
from symparams.families.config import ConfigReader, read, settings
from symparams.families.lookup import from_config
from symparams.families.registry import family
from tests.reference import FIXTURES
from tests.reference.hf import assert_matches, build
BERT_BASE = FIXTURES / "bert-base-uncased" / "config.json"
BERT_LARGE = FIXTURES / "bert-large-uncased" / "config.json"
BART_BASE = FIXTURES / "facebook" / "bart-base" / "config.json"
OPUS = FIXTURES / "Helsinki-NLP" / "opus-mt-en-de" / "config.json"


def hf(path_or_data, cls_name):
    data = json.loads(Path(path_or_data).read_text()) if not isinstance(path_or_data, dict) else path_or_data
    config = transformers.CONFIG_MAPPING[data["model_type"]].from_dict(dict(data))
    return build(cls_name, config)


# -- the fixtures: published totals, per parameter against transformers ------

@pytest.mark.crosscheck
def test_bert_base_uncased_config_is_109_482_240():
    m = from_config(str(BERT_BASE))
    assert m.name == "bert-base-uncased" and m.count == 109_482_240
    assert_matches(m, hf(BERT_BASE, "BertModel"))


@pytest.mark.crosscheck
def test_bert_large_uncased_config_is_335_141_888():
    m = from_config(str(BERT_LARGE))
    assert m.count == 335_141_888
    assert_matches(m, hf(BERT_LARGE, "BertModel"))


@pytest.mark.crosscheck
def test_bart_base_config_is_139_420_416():
    m = from_config(str(BART_BASE))
    assert (m.count, m.trainable) == (139_420_416, 139_420_416)
    assert_matches(m, hf(BART_BASE, "BartModel"))


@pytest.mark.crosscheck
def test_opus_mt_en_de_config_is_74_410_496_with_73_886_208_trainable():
    m = from_config(str(OPUS))
    assert (m.count, m.trainable) == (74_410_496, 73_886_208)
    assert_matches(m, hf(OPUS, "MarianModel"))


@pytest.mark.crosscheck
@pytest.mark.parametrize("path,head,cls_name,extra", [
    (BERT_BASE, "masked-lm", "BertForMaskedLM", 768 * 768 + 768 + 2 * 768 + 30522 - 590_592),
    (BERT_BASE, "sequence-classification", "BertForSequenceClassification", 768 * 2 + 2),
    (BART_BASE, "seq2seq-lm", "BartForConditionalGeneration", 0),  # lm_head tied, final_logits_bias a buffer
    (BART_BASE, "sequence-classification", "BartForSequenceClassification", 768 * 768 + 768 + 768 * 3 + 3),
    (BART_BASE, "question-answering", "BartForQuestionAnswering", 768 * 2 + 2),
    (OPUS, "seq2seq-lm", "MarianMTModel", 0),
])
def test_heads_on_fixtures_match_transformers_task_models(path, head, cls_name, extra):
    base, m = from_config(str(path)), from_config(str(path), head=head)
    assert m.count - base.count == extra
    module = hf(path, cls_name)
    assert_matches(m, module, strip=getattr(module, "base_model_prefix", "") + ".")


def test_the_preset_and_the_config_agree():
    for preset, path in (("bert-base", BERT_BASE), ("bert-large", BERT_LARGE), ("bart-base", BART_BASE),
                         ("opus-mt-en-de", OPUS)):
        assert model(preset).count == from_config(str(path)).count, preset


# -- configs as transformers 5 saves them; defaults; ignored keys -----------

@pytest.mark.crosscheck
@pytest.mark.parametrize("cls_name,kwargs", [
    ("BertConfig", dict(hidden_size=96, num_hidden_layers=3, num_attention_heads=6, intermediate_size=200,
                        vocab_size=1000, type_vocab_size=3, max_position_embeddings=64)),
    ("BartConfig", dict(d_model=48, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=100, decoder_ffn_dim=100, vocab_size=500,
                        max_position_embeddings=40, tie_word_embeddings=False)),
    ("MarianConfig", dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                          decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=300,
                          decoder_vocab_size=200, pad_token_id=199, decoder_start_token_id=199,
                          share_encoder_decoder_embeddings=False, max_position_embeddings=30)),
])
def test_configs_saved_by_transformers_5_read_exactly(tmp_path, cls_name, kwargs):
    config = getattr(transformers, cls_name)(**kwargs)
    config.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["transformers_version"].startswith("5.")
    m = from_config(str(tmp_path / "config.json"))
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(tmp_path))
    assert_matches(m, module)


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls_name", [("bert", "BertModel"), ("bart", "BartModel"),
                                                 ("marian", "MarianModel")])
def test_missing_keys_take_the_config_class_defaults(model_type, cls_name):
    m = model({"model_type": model_type})
    assert_matches(m, hf({"model_type": model_type}, cls_name))


def test_irrelevant_and_nested_keys_are_ignored():
    data = json.loads(BART_BASE.read_text())
    data.update(dtype="bfloat16", rope_parameters={"rope_type": "default"}, text_config={"hidden_size": 3},
                layer_types=["full_attention"], architectures=None, some_future_key=[1, {"x": None}])
    assert model(data).count == 139_420_416


def test_transformers_4_and_5_spellings_of_the_same_model_agree():
    four = json.loads(BERT_BASE.read_text())
    five = {k: v for k, v in four.items() if k not in ("torch_dtype", "gradient_checkpointing",
                                                       "position_embedding_type")}
    five.update(dtype="float32", transformers_version="5.24.0", tie_word_embeddings=True)
    assert model(four).count == model(five).count == 109_482_240


def test_labels_from_num_labels_or_id2label():
    cls = {"model_type": "bert"}
    assert model(cls, head="sequence-classification").values[C] == 2  # BertConfig's default
    with_ids = model({**cls, "id2label": {"0": "a", "1": "b", "2": "c", "3": "d"}}, head="token-classification")
    with_num = model({**cls, "num_labels": 4}, head="token-classification")
    assert with_ids.count == with_num.count == 109_482_240 - 590_592 + 768 * 4 + 4


@pytest.mark.crosscheck
def test_bert_refuses_what_it_does_not_model_rather_than_miscount():
    data = json.loads(BERT_BASE.read_text())
    untied = {**data, "tie_word_embeddings": False}
    # transformers really builds a bigger model: an own decoder weight V·H and an own bias V
    assert sum(p.numel() for p in hf(untied, "BertForMaskedLM").parameters()) == \
        model(data, head="masked-lm").count + 30522 * 768 + 30522
    with pytest.raises(SymparamsError, match="key tie_word_embeddings=false"):
        model(untied, head="masked-lm")
    assert model(untied).count == 109_482_240  # the base model has no decoder to untie
    crossed = {**data, "is_decoder": True, "add_cross_attention": True}
    # ... and with cross-attention in each of the 12 layers: Q K V and output 4·(768² + 768), LayerNorm 2·768
    assert sum(p.numel() for p in hf(crossed, "BertModel").parameters()) == \
        109_482_240 + 12 * (4 * (768 * 768 + 768) + 2 * 768) == 137_849_088
    with pytest.raises(SymparamsError, match="key add_cross_attention=true"):
        model(crossed)


def test_errors_in_values_name_the_file(tmp_path):
    path = tmp_path / "my.json"
    path.write_text(json.dumps({"model_type": "bert", "num_attention_heads": 7}))
    with pytest.raises(SymparamsError, match=rf"^{re.escape(str(path))}: H=768 is not divisible by A=7"):
        from_config(str(path))
    with pytest.raises(SymparamsError, match=r"^config: H=768 is not divisible by A=7"):  # a dict has no file
        model({"model_type": "bert", "num_attention_heads": 7})


def test_a_config_that_is_not_a_dict_is_a_one_line_error():
    with pytest.raises(SymparamsError, match=r"^cfg: a config must be a JSON object \(a dict\), not list"):
        settings([("model_type", "bert")], source="cfg")


def test_settings_say_what_the_config_holds_without_building_a_model():
    """L=3 is written into the file's encoder_layers: its decoder_layers (6) stay, so the decoder gets L_d."""
    s = settings(read(str(BART_BASE)), "question-answering", {"L": "3", "r": "2"}, source=str(BART_BASE))
    assert s.family is family("bart") and s.head == "question-answering" and s.name == "bart-base"
    assert (s.values["L"], s.values["L_d"], s.values["H"]) == (3, 6, 768)
    assert s.switches == {"tie": True, "split_layers": True, "split_heads": False, "split_ffn": False}
    assert s.values["r"] == "2" and "r" not in s.optional  # a value for no field is the family's; it must be used


def test_model_reads_a_config_path_or_dict():
    assert model(str(OPUS)).count == 74_410_496
    # a dict is named by the checkpoint it came from, else its type, never by the folder the caller runs in
    assert model({"model_type": "gpt2", "_name_or_path": "openai-community/gpt2"}).name == "openai-community/gpt2"
    assert model({"model_type": "bert"}).name == "bert"
    assert model(json.loads(BART_BASE.read_text()), head="question-answering").count == 139_420_416 + 768 * 2 + 2


def test_reader_takes_the_first_key_present_and_skips_nulls():
    r = ConfigReader({"n_embd": None, "hidden_size": 64}, "c.json")
    assert r.int("n_embd", "hidden_size") == 64
    assert r.int("missing", default=None) is None
    with pytest.raises(SymparamsError, match="c.json: missing required key a / b"):
        r.int("a", "b")


def test_a_llama_config_without_a_head_count_reads_transformers_default_heads():
    from tests.reference.hf import build, totals

    data = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
            "vocab_size": 100}  # no num_attention_heads: LlamaConfig's default, 32 (64 / 32 = 2 wide)
    m = model(dict(data))
    built = build("LlamaModel", transformers.LlamaConfig(**{k: v for k, v in data.items() if k != "model_type"}))
    assert built.config.num_attention_heads == 32
    assert (m.count, int(m.values[A])) == (totals(built)[0], 32)
