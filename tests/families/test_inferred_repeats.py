"""A per-layer list the config class computes as one of the formula's fields on each layer (Laguna's
``num_attention_heads_per_layer``, ``num_attention_heads`` once per layer): counted where it is that, refused
otherwise.  The reference is a meta-device build."""

import pytest

from symparams.families import inferred
from tests.reference.inferred_builds import built

#: a small Laguna: dense and sparse layers mixed (at least three sparse, as the data holds), six query heads on each
LAGUNA = {"model_type": "laguna", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96,
          "num_hidden_layers": 4, "num_attention_heads": 6, "num_key_value_heads": 2, "head_dim": 16,
          "moe_intermediate_size": 24, "shared_expert_intermediate_size": 40, "num_experts": 4,
          "num_experts_per_tok": 2, "mlp_layer_types": ["sparse", "dense", "sparse", "sparse"]}


def _toy_entry() -> dict:
    """H wide, L layers of A heads of 4 each: a query projection per layer; the heads also listed per layer."""
    return {"model_type": "toy", "class": "base", "exact": True, "symbols": {"hidden": "H", "heads": "A",
                                                                             "layers": "L"},
            "flags": {}, "defaults": {"hidden": 8, "heads": 2, "layers": 2}, "follows": {}, "conditions": {},
            "parameters": [["h.*.q.weight", "L", ["H", [["4", [["A", 1]], []]]]]],
            "repeats": {"heads_per_layer": {"field": "heads", "layers": "layers"}}}


def test_a_list_repeating_the_field_is_counted_and_any_other_refused():
    entry = _toy_entry()
    assert inferred.counted(entry, {"hidden": 8, "heads": 3, "layers": 2})[0] == 2 * 8 * 12
    assert inferred.counted(entry, {"hidden": 8, "heads": 3, "layers": 2, "heads_per_layer": [3, 3]})[0] == 2 * 8 * 12
    for other in ([3, 2], [2, 2], [3, 3, 3], 3):  # a layer of other heads, the default's, a layer too many, a number
        with pytest.raises(inferred.OutsideConditions, match="key heads_per_layer is") as no:
            inferred.counted(entry, {"hidden": 8, "heads": 3, "layers": 2, "heads_per_layer": other})
        assert "\n" not in str(no.value)


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_laguna_is_counted_with_its_heads_on_every_layer_as_transformers_builds_it(cls):
    """The audit wrote the default's 48 heads per layer beside num_attention_heads 96: counted with 96 on every
    layer (1,569,791,768) where transformers built 48 (1,191,812,888).  Now the list is read: counted when it is
    the field on each layer, refused when it is not."""
    head = None if cls == "base" else cls
    for config in (LAGUNA, {**LAGUNA, "num_attention_heads_per_layer": [6] * 4},
                   {**LAGUNA, "hidden_size": 48, "head_dim": 24, "num_attention_heads": 4, "num_experts": 3,
                    "num_hidden_layers": 5, "mlp_layer_types": ["dense", "sparse", "sparse", "dense", "sparse"],
                    "num_attention_heads_per_layer": [4] * 5}):
        assert inferred.model(config, head=head).count == built(config, cls)
    uneven = {**LAGUNA, "num_attention_heads_per_layer": [6, 2, 6, 6]}
    assert built(uneven, cls) != built(LAGUNA, cls)  # the list shapes the model
    with pytest.raises(inferred.OutsideConditions, match="num_attention_heads_per_layer is \\[6, 2, 6, 6\\]"):
        inferred.model(uneven, head=head)
