"""config.json import: the shipped fixtures, configs saved by transformers 5, defaults, errors, the CLI.

The expected figures are published totals or written out by hand; the
transformers models are built on the meta device from the same config.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import transformers

from hf import assert_matches, build
from symparams import SymparamsError, model
from symparams.config import ConfigReader, from_dict, load
from symparams.symbols import C

FIXTURES = Path(__file__).resolve().parent / "fixtures"
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
    m = load(str(BERT_BASE))
    assert m.name == "bert-base-uncased" and m.count == 109_482_240
    assert_matches(m, hf(BERT_BASE, "BertModel"))


@pytest.mark.crosscheck
def test_bert_large_uncased_config_is_335_141_888():
    m = load(str(BERT_LARGE))
    assert m.count == 335_141_888
    assert_matches(m, hf(BERT_LARGE, "BertModel"))


@pytest.mark.crosscheck
def test_bart_base_config_is_139_420_416():
    m = load(str(BART_BASE))
    assert (m.count, m.trainable) == (139_420_416, 139_420_416)
    assert_matches(m, hf(BART_BASE, "BartModel"))


@pytest.mark.crosscheck
def test_opus_mt_en_de_config_is_74_410_496_with_73_886_208_trainable():
    m = load(str(OPUS))
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
    base, m = load(str(path)), load(str(path), head=head)
    assert m.count - base.count == extra
    module = hf(path, cls_name)
    assert_matches(m, module, strip=getattr(module, "base_model_prefix", "") + ".")


def test_the_preset_and_the_config_agree():
    for preset, path in (("bert-base", BERT_BASE), ("bert-large", BERT_LARGE), ("bart-base", BART_BASE),
                         ("opus-mt-en-de", OPUS)):
        assert model(preset).count == load(str(path)).count, preset


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
    m = load(str(tmp_path / "config.json"))
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(tmp_path))
    assert_matches(m, module)


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls_name", [("bert", "BertModel"), ("bart", "BartModel"),
                                                 ("marian", "MarianModel")])
def test_missing_keys_take_the_config_class_defaults(model_type, cls_name):
    m = from_dict({"model_type": model_type})
    assert_matches(m, hf({"model_type": model_type}, cls_name))


def test_irrelevant_and_nested_keys_are_ignored():
    data = json.loads(BART_BASE.read_text())
    data.update(dtype="bfloat16", rope_parameters={"rope_type": "default"}, text_config={"hidden_size": 3},
                layer_types=["full_attention"], architectures=None, some_future_key=[1, {"x": None}])
    assert from_dict(data).count == 139_420_416


def test_transformers_4_and_5_spellings_of_the_same_model_agree():
    four = json.loads(BERT_BASE.read_text())
    five = {k: v for k, v in four.items() if k not in ("torch_dtype", "gradient_checkpointing",
                                                       "position_embedding_type")}
    five.update(dtype="float32", transformers_version="5.24.0", tie_word_embeddings=True)
    assert from_dict(four).count == from_dict(five).count == 109_482_240


def test_labels_from_num_labels_or_id2label():
    cls = {"model_type": "bert"}
    assert from_dict(cls, "sequence-classification").values[C] == 2  # BertConfig's default
    with_ids = from_dict({**cls, "id2label": {"0": "a", "1": "b", "2": "c", "3": "d"}}, "token-classification")
    with_num = from_dict({**cls, "num_labels": 4}, "token-classification")
    assert with_ids.count == with_num.count == 109_482_240 - 590_592 + 768 * 4 + 4


@pytest.mark.crosscheck
def test_bert_refuses_what_it_does_not_model_rather_than_miscount():
    data = json.loads(BERT_BASE.read_text())
    untied = {**data, "tie_word_embeddings": False}
    # transformers really builds a bigger model: an own decoder weight V·H and an own bias V
    assert sum(p.numel() for p in hf(untied, "BertForMaskedLM").parameters()) == \
        from_dict(data, "masked-lm").count + 30522 * 768 + 30522
    with pytest.raises(SymparamsError, match="key tie_word_embeddings=false"):
        from_dict(untied, "masked-lm")
    assert from_dict(untied).count == 109_482_240  # the base model has no decoder to untie
    crossed = {**data, "is_decoder": True, "add_cross_attention": True}
    assert sum(p.numel() for p in hf(crossed, "BertModel").parameters()) > 109_482_240
    with pytest.raises(SymparamsError, match="key add_cross_attention=true"):
        from_dict(crossed)


def test_errors_in_values_name_the_file():
    with pytest.raises(SymparamsError, match=r"^my\.json: H=768 is not divisible by A=7"):
        from_dict({"model_type": "bert", "num_attention_heads": 7}, source="my.json")


def test_a_config_that_is_not_a_dict_is_a_one_line_error():
    with pytest.raises(SymparamsError, match="^cfg: a config must be a JSON object"):
        from_dict([("model_type", "bert")], source="cfg")


def test_model_reads_a_config_path_or_dict():
    assert model(str(OPUS)).count == 74_410_496
    assert model(json.loads(BART_BASE.read_text()), head="question-answering").count == 139_420_416 + 768 * 2 + 2


def test_reader_takes_the_first_key_present_and_skips_nulls():
    r = ConfigReader({"n_embd": None, "hidden_size": 64}, "c.json")
    assert r.int("n_embd", "hidden_size") == 64
    assert r.int("missing", default=None) is None
    with pytest.raises(SymparamsError, match="c.json: missing required key a / b"):
        r.int("a", "b")


# -- the command line ------------------------------------------------------

def run(*args):
    proc = subprocess.run([sys.executable, "-m", "symparams", *map(str, args)], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_count_config_json():
    code, out, err = run("count", "--config", BART_BASE, "--json")
    data = json.loads(out)
    assert code == 0 and err == ""
    assert data["model"] == "bart-base" and data["family"] == "bart" and data["head"] is None
    assert data["values"] == {"V": 50265, "P": 1024, "H": 768, "L": 6, "A": 12, "r": 4}  # C: no head, not used
    assert data["switches"] == {"tie": True, "split_layers": False}
    assert data["total"] == data["trainable"] == 139_420_416
    assert data["components"] == {"shared": 38_603_520, "encoder": 43_316_736, "decoder": 57_500_160}


def test_cli_count_config_with_head():
    _, out, _ = run("count", "--config", BART_BASE, "--head", "sequence-classification", "--json")
    data = json.loads(out)
    assert data["head"] == "sequence-classification" and data["values"]["C"] == 3
    assert data["total"] == 139_420_416 + 768 * 768 + 768 + 768 * 3 + 3


def test_cli_count_config_table_and_set_override():
    code, out, _ = run("count", "--config", OPUS)
    assert code == 0 and "opus-mt-en-de" in out and "74,410,496" in out and "73,886,208" in out
    _, out, _ = run("count", "--config", BERT_BASE, "--set", "L=24", "--set", "H=1024", "--set", "A=16",
                    "--set", "r=4", "--json")
    assert json.loads(out)["total"] == 335_141_888


def test_cli_prove_config_json():
    code, out, _ = run("prove", "--config", BART_BASE, "--json")
    data = json.loads(out)
    assert code == 0 and data["invariant"] is True and data["derivative"] == "0"
    assert set(data["witness"].values()) == {139_420_416} and "1" in data["witness"] and "768" in data["witness"]


def test_cli_formula_config_is_the_family_formula():
    _, out, _ = run("formula", "--config", BART_BASE)
    assert out.strip() == "4*H**2*L*(r + 3) + H*(2*L*(r + 12) + 2*P + V + 8)"
    _, out, _ = run("formula", "--config", OPUS)
    assert out.strip() == "4*H**2*L*(r + 3) + H*(2*L*(r + 12) + 2*P + V)"


@pytest.fixture
def bad(tmp_path):
    def write(name, text):
        path = tmp_path / name / "config.json"
        path.parent.mkdir()
        path.write_text(text)
        return path
    return write


@pytest.mark.parametrize("name,text,needle", [
    ("malformed", '{"model_type": "bert",', "malformed JSON (line 1"),
    ("array", '[1, 2]', "must hold a JSON object, not list"),
    ("unknown", '{"model_type": "gpt-9"}', "unknown model_type 'gpt-9' (symparams reads:"),
    ("missing", '{"hidden_size": 768}', "missing required key model_type"),
    ("type_number", '{"model_type": 7}', "key model_type must be a string, not 7"),
    ("string", '{"model_type": "bert", "hidden_size": "768"}', 'key hidden_size must be a whole number, not "768"'),
    ("bool", '{"model_type": "bert", "hidden_size": true}', "key hidden_size must be a whole number, not true"),
    ("float", '{"model_type": "bart", "d_model": 768.0}', "key d_model must be a whole number, not 768.0"),
    ("negative", '{"model_type": "bert", "num_hidden_layers": -2}', "key num_hidden_layers must be at least 1, not -2"),
    ("zero", '{"model_type": "marian", "vocab_size": 0}', "key vocab_size must be at least 1, not 0"),
    ("indivisible", '{"model_type": "bert", "num_attention_heads": 7}', "H=768 is not divisible by A=7"),
    ("tie", '{"model_type": "bart", "tie_word_embeddings": "no"}', 'key tie_word_embeddings must be true or false'),
    ("heads", '{"model_type": "bart", "decoder_attention_heads": 8}',
     "keys encoder_attention_heads=16 and decoder_attention_heads=8 differ"),
    ("labels", '{"model_type": "bert", "id2label": []}', "key id2label must be a non-empty object"),
])
def test_cli_bad_config_is_one_line_exit_2_and_names_the_key(bad, name, text, needle):
    path = bad(name, text)
    code, out, err = run("count", "--config", path)
    assert code == 2 and out == ""
    assert needle in err and str(path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("args,needle", [
    (["count", "--config", FIXTURES], "is a directory, not a config.json"),
    (["count", "--config", FIXTURES / "no-such-model" / "config.json"], "no such file"),
    (["count", "bert-base", "--config", BERT_BASE], "not both"),
    (["count", "--config", BART_BASE, "--head", "masked-lm"], "unknown head 'masked-lm' for bart"),
    (["count", "--config", OPUS, "--head", "sequence-classification"], "unknown head 'sequence-classification'"),
    (["count", "--config", BERT_BASE, "--set", "nope=1"], "unknown key 'nope' for bert"),
    (["count", "--config", BERT_BASE, "--set", "pooler=maybe"], "switch pooler takes true or false"),
    (["count", "--config", BERT_BASE, "--set", "S=2", "--set", "E=3"], "symbol E is not used"),
    (["prove", "--config", FIXTURES / "no-such-model" / "config.json", "--json"], "no such file"),
    (["formula", "--config", FIXTURES], "is a directory"),
])
def test_cli_bad_paths_and_arguments_are_one_line_exit_2(args, needle):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
