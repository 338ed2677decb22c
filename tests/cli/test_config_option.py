"""``--config PATH`` on the command line: count, prove and formula read a config.json; bad files are one line.

The expected figures are published totals or written out by hand (the same
files are compared with transformers in tests/families/test_config.py).
"""

import json

import pytest

from tests.reference import FIXTURES
from tests.reference.cli_runner import command

BERT_BASE = FIXTURES / "bert-base-uncased" / "config.json"
BART_BASE = FIXTURES / "facebook" / "bart-base" / "config.json"
OPUS = FIXTURES / "Helsinki-NLP" / "opus-mt-en-de" / "config.json"


def run(*args):
    """``python -m symparams ARGS`` as a process forked from one that imported the package (see
    :mod:`tests.reference.cli_runner`): status, stdout, stderr."""
    return command(*args)


def test_cli_count_config_json():
    code, out, err = run("count", "--config", BART_BASE, "--json")
    data = json.loads(out)
    assert code == 0 and err == ""
    assert data["model"] == "bart-base" and data["family"] == "bart" and data["head"] is None
    assert data["values"] == {"V": 50265, "P": 1024, "H": 768, "L": 6, "A": 12, "r": 4}  # C: no head, not used
    assert data["switches"] == {"tie": True, "split_layers": False, "split_heads": False, "split_ffn": False}
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
    assert out.splitlines()[0] == "4*H**2*L*(r + 3) + H*(2*L*(r + 12) + 2*P + V + 8)"
    _, out, _ = run("formula", "--config", OPUS)
    assert out.splitlines()[0] == "4*H**2*L*(r + 3) + H*(2*L*(r + 12) + 2*P + V)"


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
    ("remote-code", '{"model_type": "chatglm", "auto_map": {"AutoModel": "modeling_chatglm.ChatGLMModel"}}',
     "unknown model_type 'chatglm', a model with its own code (auto_map), which symparams does not run "
     "(symparams reads:"),
    ("missing", '{"hidden_size": 768}', "missing required key model_type"),
    ("type_number", '{"model_type": 7}', "key model_type must be a string, not 7"),
    ("string", '{"model_type": "bert", "hidden_size": "768"}', 'key hidden_size must be a whole number, not "768"'),
    ("bool", '{"model_type": "bert", "hidden_size": true}', "key hidden_size must be a whole number, not true"),
    ("float", '{"model_type": "bart", "d_model": 768.0}', "key d_model must be a whole number, not 768.0"),
    ("negative", '{"model_type": "bert", "num_hidden_layers": -2}', "key num_hidden_layers must be at least 1, not -2"),
    ("zero", '{"model_type": "marian", "vocab_size": 0}', "key vocab_size must be at least 1, not 0"),
    ("indivisible", '{"model_type": "bert", "num_attention_heads": 7}', "H=768 is not divisible by A=7"),
    ("tie", '{"model_type": "bart", "tie_word_embeddings": "no"}', 'key tie_word_embeddings must be true or false'),
    ("heads", '{"model_type": "bart", "decoder_attention_heads": 7}', "H=1024 is not divisible by A_d=7"),
    ("labels", '{"model_type": "bert", "id2label": []}', "key id2label must be a non-empty object"),
])
def test_cli_bad_config_is_one_line_exit_2_and_names_the_key(bad, name, text, needle):
    path = bad(name, text)
    code, out, err = run("count", "--config", path)
    assert code == 2 and out == ""
    assert needle in err and str(path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("args,needle", [
    (["count", "--config", FIXTURES], "fixtures/config.json: no such file"),
    (["count", "--config", FIXTURES / "no-such-model" / "config.json"], "no such file"),
    (["count", "bert-base", "--config", BERT_BASE], "not both"),
    (["count", "--config", BART_BASE, "--head", "masked-lm"], "unknown head 'masked-lm' for bart"),
    (["count", "--config", OPUS, "--head", "sequence-classification"], "unknown head 'sequence-classification'"),
    (["count", "--config", BERT_BASE, "--set", "nope=1"], "unknown key 'nope' for bert"),
    (["count", "--config", BERT_BASE, "--set", "pooler=maybe"], "switch pooler takes true or false"),
    (["count", "--config", BERT_BASE, "--set", "S=2", "--set", "E=3"], "symbol E is not used"),
    (["prove", "--config", FIXTURES / "no-such-model" / "config.json", "--json"], "no such file"),
    (["formula", "--config", FIXTURES], "fixtures/config.json: no such file"),
])
def test_cli_bad_paths_and_arguments_are_one_line_exit_2(args, needle):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_config_takes_the_folder_holding_config_json():
    code, out, err = run("count", "--config", BERT_BASE.parent, "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["total"] == 109_482_240 and json.loads(out)["model"] == "bert-base-uncased"


def test_a_checkpoint_that_differs_from_what_from_config_builds_says_so_in_one_line():
    # Flan-T5's checkpoint holds its own lm_head (tie_word_embeddings: false); transformers' from_config ties it
    # (tests/families/test_decoders.py builds both): the count follows the checkpoint, 32128 x 768 more
    code, out, err = run("count", "--config", str(FIXTURES / "google" / "flan-t5-base"))
    assert code == 0 and err == ""
    assert out.splitlines()[-2:] == [
        "counted: the base model, no task head; as saved (T5ForConditionalGeneration), with the seq2seq-lm head "
        "(--head seq2seq-lm): 247,577,856",
        "note: the seq2seq-lm head is counted untied, as the checkpoint holds it; transformers' from_config ties it "
        "to the shared embedding (V·H fewer)"]
    assert 247_577_856 - 32128 * 768 == 222_903_552
    code, out, _ = run("count", "--config", str(FIXTURES / "t5-base"))
    assert code == 0 and "note:" not in out
