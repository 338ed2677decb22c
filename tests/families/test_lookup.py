"""model(): a Model from a preset or family name, a config.json path or folder, or a config dict."""

import json
from pathlib import Path

import pytest

from symparams import SymparamsError, model
from symparams.families import registry
from symparams.families.lookup import from_config

# bert-base by hand: embeddings, 12 encoder layers, pooler
EMB = (30522 + 512 + 2) * 768 + 2 * 768
ENC = 12 * (4 * (768 * 768 + 768) + 4 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 768)
POOL = 768 * 768 + 768
BERT_BASE = EMB + ENC + POOL


def write_config(folder: Path, **data) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps({"model_type": "bert", **data}))
    return path


def test_model_reads_a_config_path_a_folder_and_a_dict(tmp_path):
    path = write_config(tmp_path / "tiny", hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                        intermediate_size=1024)
    by_hand = ((30522 + 512 + 2) * 256 + 2 * 256 + 4 * (4 * (256 * 256 + 256) + 4 * 256 + 2 * 256 * 1024 + 1024 + 256)
               + 256 * 256 + 256)
    assert model(str(path)).count == by_hand
    assert model(path).count == by_hand  # a pathlib.Path
    assert model(str(path.parent)).count == by_hand  # the folder holding config.json
    assert model(json.loads(path.read_text())).count == by_hand
    assert from_config(str(path)).count == by_hand
    assert model(str(path)).name == "tiny"


def test_model_from_a_config_takes_keyword_overrides(tmp_path):
    path = write_config(tmp_path / "m")  # every key missing: BertConfig's defaults, i.e. bert-base
    assert model(str(path)).count == BERT_BASE == 109_482_240
    assert model(str(path), L=24).count == BERT_BASE + 12 * (ENC // 12)
    assert model(str(path), pooler=False).count == BERT_BASE - POOL
    assert from_config(str(path), "masked-lm", {"L": "24"}).count == \
        model(str(path), head="masked-lm", L=24).count == BERT_BASE + ENC - POOL + (768 * 768 + 768) + 2 * 768 + 30522


def test_model_from_a_missing_config_is_one_line(tmp_path):
    with pytest.raises(SymparamsError, match="no such file"):
        model(str(tmp_path / "nothing" / "config.json"))
    with pytest.raises(SymparamsError, match="takes a name, a config.json path or a dict"):
        model(42)
    with pytest.raises(SymparamsError, match="unknown model 'bert-bsae'"):
        model("bert-bsae")


def test_unknown_model_and_head():
    with pytest.raises(SymparamsError, match="unknown model 'gpt-9'"):
        model("gpt-9")
    with pytest.raises(SymparamsError, match="unknown head 'seq2seq-lm' for bert"):
        model("bert-base", head="seq2seq-lm")


def test_none_leaves_a_presets_value_free():
    m = model("bert-base", H=None, A=20)
    assert [s.name for s in m.free] == ["H"]
    assert m.subs(H=1280).count == model("bert-base", H=1280, A=20).count


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _family_fixtures() -> list[str]:
    """The hub ids of the shipped config.json files a hand-written family reads (the others, counted by the
    inferred formulas, have no preset)."""
    from symparams.families.registry import for_config_type

    return sorted(str(p.parent.relative_to(FIXTURES)) for p in FIXTURES.rglob("config.json")
                  if for_config_type(json.loads(p.read_text())["model_type"]) is not None)


@pytest.mark.parametrize("hub_id", _family_fixtures())
def test_a_checkpoints_hub_id_names_the_preset_its_config_describes(hub_id):
    """Each shipped config.json (written from the checkpoint's published values) of a type a family reads and the
    preset its hub id names are the same model, by the id with and without its owner."""
    from_file = model(str(FIXTURES / hub_id))
    for name in {hub_id, hub_id.rsplit("/", 1)[-1]}:
        from_name = model(name)
        assert from_name.count == from_file.count, name
        assert from_name.family is from_file.family


def test_names_in_any_case_and_with_their_owner():
    assert model("BERT-Base").name == model("google-bert/bert-base-uncased").name == "bert-base"
    # the published 8,030,261,248 less the untied LM head the base model leaves out
    assert model("Meta-Llama/Meta-Llama-3-8B").count == model("llama-3-8b").count == 8_030_261_248 - 128_256 * 4096
    assert model("LLAMA").family.name == "llama"


@pytest.mark.parametrize("name,suggestions", [
    ("bert-bsae", "did you mean bert-base, bart-base, roberta-base?"),
    ("gpt-9", "did you mean gptj, gpt2-xl, gpt2?"),
    ("lama-2-7b", "did you mean llama-2-7b"),
])
def test_an_unknown_name_suggests_the_closest_three(name, suggestions):
    with pytest.raises(SymparamsError, match=f"unknown model '{name}'; {suggestions}".replace("?", r"\?")):
        model(name)


def test_an_unknown_path_says_it_is_not_a_config_either():
    with pytest.raises(SymparamsError, match="unknown model './someone/nothing', nor a config.json or a folder"):
        model("./someone/nothing")


def test_every_config_type_is_read_by_the_module_the_registry_names_for_it():
    # so that `count --config` imports that one module (benchmarks/bench_cli.py times it)
    for fam in registry.all_families().values():
        for model_type in fam.config_types:
            owner = registry.module(registry.CONFIG_MODULES.get(model_type, model_type))
            assert owner is not None and fam in registry._families_in(owner), (model_type, fam.name)
    assert list(registry.MODULES[2:]) == sorted(registry.MODULES[2:])  # `symparams list`: the articles' two first
