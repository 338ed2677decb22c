"""Inferred formulas of layers in patterns, against meta builds: Jamba's attention layers by their period and offset,
Qwen3-Next's expert layers in every sparse step, Dory's saved files, and a file its class writes otherwise read back
as the class reads it."""

import json

import pytest
import transformers

from symparams.families import inferred
from tests.families.test_inferred import meta_count, read


@pytest.mark.parametrize("layers,period,offset,experts", [(16, 6, 4, (3, 1)), (18, 6, 5, (2, 1)), (9, 8, 4, (4, 2))])
def test_jamba_counts_its_attention_layers_by_their_period_and_offset(tmp_path, layers, period, offset, experts):
    """An attention layer where ``i % attn_layer_period == attn_layer_offset`` (layers 4 and 10 of 16 with a period
    of 6 from 4), the rest recurrent; experts where ``i % expert_layer_period == expert_layer_offset``.  The base of
    6 layers hid the period, and the data held it: 28 recurrent layers counted where a config built 25.  One expert
    is a plain MLP without a router: refused."""
    path = tmp_path / "config.json"
    small = {"model_type": "jamba", "num_hidden_layers": layers, "attn_layer_period": period,
             "attn_layer_offset": offset, "expert_layer_period": experts[0], "expert_layer_offset": experts[1],
             "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
             "num_experts": 4, "vocab_size": 100, "mamba_dt_rank": 8}
    path.write_text(json.dumps(small))
    assert inferred.model(read(path)).count == meta_count(path, "base")
    with pytest.raises(inferred.OutsideConditions, match="num_experts ≥ 2"):
        inferred.model({**small, "num_experts": 1})


@pytest.mark.parametrize("layers,period,offset", [(4, 5, 4), (11, 4, 3), (13, 6, 1)])
def test_jamba_s_causal_lm_counts_the_recurrent_biases_where_the_layers_end_at_a_period(tmp_path, layers, period,
                                                                                       offset):
    """Layers ending where the attention pattern starts again (L - offset a multiple of the period, none of the
    fit's points had one with the biases on): the convolution biases were counted on one recurrent layer too
    few, 8,192 parameters short at a width of 4,096."""
    path = tmp_path / "config.json"
    small = {"model_type": "jamba", "num_hidden_layers": layers, "attn_layer_period": period,
             "attn_layer_offset": offset, "expert_layer_period": 2, "expert_layer_offset": 1, "hidden_size": 64,
             "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2, "num_experts": 3,
             "vocab_size": 100, "mamba_expand": 3, "mamba_conv_bias": True, "mamba_proj_bias": True,
             "tie_word_embeddings": False}
    path.write_text(json.dumps(small))
    assert inferred.model(read(path), "causal-lm").count == meta_count(path, "causal-lm")


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("layers,step", [(7, 2), (9, 3), (5, 4), (6, 1)])
def test_qwen3_next_counts_an_expert_layer_in_every_decoder_sparse_step(tmp_path, cls, layers, step):
    """Experts where ``(i + 1) % decoder_sparse_step == 0``, a plain MLP elsewhere, the layers of linear and of full
    attention counted apart: 7 layers with a step of 2 have 3 expert layers and 4 MLPs (the data held the step at
    1, every layer an expert one)."""
    path = tmp_path / "config.json"
    kinds = ["linear_attention", "linear_attention", "full_attention"] * 3
    path.write_text(json.dumps({"model_type": "qwen3_next", "num_hidden_layers": layers, "decoder_sparse_step": step,
                                "layer_types": kinds[:layers], "hidden_size": 64, "intermediate_size": 96,
                                "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48, "num_experts": 4,
                                "num_experts_per_tok": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                "head_dim": 16, "vocab_size": 100}))
    assert inferred.model(read(path), cls).count == meta_count(path, cls)


def test_a_file_its_class_writes_otherwise_is_read_back_as_the_class_reads_it():
    """Dory's to_dict doubles the layer counts and puts an "mlp" entry after each layer of layer_types; reading
    such a file, the class halves them again.  Without the entries a file is read as it is."""
    from symparams.families.inferred_keys import as_held

    entry = {"written": {"list": "layer_types", "marks": ["mlp"], "computed": ["rest"],
                         "fields": {"layers": 2, "first": 2, "rest": 2}}}
    saved = {"layers": 6, "first": 2, "rest": 4, "layer_types": ["a", "mlp", "b", "mlp", "a", "mlp"], "width": 8}
    assert as_held(entry, saved, "config") == {"layers": 3, "first": 1, "rest": 2, "layer_types": ["a", "b", "a"],
                                               "width": 8}
    assert as_held(entry, {**saved, "rest": None}, "config")["rest"] is None  # the class computes it
    by_hand = {"layers": 3, "first": 1, "layer_types": ["a", "b", "a"]}
    assert as_held(entry, by_hand, "config") is by_hand
    for odd in ({**saved, "layers": 5}, {k: v for k, v in saved.items() if k != "first"}):
        with pytest.raises(inferred.OutsideConditions, match="key layer_types holds 'mlp'") as refused:
            as_held(entry, odd, "config")
        assert "\n" not in str(refused.value)


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("layers,first,last", [(5, 1, 2), (12, 4, 4), (3, 0, 1)])
def test_dory_counts_a_saved_file_and_one_written_by_hand(tmp_path, cls, layers, first, last):
    """A file as transformers saves it (doubled layer counts, "mlp" after each layer kind) and the same config
    written by hand: both count the layers transformers builds (the data held the layer counts before)."""
    values = {"num_hidden_layers": layers, "n_input_layers": first, "n_output_layers": last, "hidden_size": 64,
              "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "vocab_size": 100}
    saved = transformers.AutoConfig.for_model("dory", **values).to_dict()
    assert saved["num_hidden_layers"] == 2 * layers and "mlp" in saved["layer_types"]
    for config in (saved, {"model_type": "dory", **values}):
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        assert inferred.model(read(path), cls).count == meta_count(path, cls)
