"""The checks of the shipped data against transformers' meta builds: the reading check of the counts
(``analysis/inference/audit.py``) and the FLOPs at a long sequence (``analysis/inference/long_check.py``).

The check reads random config.json files as ``count --config`` reads them and
builds each with transformers; these tests plant a wrong number where a user
would meet it and see the check find it, and see a right entry pass.
"""

import copy

import pytest

from symparams.analysis.inference.audit import audit
from symparams.analysis.inference.long_check import LONG, _with_unset, default_config, long_sequence_check
from symparams.families import inferred
from symparams.families.inferred_data import entries

pytestmark = pytest.mark.crosscheck


def shipped(model_type: str, cls: str = "base") -> dict:
    return copy.deepcopy(entries(model_type)[cls])


def test_a_shipped_entry_reads_as_transformers_builds():
    found = audit(shipped("gpt_neo"))
    assert found.compared == 10 and found.mismatches == ()


def test_an_embedding_counted_twice_is_caught():
    entry = shipped("gpt_neo")
    embedding = next(p for p in entry["parameters"] if p[0] == "wte.weight")
    embedding[1] = 2  # the instance count: the token embedding twice
    found = audit(entry)
    assert found.mismatches and "transformers builds" in found.reason


def test_configs_that_give_only_a_layer_count_are_read_and_built(monkeypatch):
    """Qwen3-Next counts its layers by kind (``layer_types#linear_attention``); a config.json that sets
    ``num_hidden_layers`` without ``layer_types`` gets the list transformers computes for that count, not the
    default one.  The reader refuses such a config; without that refusal the check must find the wrong count."""
    entry = shipped("qwen3_next")
    assert audit(entry).mismatches == ()
    monkeypatch.setattr(inferred, "_refuse_layers_without_list", lambda *args, **kwargs: None)
    assert audit(entry).mismatches, "no config giving only a layer count was drawn"


def test_a_list_of_layer_indices_of_another_length_is_caught_without_its_check(monkeypatch):
    """Llama 4 counts its MoE layers by how many ``moe_layers`` names; a saved default's list retiled to fewer
    layers names every one of them, where the formula counts one in every ``interleave_moe_layer_step``.  The
    reader refuses such a list; without that refusal the check must find the wrong count."""
    entry = shipped("llama4_text")
    assert audit(entry).mismatches == ()
    monkeypatch.setattr(inferred, "check_indexes", lambda *args, **kwargs: None)
    assert audit(entry).mismatches, "no list naming other layers was drawn"


# -- the costs at a long sequence ----------------------------------------------------------------------------------

def test_shipped_flops_hold_at_a_long_sequence():
    # one dense type here (5 s); the generator's audit ran the check on every class (Mamba's scan over 301
    # positions of its 32 default layers alone takes 40 s)
    assert long_sequence_check(shipped("olmo", "causal-lm")) is None


def test_the_defaults_checked_at_a_long_sequence_give_the_field_the_costs_had_to_set():
    """DeepSeek-V2's default leaves its top-k unset and does not run: costs that set it check the defaults with the
    small configuration's top-k, every other value theirs."""
    entry = {"model_type": "deepseek_v2", "class": "causal-lm",
             "costs": {"symbols": {"num_experts_per_tok": "k_e"}, "defaults": {"num_experts_per_tok": None},
                       "check": {"values": {"hidden_size": 9, "num_experts_per_tok": 3}}}}
    default = default_config(entry)
    filled = _with_unset(entry, default)
    assert (default["num_experts_per_tok"], filled["num_experts_per_tok"]) == (None, 3)
    assert {k: v for k, v in filled.items() if k != "num_experts_per_tok"} == \
        {k: v for k, v in default.items() if k != "num_experts_per_tok"}
    given = {**entry, "costs": {**entry["costs"], "defaults": {"num_experts_per_tok": 6}}}
    assert _with_unset(given, default) is default  # a default the class has: checked as it is


def _long_check_of_planted(monkeypatch, entry: dict) -> str | None:
    """:func:`long_sequence_check` of ``entry``, planted where the runtime reads the data (a causal-lm class)."""
    monkeypatch.setattr(inferred, "entries", lambda model_type: {"causal-lm": entry})
    inferred.family.cache_clear()
    try:
        return long_sequence_check(entry)
    finally:
        inferred.family.cache_clear()


def test_a_projection_run_too_many_times_is_caught_at_a_long_sequence(monkeypatch):
    """A wrong number of runs (as Beam's shipped costs had: four layers' products whatever the config said),
    planted where the runtime reads the data."""
    entry = shipped("olmo", "causal-lm")
    product = next(p for p in entry["costs"]["products"] if p[0].endswith("self_attn.q_proj"))
    product[3] = [["2", [["L", 1]], []]]  # runs of the product: twice the layer count
    found = _long_check_of_planted(monkeypatch, entry)
    assert found is not None and f"at {LONG} tokens the formulas give" in found


def test_a_cache_held_in_too_few_layers_is_caught_at_a_long_sequence(monkeypatch):
    """The keys cached in one layer whatever the config says (as Jamba's fit had it: the traces it drew kept one
    attention layer), planted where the runtime reads the data: the FLOPs hold, the cache does not."""
    entry = shipped("olmo", "causal-lm")
    keys = next(t for t in entry["costs"]["cache"] if t[2] == "keys")
    keys[3] = 1  # the layers holding the keys
    found = _long_check_of_planted(monkeypatch, entry)
    assert found is not None and found.startswith(f"after {LONG} tokens the formulas hold ")
    assert "elements in the cache, transformers' cache" in found


def test_a_refused_long_check_names_the_model_type_not_the_folder_it_ran_in(monkeypatch, tmp_path):
    """The reason is shipped in the data file and shown in docs/inferred.md: a config read with no path of its own
    took its name from the working directory (the generator's checkout, "main")."""
    entry = shipped("olmo", "causal-lm")
    entry["costs"]["held"] = {"hidden_size": 7}  # a condition no configuration checked meets
    monkeypatch.chdir(tmp_path)
    found = _long_check_of_planted(monkeypatch, entry)
    assert found.startswith("the formulas refuse the configuration checked: olmo: "), found
    assert tmp_path.name not in found


def test_a_class_whose_cache_is_refused_is_checked_at_a_long_sequence_by_its_flops_alone(monkeypatch):
    """BlenderbotForCausalLM's forward fails with ``use_cache=True``: the long check traces it without the cache
    and compares its FLOPs (a product run twice as often is caught), not a cache the formulas refuse to give."""
    entry = shipped("blenderbot", "causal-lm")
    assert entry["costs"]["cache_refused"].startswith("with use_cache=True the forward fails")
    assert _long_check_of_planted(monkeypatch, copy.deepcopy(entry)) is None
    product = next(p for p in entry["costs"]["products"] if p[0].endswith("self_attn.q_proj"))
    product[3] = [["2", [["L_d", 1]], []]]  # runs of the product: twice the layer count
    found = _long_check_of_planted(monkeypatch, entry)
    assert found is not None and f"at {LONG} tokens the formulas give" in found


@pytest.mark.parametrize("model_type, cls, held", [("recurrent_gemma", "base", "lists"),
                                                    ("gemma4_text", "causal-lm", "per_layer"),
                                                    ("deepseek_v4", "base", "mappings")])
def test_a_key_the_reader_would_read_as_nothing_is_caught_by_the_odd_configs(model_type, cls, held):
    """Without what the data holds of them (Recurrent Gemma's block_types, Gemma 4's per-layer head widths,
    DeepSeek-V4's compression rates), a config.json setting them otherwise was counted as the default model; the
    odd configs of the audit find it.  The shipped entry refuses them, and is left with no mismatch."""
    from symparams.analysis.inference.audit import odd_mismatches
    from symparams.analysis.inference.probing import Builder, configure

    default = {**configure(model_type, {}, cls).to_dict(), "model_type": model_type}
    builder = Builder(model_type, cls)
    entry = shipped(model_type, cls)
    assert entry[held] and odd_mismatches(entry, default, builder) == []
    del entry[held]
    inferred.family.cache_clear()
    try:
        assert odd_mismatches(entry, default, builder)
    finally:
        inferred.family.cache_clear()
