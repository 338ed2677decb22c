"""Shipped formulas of Gemma 4's text models (text, unified text, and both multimodal types through their text
config): the head width of the sliding layers is a variable (the full-attention layers override it per layer with
the config's global head width, so the config reads ``head_dim`` back as no one value), and the layers are
counted by how many of each kind a config.json lists, in whatever order.  Layers reusing others' keys and values
(``num_kv_shared_layers``) are refused: which layers those are follows the list's order, which no kind count says.
The reference is always a meta-device build."""

import pytest

from symparams.families import inferred
from tests.reference.inferred_builds import built, entry

pytestmark = pytest.mark.crosscheck

SLIDING, FULL = "sliding_attention", "full_attention"
#: Gemma 4 E2B's layers, as its text config lists them: four sliding layers, then a full one, seven times
E2B_LAYERS = ([SLIDING] * 4 + [FULL]) * 7
#: a Gemma 4 E2B-like text config (35 layers, one key-value head, per-layer inputs)
E2B = {"hidden_size": 1536, "intermediate_size": 6144, "num_attention_heads": 8, "num_key_value_heads": 1,
       "head_dim": 256, "vocab_size": 262144, "hidden_size_per_layer_input": 256, "num_hidden_layers": 35,
       "layer_types": E2B_LAYERS, "num_kv_shared_layers": 0}
#: fields the unified text config does not have
PER_LAYER_INPUTS = ("hidden_size_per_layer_input", "vocab_size_per_layer_input")
TYPES = ["gemma4_text", "gemma4_unified_text", "gemma4", "gemma4_unified"]
CLASSES = ["base", "causal-lm"]


def config_of(model_type: str, **text) -> dict:
    """A config.json of ``model_type`` with these text fields: the text types' own, the multimodal ones' under
    ``text_config``."""
    fields = {k: v for k, v in {**E2B, **text}.items() if not ("unified" in model_type and k in PER_LAYER_INPUTS)}
    if model_type.endswith("_text"):
        return {"model_type": model_type, **fields}
    return {"model_type": model_type, "text_config": fields}


def small(model_type: str, **text) -> dict:
    """Ten layers, two of them full attention, in E2B's order; small widths."""
    return config_of(model_type, **{"hidden_size": 64, "intermediate_size": 96, "vocab_size": 1024,
                                    "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 512,
                                    "num_hidden_layers": 10, "layer_types": E2B_LAYERS[:10], **text})


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("model_type", TYPES)
@pytest.mark.parametrize("head_dim", [128, 512])
def test_a_head_width_other_than_the_default_is_counted_as_built(model_type, cls, head_dim):
    """The head width was held at 256 (a file with another refused); the sliding layers are built at the one a
    file gives, the full-attention ones at the global head width whatever it is."""
    config = small(model_type, head_dim=head_dim)
    assert built(config, cls) != built(small(model_type, head_dim=256), cls)
    assert inferred.counted(entry(model_type, cls), config)[0] == built(config, cls)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("model_type", TYPES)
def test_a_list_of_layer_kinds_in_its_own_order_is_counted_by_its_kinds(model_type, cls):
    """Gemma 4 E2B's four-to-one list, not the five-to-one one the config computes from a layer count alone: the
    formula once read the layer count only, and counted the text model 4,074,140,416 where transformers builds
    4,081,218,816 (seven full-attention layers, not six)."""
    config = config_of(model_type)
    assert inferred.counted(entry(model_type, cls), config)[0] == built(config, cls)
    if model_type == "gemma4_text" and cls == "base":
        assert built(config, cls) == 4_081_218_816


@pytest.mark.parametrize("model_type", TYPES)
@pytest.mark.parametrize("shared", [1, 20])
def test_layers_reusing_others_keys_and_values_are_refused(model_type, shared):
    """Gemma 4 E2B's last 20 layers reuse others' keys and values; transformers builds it, the formula refuses
    it in one line rather than count the kinds among the last layers as it found them in its own lists."""
    config = config_of(model_type, num_kv_shared_layers=shared)
    assert built(config, "base") < built(config_of(model_type), "base")
    with pytest.raises(inferred.OutsideConditions, match="num_kv_shared_layers") as refused:
        inferred.counted(entry(model_type, "base"), config)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("model_type", ["gemma4_text", "gemma4"])
def test_a_global_head_width_the_config_reads_beside_its_fields_is_refused(model_type):
    """``global_head_dim`` is no field of the config (it is read from the keyword arguments and written into the
    per-layer overrides): the formula holds for its default of 512 only."""
    config = small(model_type, global_head_dim=256)
    assert built(config, "base") != built(small(model_type), "base")
    with pytest.raises(inferred.OutsideConditions, match="global_head_dim"):
        inferred.counted(entry(model_type, "base"), config)
