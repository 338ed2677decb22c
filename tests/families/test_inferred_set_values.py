"""A value given beside a config.json of an inferred type (``--set H=512``, ``symparams.model(path, H=512)``) means
what editing the file to that value means: transformers builds the edited file, computing a field the file leaves
out from the value set (Arcee's ``head_dim`` is ``hidden_size // num_attention_heads``, RWKV's attention width is
``hidden_size``), inside a sub-config too, while a field the file gives keeps its value.  Each count is compared
with the model transformers builds on the meta device from the edited file."""

import json

import pytest

import symparams
from symparams.core.symbols import A, D, G
from tests.reference.cli_runner import command
from tests.reference.inferred_builds import built
from tests.reference.shipped_builds import merged, nested

pytestmark = pytest.mark.crosscheck

SMALL = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 512,
         "vocab_size": 1000}


def edited(config: dict, **fields) -> dict:
    """``config`` with dotted ``fields`` written into it, as a user would edit the file (a sub-config the file
    leaves out is written with those fields alone)."""
    return merged(config, nested(fields))


XLNET = {"model_type": "xlnet", "d_model": 256, "n_head": 4, "n_layer": 2, "d_inner": 512, "vocab_size": 1000}

#: (case, config.json, values set, the same values as the file's fields, what the old reading counted instead)
CASES = [
    ("head_dim left out follows the width", {"model_type": "arcee", **SMALL}, {"H": 512},
     {"hidden_size": 512}, "head_dim held at 64: 2,611,712, not 3,660,288"),
    ("key/value heads and head_dim left out follow the heads", {"model_type": "arcee", **SMALL}, {"A": 8},
     {"num_attention_heads": 8}, "num_key_value_heads held at 4 and head_dim at 64: 1,568,000, not 1,305,856"),
    ("head_dim given stays", {"model_type": "arcee", **SMALL, "head_dim": 64}, {"H": 512},
     {"hidden_size": 512}, None),
    ("a width and a width of the type's own follow the width",
     {"model_type": "rwkv", "hidden_size": 256, "num_hidden_layers": 2, "vocab_size": 1000}, {"H": 512},
     {"hidden_size": 512}, "attention_hidden_size and intermediate_size held: 4,194,304, not 7,341,056"),
    ("a width of the type's own that no standard symbol names follows the width", XLNET, {"H": 512},
     {"d_model": 512}, "d_head held at 64: 2,880,512, not 4,193,792"),
    ("a sub-config's head_dim left out follows its width",
     {"model_type": "ultravbert", "text_config": {**SMALL}}, {"H": 512},
     {"text_config.hidden_size": 512}, "text_config.head_dim held at 64: 95,225,088, not 96,273,664"),
    ("a sub-config's heads left out follow its heads",
     {"model_type": "ultravbert", "text_config": {**SMALL}}, {"A": 8},
     {"text_config.num_attention_heads": 8}, "key/value heads and head_dim held: 90,773,248, not 90,511,104"),
    ("a sub-config's head_dim given stays",
     {"model_type": "ultravbert", "text_config": {**SMALL, "head_dim": 64}}, {"H": 512},
     {"text_config.hidden_size": 512}, None),
    ("a field the file leaves unset, set, counts by the formula for it set",
     {"model_type": "codegen", "n_embd": 256, "n_head": 4, "n_layer": 2, "vocab_size": 1000, "rotary_dim": 32},
     {"F": 700}, {"n_inner": 700}, "refused: F is no symbol of the formula for n_inner unset (4H)"),
    ("a sub-config left out is written with the value alone", {"model_type": "omniasr"}, {"H": 1024},
     {"text_config.hidden_size": 1024}, "the parent's default text config: 633,920,000, not 1,565,669,888"),
]


@pytest.mark.parametrize("config, values, fields, old", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_value_set_counts_as_the_edited_file_builds(config, values, fields, old):
    assert symparams.model(config, **values).count == built(edited(config, **fields), "base"), old


def test_the_values_shown_are_the_edited_file_s_and_g_still_follows_a_for_the_proof():
    m = symparams.model({"model_type": "arcee", **SMALL}, A=8)
    assert (m.values[G], m.values[D]) == (8, 32)
    assert {f.symbol: f.expr for f in m.family.follows}[G] == A


def test_count_set_on_the_command_line_counts_as_the_edited_file_builds(tmp_path):
    config = {"model_type": "arcee", **SMALL}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    status, out, err = command("count", "--config", path, "--set", "A=8", "--json")
    assert status == 0, err
    figures = json.loads(out)
    assert figures["total"] == built(edited(config, num_attention_heads=8), "base") == 1_305_856
    assert (figures["values"]["G"], figures["values"]["D"]) == (8, 32)


def test_a_value_the_edited_file_puts_outside_the_formula_is_refused_in_one_line(tmp_path):
    """XLNet's ``d_head`` left out is ``d_model / n_head``, 256/3 with 3 heads: refused, naming the value set."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(XLNET))
    status, out, err = command("count", "--config", path, "--set", "A=3")
    assert (status, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "with A=3: key d_head" in err, err
