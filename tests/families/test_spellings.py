"""Config fields under every name transformers accepts: one answer for transformers 5's spelling and the hub's.

For every model_type a hand-written family reads, its fixture (or, with
none, the config class's defaults) is read as the hub writes it, as
``save_pretrained`` writes it under transformers 5 (stored names), and,
with every field that has another name tripled, in both spellings; each
count is compared with the model transformers builds from the same config
on the meta device.  The spellings data itself is regenerated from the
installed transformers and compared with the shipped file.
"""

import importlib.util
import json
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest
import torch
import transformers

from symparams import SymparamsError, model
from symparams.families import config, fields
from symparams.families.registry import for_config_type
from tests.reference import FIXTURES, ROOT
from tests.reference.hf import totals

TYPES = fields.types()
SPELLED = [t for t in TYPES if fields.of(t).groups]


def _first_fixtures() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(FIXTURES.rglob("config.json")):
        out.setdefault(json.loads(path.read_text())["model_type"], path)
    return out


HUB = _first_fixtures()


def _saved(config_object) -> dict:
    """What ``save_pretrained`` writes for a config."""
    with tempfile.TemporaryDirectory() as folder:
        config_object.save_pretrained(folder)
        return json.loads((Path(folder) / "config.json").read_text())


def _meta_totals(config_object) -> tuple[int, int]:
    with torch.device("meta"):
        return totals(transformers.AutoModel.from_config(config_object))


def _renamed(saved: dict, model_type: str) -> dict:
    """The config with each field that has another name under that other name (the hub's older spelling)."""
    out = dict(saved)
    for stored, names in fields.of(model_type).groups.items():
        if stored in out:
            out[names[1]] = out.pop(stored)
    return out


@lru_cache(maxsize=None)
def forms(model_type: str) -> dict:
    """The hub's config, the saved one and its transformers count; with every field that has another name
    tripled: the saved one, its renamed twin and their count (one meta build each, shared by the tests)."""
    hub = json.loads(HUB[model_type].read_text()) if model_type in HUB else {"model_type": model_type}
    cls = transformers.CONFIG_MAPPING[model_type]
    config_object = cls.from_dict(dict(hub))
    saved = _saved(config_object)
    out = {"hub": hub, "saved": saved, "totals": _meta_totals(config_object)}
    groups = fields.of(model_type).groups
    if groups:
        tripled = {k: 3 * v if k in groups and isinstance(v, int) and not isinstance(v, bool) else v
                   for k, v in saved.items()}
        tripled_object = cls.from_dict(dict(tripled))
        renamed = _renamed(tripled, model_type)
        assert cls.from_dict(dict(renamed)).to_dict() == tripled_object.to_dict()  # transformers reads both alike
        out.update(tripled=tripled, renamed=renamed, tripled_totals=_meta_totals(tripled_object))
    return out


def counted(data: dict) -> tuple[int, int]:
    m = model(data)
    return m.count, m.trainable


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type", TYPES)
def test_the_hub_config_and_the_one_transformers_5_saves_both_count_what_transformers_builds(model_type):
    f = forms(model_type)
    assert f["saved"]["transformers_version"].startswith("5.")
    assert counted(f["hub"]) == counted(f["saved"]) == f["totals"]


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type", SPELLED)
def test_every_name_of_a_field_is_read_as_that_field(model_type):
    f = forms(model_type)
    groups = fields.of(model_type).groups
    changed = [k for k in groups if k in f["saved"] and f["tripled"][k] != f["saved"][k]]
    assert changed  # at least one field moved away from the fixture's value, under a name the class accepts
    for stored in changed:
        assert f["tripled"][stored] != fields.of(model_type).default(stored, None)  # the default would be wrong
    assert set(f["renamed"]) != set(f["tripled"])
    assert counted(f["tripled"]) == counted(f["renamed"]) == f["tripled_totals"] != f["totals"]


@pytest.mark.parametrize("model_type", SPELLED)
def test_two_names_of_one_field_with_two_values_are_one_line_naming_both(model_type):
    stored, names = next(iter(fields.of(model_type).groups.items()))
    data = {"model_type": model_type, stored: 96, names[1]: 64}
    with pytest.raises(SymparamsError) as err:
        model(data)
    message = str(err.value)
    assert f"keys {stored} (96) and {names[1]} (64) name one field of {fields.of(model_type).config_class}" in message
    assert "\n" not in message


QWEN3_MOE = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=128, moe_intermediate_size=32, num_experts=8, vocab_size=100, head_dim=16)


@pytest.mark.crosscheck
@pytest.mark.parametrize("head,auto", [(None, "AutoModel"), ("causal-lm", "AutoModelForCausalLM")])
def test_a_qwen3_moe_config_saved_by_transformers_5_counts_its_own_8_experts_not_the_default_128(tmp_path, head,
                                                                                                 auto):
    config_object = transformers.AutoConfig.for_model("qwen3_moe", **QWEN3_MOE)
    config_object.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["num_local_experts"] == 8 and "num_experts" not in saved  # the canonical name only
    with torch.device("meta"):
        expected = totals(getattr(transformers, auto).from_config(config_object))
    m = model(str(tmp_path / "config.json"), head=head)
    assert (m.count, m.trainable) == expected
    assert m.values[next(s for s in m.values if s.name == "N_e")] == 8


def test_the_reader_finds_a_field_under_either_name_and_remembers_what_it_was_asked():
    qwen = fields.of("qwen3_moe")
    for data in ({"num_local_experts": 8}, {"num_experts": 8}, {"num_experts": 8, "num_local_experts": 8}):
        reader = config.ConfigReader(data, "c.json", fields=qwen)
        assert reader.int("num_experts", default=128) == reader.int("num_local_experts", default=128) == 8
        assert reader.asked == {"num_local_experts"}
    assert config.ConfigReader({"num_local_experts": 8}, "c.json").int("num_experts", default=128) == 128


def test_a_legacy_keyword_the_config_class_renames_is_a_spelling():
    assert fields.of("falcon").spellings("hidden_size") == ("hidden_size", "n_embed")
    assert fields.of("bloom").stored("n_embed") == "hidden_size"
    assert transformers.FalconConfig(n_embed=128, num_attention_heads=4).hidden_size == 128


@pytest.mark.parametrize("model_type", TYPES)
def test_each_family_default_is_its_config_class_default(model_type):
    """A missing key takes the default of the family's transformers config class (a field the class computes
    from others, or leaves null for the model to compute, is the family's to compute)."""
    fam, spelled = for_config_type(model_type), fields.of(model_type)
    asked = []

    class Recording(config.ConfigReader):
        def _find(self, keys, default, exact=False):
            asked.append((keys[0], default))
            return super()._find(keys, default, exact)

    for head in (None, *fam.heads):
        try:
            fam.from_config(Recording({"model_type": model_type}, "c.json", head, spelled))
        except SymparamsError:
            continue  # a class default the family refuses (DeepSeek-V2 has no top-k): said elsewhere
    checked = 0
    for key, default in asked:
        theirs = spelled.default(key, None)
        if default in (None, config.REQUIRED) or theirs is None or spelled.stored(key) in spelled.derived:
            continue
        assert json.dumps(default) == json.dumps(theirs), (key, default, theirs)
        checked += 1
    assert checked >= 3


@pytest.mark.crosscheck
def test_the_spellings_data_is_what_the_pinned_transformers_gives():
    spec = importlib.util.spec_from_file_location("config_fields", ROOT / "scripts" / "config_fields.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.hand_types() == list(TYPES)
    assert script.generate() == Path(fields.DATA).read_text(encoding="utf-8")
