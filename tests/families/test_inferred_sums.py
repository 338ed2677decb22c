"""Shipped formulas of a type whose size must equal the sum of a list of whole numbers: Reformer's
``hidden_size``, which its axial position widths ``axial_pos_embds_dim`` (default ``[64, 192]``) must add up to.
The fit moved the size with the list's last entry taking up the move, so configs at other hidden sizes, with the
list so written, are counted as ``count --config`` reads them and compared with meta-device builds (the axial
tables on and off, the causal LM too); a list that does not add up to the size, which transformers refuses, and
one split otherwise than the fit's (whose tables have other shapes), are refused in one line."""

import pytest

from symparams.families import inferred
from symparams.families.inferred_data import OutsideConditions

CLASSES = ["base", "causal-lm", "masked-lm"]
SMALL = {"model_type": "reformer", "vocab_size": 100, "attn_layers": ["local", "lsh", "local"],
         "num_attention_heads": 3, "attention_head_size": 32, "feed_forward_size": 96}
#: (hidden_size, its axial widths): the default's first width, the last taking up the rest
SIZES = [(128, [64, 64]), (200, [64, 136]), (320, [64, 256]), (1000, [64, 936])]


def small(cls: str, **values) -> dict:
    return {**SMALL, "is_decoder": cls == "causal-lm", **values}


def shipped(cls: str) -> dict:
    return inferred.entries("reformer")[cls]


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("axial", [True, False])
@pytest.mark.parametrize("hidden, widths", SIZES)
def test_a_hidden_size_its_axial_widths_add_up_to_is_counted_as_transformers_builds_it(hidden, widths, axial, cls):
    from tests.reference.inferred_builds import built

    config = small(cls, hidden_size=hidden, axial_pos_embds_dim=widths, axial_pos_embds=axial,
                   max_position_embeddings=4096 if axial else 37)
    assert inferred.counted(shipped(cls), config)[0] == built(config, cls)


@pytest.mark.crosscheck
@pytest.mark.parametrize("cls", CLASSES)
def test_axial_widths_that_do_not_add_up_to_the_hidden_size_are_refused_as_transformers_refuses_them(cls):
    from tests.reference.inferred_builds import built

    config = small(cls, hidden_size=320)  # the default widths add up to 256
    with pytest.raises(ValueError, match="sum to config.hidden_size"):
        built(config, cls)
    with pytest.raises(OutsideConditions, match=r"axial_pos_embds_dim is \[64, 192\], the formula holds only where "
                                                r"its entries add up to hidden_size = 320") as refused:
        inferred.counted(shipped(cls), config)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("cls", CLASSES)
def test_axial_widths_split_otherwise_than_the_fit_are_refused_in_one_line(cls):
    # transformers builds [128, 128] (tables 64×128 and 64×128, not the fit's 64×64 and 64×192)
    with pytest.raises(OutsideConditions, match=r"its default \[64, 192\] but for its last entry") as refused:
        inferred.counted(shipped(cls), small(cls, hidden_size=256, axial_pos_embds_dim=[128, 128]))
    assert "\n" not in str(refused.value)


@pytest.mark.crosscheck
@pytest.mark.parametrize("field", ["local_num_chunks_after", "lsh_num_chunks_after"])
def test_a_later_chunk_the_causal_lm_class_refuses_is_refused_as_its_only_value(field):
    from tests.reference.inferred_builds import built

    config = small("causal-lm", hidden_size=320, axial_pos_embds_dim=[64, 256], **{field: 1})
    with pytest.raises(AssertionError, match=field):
        built(config, "causal-lm")
    with pytest.raises(OutsideConditions, match=rf"{field} = 0 \(the only value transformers accepts\)"):
        inferred.counted(shipped("causal-lm"), config)
    assert field in shipped("causal-lm")["conditions"]["sole"]
