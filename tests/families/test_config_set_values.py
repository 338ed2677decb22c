"""A value set on a config.json a hand-written family reads (``symparams.model(path, H=512)``, ``Model.subs``) means
the edited file: it is written into the field the family read the symbol from, and the file read again, so a
field the file gives stays and one it leaves out follows as transformers computes it.  Each count is compared with
the model transformers builds on the meta device from the edited file (:mod:`tests.reference.edited_configs`)."""

import pytest

import symparams
from symparams.core.errors import SymparamsError
from symparams.core.symbols import D, G, r
from tests.reference.edited_configs import CASES, GPT2, IDS, LLAMA, NEOX, SMALL, edited_count

pytestmark = pytest.mark.crosscheck


@pytest.mark.parametrize("config, values, fields", [c[1:] for c in CASES], ids=IDS)
def test_a_value_set_on_a_config_counts_as_the_edited_file_builds(config, values, fields):
    assert symparams.model(config, **values).count == edited_count(config, fields)


@pytest.mark.parametrize("config, values, fields", [c[1:] for c in CASES], ids=IDS)
def test_subs_on_a_model_read_from_a_config_counts_as_the_edited_file_builds(config, values, fields):
    assert symparams.model(config).subs(**values).count == edited_count(config, fields)


def test_the_values_shown_are_the_edited_file_s():
    assert symparams.model(NEOX, H=512).values[r] == 1  # intermediate_size 512 over hidden_size 512
    given = symparams.model({**LLAMA, "head_dim": 64}, H=512)
    assert (given.values[D], given.switches["free_head_dim"]) == (64, True)
    assert symparams.model({**GPT2, "n_inner": None}, H=256).values[r] == 4
    assert G not in symparams.model(LLAMA, A=8).values  # num_key_value_heads left out follows the heads


def test_subs_and_switches_build_on_the_values_set_before():
    m = symparams.model(NEOX, H=512).subs(L=3)
    assert m.count == edited_count(NEOX, {"hidden_size": 512, "num_hidden_layers": 3})
    untied = symparams.model(NEOX).with_head("causal-lm").subs(H=512)
    assert untied.head == "causal-lm" and untied.values[r] == 1
    assert symparams.model(NEOX, H=512).with_switches(tie=True).values[r] == 1


def test_a_value_that_names_no_field_is_set_in_the_family_s_symbols():
    """r is a ratio the family computes, not a field: it is set after the file is read, and the width follows."""
    m = symparams.model(NEOX, r=3)
    assert (m.values[r], m.double_entry["of"]) == (3, "the config as read, before --set")


def test_the_edited_file_is_refused_in_one_line_naming_the_value_set():
    with pytest.raises(SymparamsError, match=r"^config with A=3: key hidden_size \(256\) is not divisible by "
                                             r"num_attention_heads \(3\)"):
        symparams.model(LLAMA, A=3)


def test_subs_on_a_type_only_the_inferred_formulas_read_counts_as_the_edited_file_builds():
    """Arcee's head_dim left out is hidden_size // num_attention_heads: it follows H through subs as through --set."""
    arcee = {"model_type": "arcee", **SMALL}
    assert symparams.model(arcee).subs(H=512).count == edited_count(arcee, {"hidden_size": 512}) == 3_660_288
