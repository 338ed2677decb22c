"""A per-layer list of kinds that changes shapes, which a formula does not count by its kinds (LFM3's and
Inkling 2's ``layer_types``): a config.json that reorders or swaps its kinds builds another count, so the
formula holds only for the default list and refuses any other, in one line; the default list still counts as
transformers builds it."""

import pytest
import torch
import transformers

from symparams.families.inferred import model
from symparams.families.inferred_data import OutsideConditions


def _built(model_type: str, cls: str, **fields) -> int:
    config = transformers.AutoConfig.for_model(model_type, **fields)
    auto = transformers.AutoModel if cls == "base" else transformers.AutoModelForCausalLM
    with torch.device("meta"):
        return sum(p.numel() for p in auto.from_config(config).parameters())


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type", ["lfm3", "inkling2_text"])
@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_a_reordered_list_of_kinds_is_refused_and_the_default_counted(model_type, cls):
    default = list(transformers.AutoConfig.for_model(model_type).layer_types)
    kinds = sorted(set(default))
    swapped = [{kinds[0]: kinds[-1], kinds[-1]: kinds[0]}.get(k, k) for k in default]
    head = None if cls == "base" else cls
    assert _built(model_type, cls, layer_types=swapped) != _built(model_type, cls)  # the list changes shapes
    with pytest.raises(OutsideConditions, match="key layer_types is .*the inferred formula holds only for its default"):
        model({"model_type": model_type, "layer_types": swapped}, head=head)
    assert model({"model_type": model_type, "layer_types": default}, head=head).count == _built(model_type, cls)
