"""The element-wise terms (norms, activations, softmax) by hand at two batch sizes, causal, and through the
training step: PyTorch's FlopCounterMode counts matrix products only, so these are checked against the
conventions docs/costs.md states (the mutation run found their backward factor, the batch and the causal
pairs unchecked)."""

import pytest

from symparams import model

S, HIDDEN, LAYERS, INTER, HEADS = 2048, 4096, 32, 14336, 32  # Llama 3 8B's config.json


@pytest.mark.parametrize("b", [1, 2])
def test_elementwise_terms_of_a_causal_step_by_hand(b):
    plain, more = (model("llama-3-8b").flops(s=S, b=b, causal=True, elementwise=e) for e in (False, True))
    norms = S * (2 * LAYERS + 1) * 3 * HIDDEN  # RMSNorm: 2 + 1 scale per feature, two a layer and the final one
    activations = S * LAYERS * INTER  # SiLU on what enters down_proj
    softmax = 3 * LAYERS * HEADS * S * (S + 1) // 2  # exp, sum, division on each causal query-key pair
    forward = b * (norms + activations + softmax)
    assert (more.forward - plain.forward, more.by_kind["elementwise"]) == (forward, forward)
    assert more.training - plain.training == 3 * forward  # the backward pass counted as twice the forward


def test_elementwise_terms_land_in_the_component_they_run_in():
    plain, more = ({path: n for _, path, _, n in model("llama-3-8b").flops(s=S, elementwise=e).by_component(2)}
                   for e in (False, True))
    layers = S * 2 * LAYERS * 3 * HIDDEN + S * LAYERS * INTER + 3 * LAYERS * HEADS * S * S  # norms, SiLU, softmax
    assert more["decoder.layers"] - plain["decoder.layers"] == layers
    assert (plain["decoder.norm"], more["decoder.norm"]) == (0, S * 3 * HIDDEN)  # the final RMSNorm
