"""A config.json of a type counted by inferred formulas, read with its config class's own semantics.

transformers takes some fields under older names and computes some from keys
it reads beside its fields.  Each case is a config.json as a checkpoint
writes it, counted against what transformers builds from the same file on the
meta device: read as transformers reads it, or refused in one line, never
counted as another model.

- Legacy names of layer kinds: every config class renames ``mamba`` to
  ``linear_attention`` and ``attention`` to ``full_attention`` in its
  ``layer_types``, some in lists of their own (Zamba2's ``layers_block_type``,
  whose hub configs write ``mamba`` and ``hybrid``).
- Legacy keywords a class renames: LFM2's ``block_ff_dim`` and
  ``tie_embedding``, Nemotron-H's ``mamba_d_conv``.
- Two names of one field with different values: refused, naming both.
- A list of layer kinds written as text, one letter a layer (Nemotron-H's
  ``hybrid_override_pattern``): read as the list it sets.
- A mapping the formula holds (DeepSeek-V4's ``compress_rates``), per-layer
  overrides other than the default's (Gemma 4's ``per_layer_config``), and a
  key that sets the list of sliding and full layers the costs hold (Cohere
  2's ``sliding_window_pattern``): refused.

The names, keywords and lists are data generated from the pinned transformers;
the generated parts are compared here with a fresh generation.
"""

import json
import sys
from pathlib import Path

import pytest
import transformers

from symparams.core.errors import SymparamsError
from symparams.families.inferred import kinds_listed, model
from symparams.families.inferred_data import DATA, OutsideConditions, entries
from tests.reference.inferred_builds import built

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from config_keywords import (layer_pattern_keys, mappings_of, per_layer_overrides, renamed_keywords,  # noqa: E402
                             renamed_kinds)
from config_reads import names_read, read_names  # noqa: E402

#: a small Qwen3-Next: three linear-attention layers and one of full attention, its layer_types as older
#: configs wrote them
QWEN3_NEXT = {"model_type": "qwen3_next", "vocab_size": 101, "hidden_size": 48, "intermediate_size": 40,
              "moe_intermediate_size": 24, "shared_expert_intermediate_size": 28, "num_experts": 4,
              "num_experts_per_tok": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8,
              "linear_value_head_dim": 6, "num_hidden_layers": 4,
              "layer_types": ["mamba", "mamba", "mamba", "attention"]}
#: a small Zamba2 as Zyphra's config.json files write its layers: ``mamba`` and ``hybrid``
ZAMBA2 = {"model_type": "zamba2", "vocab_size": 11, "hidden_size": 2560, "intermediate_size": 13,
          "mamba_d_state": 7, "mamba_d_conv": 3, "mamba_expand": 1, "n_mamba_heads": 4, "mamba_ngroups": 1,
          "num_attention_heads": 5, "num_key_value_heads": 5, "chunk_size": 5, "num_hidden_layers": 9,
          "layers_block_type": ["mamba"] * 3 + ["hybrid"] + ["mamba"] * 4 + ["hybrid"]}
NEW_NAMES = {"mamba": "linear_attention", "attention": "full_attention"}
#: LFM2-1.2B's config.json as LiquidAI publishes it: its MLP width under the legacy ``block_ff_dim`` (shrunk by
#: the config's own rule to 8,192), its tie under ``tie_embedding``
LFM2_1_2B = {"model_type": "lfm2", "vocab_size": 65536, "hidden_size": 2048, "num_hidden_layers": 16,
             "num_attention_heads": 32, "num_key_value_heads": 8, "block_ff_dim": 12288, "block_multiple_of": 256,
             "block_ffn_dim_multiplier": 1.0, "block_auto_adjust_ff_dim": True, "tie_embedding": True,
             "conv_L_cache": 3, "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention",
                                                "conv", "conv", "full_attention", "conv", "full_attention", "conv",
                                                "full_attention", "conv", "full_attention", "conv"]}
#: a small Nemotron-H with its Mamba-2 sizes under the legacy names its class renames
NEMOTRON_H = {"model_type": "nemotron_h", "vocab_size": 100, "hidden_size": 256, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 32, "intermediate_size": 100, "mamba_num_heads": 8,
              "mamba_head_dim": 16, "mamba_d_conv": 5, "mamba_n_groups": 2}


def _renamed(config: dict, key: str) -> dict:
    return {**config, key: [NEW_NAMES.get(kind, kind) for kind in config[key]]}


@pytest.mark.parametrize("config, key", [(QWEN3_NEXT, "layer_types"), (ZAMBA2, "layers_block_type")],
                         ids=["qwen3_next", "zamba2"])
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_a_list_of_layer_kinds_in_the_legacy_names_counts_what_transformers_builds(config, key, cls):
    head = None if cls == "base" else cls
    counted = model(config, head=head).count
    assert counted == built(config, cls)
    assert counted == model(_renamed(config, key), head=head).count


def test_a_list_transformers_does_not_rename_keeps_the_legacy_name_and_is_refused():
    """DeepSeek-V3.2's ``mlp_layer_types`` is no list a config class renames: ``attention`` there is no kind the
    formula knows, and the count is refused in one line naming it."""
    with pytest.raises(OutsideConditions, match="mlp_layer_types has layers of kind 'attention'"):
        model({"model_type": "deepseek_v32", "num_hidden_layers": 2, "mlp_layer_types": ["attention", "sparse"]},
              head="causal-lm")


@pytest.mark.parametrize("config", [LFM2_1_2B, NEMOTRON_H], ids=["lfm2", "nemotron_h"])
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_a_legacy_keyword_the_config_class_renames_is_read_as_its_field(config, cls):
    assert model(config, head=None if cls == "base" else cls).count == built(config, cls)


def test_lfm2_untied_under_its_legacy_name_counts_its_own_head():
    untied = {**LFM2_1_2B, "tie_embedding": False}
    assert model(untied, head="causal-lm").count == built(untied, "causal-lm") \
        == model(LFM2_1_2B, head="causal-lm").count + 65536 * 2048


def test_two_names_of_one_field_with_different_values_are_refused_naming_both():
    """transformers keeps one of them (dots1 holds 16 experts here in either order); the formula read the last
    key, so one order counted 8."""
    config = {"model_type": "dots1", "num_hidden_layers": 2, "n_shared_experts": 1, "num_experts_per_tok": 2}
    for pair in ({"n_routed_experts": 8, "num_local_experts": 16}, {"num_local_experts": 16, "n_routed_experts": 8}):
        with pytest.raises(SymparamsError, match=r"keys (n_routed_experts \(8\) and num_local_experts \(16\)|"
                                                 r"num_local_experts \(16\) and n_routed_experts \(8\)) name one "
                                                 r"field of the dots1 config with different values; keep one"):
            model({**config, **pair})
    same = {**config, "n_routed_experts": 16, "num_local_experts": 16}
    assert model(same).count == built(same, "base")
    assert model({**config, "n_routed_experts": None, "num_local_experts": 16}).count == built(same, "base")


@pytest.mark.parametrize("given", [
    {"layers_block_type": ["moe", "moe", "full_attention", "mlp"]},
    {"hybrid_override_pattern": "M-M-M*-M-EM-E*-", "num_hidden_layers": 15},
    {"layers_block_type": ["mamba", "mlp", "attention", "mamba", "moe"]},
    {"layers_block_type": ["linear_attention", "mlp"], "hybrid_override_pattern": "M-"},
    {"hybrid_override_pattern": "M*", "mtp_hybrid_override_pattern": "*E-"},
], ids=["list", "pattern", "legacy-kinds", "both", "mtp-pattern"])
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_nemotron_h_counts_its_layers_by_kind_in_the_list_or_the_pattern(given, cls):
    """Nemotron-H's layer count is the length of its list of kinds (``num_hidden_layers`` is a property of it, and
    a file's own is ignored): transformers 5 saves the list, older files a pattern of letters (``M`` Mamba-2,
    ``*`` attention, ``-`` MLP, ``E`` experts).  The formula counts the layers of each kind.  The pattern for the
    multi-token-prediction layers sets a list transformers builds no layers from."""
    config = {**NEMOTRON_H, **given}
    assert built(config, cls) != built(NEMOTRON_H, cls)
    assert model(config, head=None if cls == "base" else cls).count == built(config, cls)


@pytest.mark.parametrize("given, error", [
    ({"layers_block_type": ["linear_attention", "mlp"], "hybrid_override_pattern": "M*"},
     "keys hybrid_override_pattern and layers_block_type give the nemotron_h config different layers; keep one"),
    ({"hybrid_override_pattern": "M-X"},
     r"key hybrid_override_pattern is \"M-X\"; transformers reads it as one character a layer, each one of "
     r"'\*', '-', 'E', 'M'"),
    ({"hybrid_override_pattern": 12}, "key hybrid_override_pattern is 12; transformers reads it as one character"),
], ids=["both-differ", "unknown-letter", "no-text"])
def test_a_nemotron_h_pattern_transformers_would_not_read_so_is_refused_in_one_line(given, error):
    with pytest.raises(SymparamsError, match=error):
        model({**NEMOTRON_H, **given})


@pytest.mark.parametrize("model_type, key, value", [("cohere2", "sliding_window_pattern", 2),
                                                    ("gemma3_text", "sliding_window_pattern", 3)])
def test_a_key_that_moves_the_sliding_layers_keeps_the_count_and_refuses_the_cache(model_type, key, value):
    """Cohere 2 and Gemma 3 compute their full-attention layers from a pattern when the file gives no list: the
    costs hold the default's (every 4th, 6th), so another pattern is refused, where the cache was counted with
    the default's full layers."""
    config = {"model_type": model_type, "num_hidden_layers": 8, key: value}
    layer_types = transformers.AutoConfig.for_model(**config).layer_types
    m = model(config)
    assert m.count == built(config, "base")
    with pytest.raises(SymparamsError, match=f"the inferred costs hold only for {key} = "):
        m.kv_cache("fp32", 100, 1).total
    listed = model({**config, "layer_types": layer_types})
    assert listed.count == m.count


@pytest.mark.crosscheck
def test_the_reading_data_is_what_the_pinned_transformers_gives():
    with open(DATA, encoding="utf-8") as fh:
        shipped = json.load(fh)
    types = {e["model_type"] for e in shipped["formulas"]}
    # the patterns of every type take a minute to find: those that have them, and hybrids that have none
    patterned = {"nemotron_h", "nemo_speechlm", "glm_moe_dsa", "zamba2", "qwen3_next", "lfm2", "jamba"}
    fresh = renamed_kinds(types, patterned)
    assert {k: v for k, v in shipped["renamed_kinds"].items() if k != "patterns"} == \
        {k: v for k, v in fresh.items() if k != "patterns"}
    assert {t: p for t, p in shipped["renamed_kinds"]["patterns"].items() if t in patterned} == fresh["patterns"]
    assert set(fresh["patterns"]) == {"nemotron_h", "nemo_speechlm", "glm_moe_dsa"}
    assert shipped["renamed_kinds"]["lists"]["zamba2"] == ["layers_block_type"]
    for model_type in ("lfm2", "nemotron_h", "dots3_note_text"):
        for entry in entries(model_type).values():
            read = {*entry["symbols"], *entry.get("flags", {}), *entry.get("defaults", {})}
            renamed = {alias: name for alias, name in renamed_keywords(model_type).items() if name in read}
            assert renamed and renamed.items() <= entry["aliases"].items(), model_type
    for model_type in ("cohere2", "gemma3_text", "modernbert"):
        for entry in entries(model_type).values():
            assert layer_pattern_keys(model_type).items() <= entry["costs"]["held"].items(), model_type
    for model_type, cls in (("gemma4_text", "causal-lm"), ("deepseek_v4", "base"), ("neomme", "base")):
        entry = entries(model_type)[cls]
        assert entry.get("mappings", {}) == mappings_of(model_type, cls)
        assert entry.get("per_layer", {}) == per_layer_overrides(model_type, cls)
    fresh = read_names(["lfm2", "nemotron_h"])
    assert shipped["read_names"]["shared"] == fresh["shared"]
    for model_type, names in fresh["types"].items():
        assert shipped["read_names"]["types"][model_type] == names
    assert "block_ff_dim" in names_read("lfm2") and "block_dim" not in names_read("lfm2")


def _gemma4_saved(**fields) -> dict:
    """A Gemma 4 text config.json as transformers 5 saves it: its layer kinds and per-layer overrides written out."""
    saved = transformers.AutoConfig.for_model("gemma4_text", **fields).to_dict()
    return {"model_type": "gemma4_text", **fields, **{k: saved[k] for k in ("layer_types", "per_layer_config")}}


def test_gemma4_per_layer_overrides_as_saved_count_what_transformers_builds_and_others_are_refused():
    """transformers 5 saves Gemma 4's full-attention head width (512) as per-layer overrides; the formula holds
    that width, and read them as nothing: a file overriding 256 was counted at 512."""
    saved = _gemma4_saved(num_hidden_layers=12)
    assert model(saved).count == built(saved, "base")
    narrower = {**saved, "per_layer_config": {i: {"head_dim": 256} for i in saved["per_layer_config"]}}
    assert built(narrower, "base") != built(saved, "base")
    with pytest.raises(OutsideConditions, match=r"key per_layer_config overrides other layers or fields; the "
                                                r"inferred formula holds only for each layer of a kind layer_types "
                                                r'names as the default does, \{"full_attention": \{"head_dim": 512'):
        model(narrower)
    with pytest.raises(OutsideConditions, match="key per_layer_config is given without layer_types"):
        model({k: v for k, v in saved.items() if k != "layer_types"})


def test_a_mapping_the_formula_holds_at_its_default_is_refused_otherwise():
    """DeepSeek-V4's compression rates shape its compressors; the formula was fitted with the default's."""
    config = {"model_type": "deepseek_v4", "num_hidden_layers": 4,
              "compress_rates": {"compressed_sparse_attention": 8, "heavily_compressed_attention": 128}}
    assert built(config, "base") != built({**config, "compress_rates": None}, "base")
    with pytest.raises(OutsideConditions, match="key compress_rates is .*holds only for its default"):
        model(config)


@pytest.mark.parametrize("model_type, given", [("glm_moe_dsa", {"num_hidden_layers": 5, "first_k_dense_replace": 1}),
                                               ("deepseek_v32", {"num_hidden_layers": 5, "first_k_dense_replace": 2}),
                                               ("inkling_text", {"num_hidden_layers": 6})])
def test_a_saved_list_of_kinds_beside_the_one_counted_follows_the_layers_the_file_gives(model_type, given):
    """transformers 5 saves every per-layer list: GLM-MoE-DSA's formula counts layers by ``mlp_layer_types``, and
    its ``indexer_types`` and ``layer_types`` have as many layers (all of one kind).  Their rule was the default's
    78, so a file of 5 layers was refused."""
    saved = transformers.AutoConfig.for_model(model_type, **given).to_dict()
    config = {"model_type": model_type, **given,
              **{k: v for k, v in saved.items() if kinds_listed(v)}}
    assert len(config) - len(given) >= 3
    for cls in ("base", "causal-lm"):
        assert model(config, head=None if cls == "base" else cls).count == built(config, cls)


def test_a_key_no_code_of_its_type_reads_is_stored_and_one_its_code_may_read_is_refused():
    """LFM2's published config.json carries ``block_dim``, ``conv_dim`` and ``conv_dim_out``, which transformers 5
    reads nowhere: the file was refused as holding sizes the formula does not follow, and now counts as built.
    ``head_dim`` is read (by LFM2's attention), the formula was not fitted over it, and it moves the count: still
    refused, never read as nothing."""
    hub = {**LFM2_1_2B, "block_dim": 2048, "conv_dim": 2048, "conv_dim_out": 2048}
    assert model(hub, head="causal-lm").count == built(hub, "causal-lm") == built(LFM2_1_2B, "causal-lm")
    narrower = {**LFM2_1_2B, "head_dim": 32}
    assert built(narrower, "causal-lm") != built(LFM2_1_2B, "causal-lm")
    with pytest.raises(OutsideConditions, match="key head_dim is outside the inferred formula's fields"):
        model(narrower, head="causal-lm")


def test_a_pattern_of_letters_in_a_sub_config_is_read_as_the_list_it_sets():
    """NeMo SpeechLM's language model is a NemotronH config: its text config given with only the letters counts
    the layers they set, where it was refused as leaving the list out (the class's own four-layer default)."""
    config = {"model_type": "nemo_speechlm", "text_config": {"hybrid_override_pattern": "ME*E"}}
    listed = {"model_type": "nemo_speechlm",
              "text_config": {"layers_block_type": ["linear_attention", "moe", "full_attention", "moe"]}}
    assert model(config).count == model(listed).count == built(config, "base")
    with pytest.raises(OutsideConditions, match="key text_config.layers_block_type is left out of its sub-config"):
        model({"model_type": "nemo_speechlm", "text_config": {}})
