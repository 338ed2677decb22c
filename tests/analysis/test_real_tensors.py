"""Costs of the classes traced on real tensors (their forward pass reads its data on the meta device), against
tiny real models that no fit or check saw.

Each class is built for real on the CPU at three times the small widths the
generator's own check used (as many layers), with random weights, and run
under PyTorch's ``FlopCounterMode`` forward and forward plus backward, at two
lengths and batches, with two seeds of weights and of token ids each (a
mixture of experts routes by both); symparams' figures for the same
config.json, read from the data alone, must equal every one.  The engine's
own checks of the data (what a meta pass raises, costs that move with the
data) are tested on the passes they judge.
"""

from __future__ import annotations

import pytest
import transformers

from symparams.analysis.inference.cpu_base import _narrow, lift_until_it_runs
from symparams.analysis.inference.long_check import long_sequence_check
from symparams.analysis.inference.observing import Observed, observe
from symparams.analysis.inference.real_tensors import SEEDS, data_independent, reads_data, routed_together
from symparams.analysis.inference.tracing import Product, Trace
from symparams.families.inferred import entries
from symparams.families.inferred import model as inferred_model
from tests.analysis.test_inferred_costs import _config, _held_bytes
from tests.reference.flops import counted, real, token_ids

#: model_type → the class checked: a length read with Tensor.item() (XLM, I-BERT), a differential attention that
#: copies out of a tensor (DiffLlama), a mixture of experts whose experts loop sizes its products by the tokens
#: routed to each expert, with a mixture of attention heads routed alike (JetMoE), an encoder-decoder that
#: asks whether its ids hold padding (a tensor's truth value, Tensor.item()) (FSMT)
TRACED_ON_CPU = {
    "xlm": "causal-lm",
    "fsmt": "seq2seq-lm",
    "ibert": "masked-lm",
    "diffllama": "causal-lm",
    "jetmoe": "causal-lm",
}


def _real(model_type: str, cls: str, config: dict, seed: int):
    built = transformers.AutoConfig.for_model(model_type, **{k: v for k, v in config.items() if k != "model_type"})
    return real(entries(model_type)[cls]["model_class"], built, seed)


def _inputs(module, seq: int, batch: int, seed: int) -> dict:
    ids = token_ids(module.config.get_text_config().vocab_size, seq, batch, seed)
    return {"input_ids": ids, **({"decoder_input_ids": ids} if module.config.is_encoder_decoder else {})}


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type", TRACED_ON_CPU)
def test_costs_traced_on_real_tensors_equal_a_tiny_real_model(model_type):
    cls = TRACED_ON_CPU[model_type]
    assert entries(model_type)[cls]["costs"]["traced_on"] == "cpu"
    config = _config(model_type, cls)
    m = inferred_model(config, head=cls)
    for seed in (0, 1):
        module = _real(model_type, cls, config, seed)
        assert m.count == sum(p.numel() for p in module.parameters())
        for seq, batch in ((5, 2), (14, 1)):
            inputs = _inputs(module, seq, batch, seed + 1)
            forward, training = counted(module, inputs)
            flops = m.flops(seq, batch)
            assert (flops.forward, flops.training) == (forward, training), (seed, seq, batch)
            assert m.kv_cache("fp32", seq, batch).total == _held_bytes(module, inputs), (seed, seq, batch)


def test_what_a_meta_pass_raises_on_reading_its_data_sends_it_to_the_cpu():
    assert reads_data("RuntimeError: Tensor.item() cannot be called on meta tensors")
    assert reads_data("NotImplementedError: Cannot copy out of meta tensor; no data!")
    assert reads_data("NotImplementedError: The register_meta function for torch.nonzero() raises unimplemented")
    assert reads_data("RuntimeError: Tensor on device meta is not on the expected device cpu!")
    assert not reads_data("RuntimeError: The size of tensor a (6) must match the size of tensor b (0)")


class _Passes:
    """A domain whose passes count ``routed`` rows through an expert for each (seed, zeroed) they are traced with."""

    def __init__(self, routed: dict):
        self.routed, self.seed, self.zeroed, self.errors = routed, None, False, []

    def observe(self, values, seq, batch, backward=False):
        rows = self.routed[self.seed, self.zeroed]
        key = ("experts", 0, "mm")
        return Observed(seq, batch, {("count", key): 1, ("factor", key, 0): rows, ("factor", key, 1): 8,
                                     ("factor", key, 2): 8})


def test_costs_that_follow_the_routing_are_refused():
    every = {(s, False): 28 for s in SEEDS}
    assert data_independent(_Passes({**every, (SEEDS[0], True): 28}), {}, 7, 2) is None
    # an expert capacity: every token routed alike (weights zero) overflows it, and some are dropped
    why = data_independent(_Passes({**every, (SEEDS[0], True): 16}), {}, 7, 2)
    assert why is not None and "depend on the data" in why
    # another seed routes otherwise
    why = data_independent(_Passes({**every, (SEEDS[1], False): 27, (SEEDS[0], True): 28}), {}, 7, 2)
    assert why is not None and "depend on the data" in why


def test_an_experts_loop_is_one_product_per_layer_over_the_rows_routed_to_each_expert():
    def mm(rows, width, outer, call):
        # each expert's gate is a slice of one parameter (id 100), its down of another (id 200)
        return Product("experts", "mm", (rows, 8, width), 2 * rows * 8 * width, 4 * rows * 8 * width,
                       weight=True, call=call, outer=outer, parameter=100 if width == 6 else 200)

    # two layers (outer calls 1 and 9), each a loop over the experts hit: a gate (8 → 6) and a down (6 → 8) per
    # expert; the second layer routes its 14 token-expert pairs otherwise than the first
    first = [mm(3, 6, 1, 2), mm(3, 8, 1, 2), mm(11, 6, 1, 3), mm(11, 8, 1, 3)]
    second = [mm(9, 6, 9, 10), mm(9, 8, 9, 10), mm(5, 6, 9, 11), mm(5, 8, 9, 11)]
    scores = Product("experts", "bmm", (2, 7, 4, 7), 2 * 2 * 7 * 4 * 7, call=3, outer=1)
    merged = routed_together(Trace(7, 2, [*first, scores, *second]))
    assert [p.factors for p in merged.products] == [(14, 8, 6), (14, 8, 8), (2, 7, 4, 7), (14, 8, 6), (14, 8, 8)]
    assert [p.forward for p in merged.products] == [2 * 14 * 8 * 6, 2 * 14 * 8 * 8, 2 * 2 * 7 * 4 * 7,
                                                    2 * 14 * 8 * 6, 2 * 14 * 8 * 8]
    assert merged.backward == Trace(7, 2, [*first, *second]).backward
    observed = observe(merged)
    assert observed.targets["count", ("experts", 0, "mm")] == 2  # once per layer
    assert observed.targets["factor", ("experts", 0, "mm"), 0] == 14
    # two parameters of one shape (a gate and an up projection of each expert, sizes equal) stay two products
    up = [Product("experts", "mm", p.factors, p.forward, p.backward, weight=True, call=p.call, outer=p.outer,
                  parameter=300) for p in first if p.parameter == 100]
    assert len(routed_together(Trace(7, 2, [*first, *up])).products) == 3


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type", ["xlm", "jetmoe"])
def test_the_long_check_traces_a_class_of_real_tensors_on_the_cpu(model_type):
    # on the meta device the pass raises (Tensor.item(), torch.nonzero): None means it ran on the CPU, at 301 tokens,
    # with the small widths and with the default layer counts, and matched the shipped formulas both times
    assert long_sequence_check(entries(model_type)["causal-lm"]) is None


class _Field:
    def __init__(self, base):
        self.base = base


class _Found:
    def __init__(self, base: dict):
        self.fields, self.base, self.relations = {n: _Field(v) for n, v in base.items()}, dict(base), set()


class _Build:
    def __init__(self, values: dict):
        self.regime, self.shapes = "dense", {"embed": [(11, values["width"])], "proj": [(values["width"],) * 2]}

    def uneven(self):
        return False


class _Builder:
    def observe(self, values):
        return _Build(values)


class _Heads:
    """A model whose parameters build at any width, and whose forward pass runs only where its heads divide the
    width (a head of ``width / heads`` channels, the second factor of its score product)."""

    def __init__(self):
        self.builder, self.experts_loop, self.tried = _Builder(), False, []

    def observe(self, values, seq=7, batch=2, regime=True):
        self.tried.append(values["width"])
        if values["width"] % values["heads"]:
            return None
        key = ("attn", 0, "bmm")
        return Observed(seq, batch, {("count", key): 1, ("factor", key, 0): batch * values["heads"],
                                     ("factor", key, 1): seq, ("factor", key, 2): values["width"] // values["heads"],
                                     ("factor", key, 3): seq})


def test_a_shrunk_width_its_heads_do_not_divide_is_raised_until_the_forward_runs_with_heads_of_3_at_least():
    original = _Found({"width": 64, "heads": 8})
    found = _Found({"width": 5, "heads": 3})  # builds (no parameter shows the heads), does not run
    domain = _Heads()
    lift_until_it_runs(domain, found, {"width": 5, "heads": 3}, original)
    # more heads: 4, 6 and 7 do not run, 5 runs with heads of 1 channel; a wider width: 6 runs with heads of 2
    # (another path than the default's), 7 and 8 do not run: 9, heads of 3
    assert found.base == {"width": 9, "heads": 3} and found.fields["width"].base == 9
    assert domain.tried[-4:] == [6, 7, 8, 9]


def test_a_shrunk_configuration_that_runs_with_no_narrow_product_is_kept():
    found, domain = _Found({"width": 12, "heads": 3}), _Heads()
    lift_until_it_runs(domain, found, {"width": 12, "heads": 3}, _Found({"width": 64, "heads": 8}))
    assert found.base == {"width": 12, "heads": 3} and domain.tried == [12]


def test_a_factor_of_2_is_narrow_unless_the_default_build_has_that_dimension():
    key = ("m", 0, "mm")
    trace = Observed(7, 2, {("count", key): 1, ("factor", key, 0): 1, ("factor", key, 1): 2, ("factor", key, 2): 9})
    assert _narrow(trace, _Build({"width": 16}))
    assert not _narrow(trace, _Build({"width": 2}))
    # the rows (the tokens an expert gets) may be few
    rows = Observed(7, 2, {("count", key): 1, ("factor", key, 0): 1, ("factor", key, 1): 5, ("factor", key, 2): 9})
    assert not _narrow(rows, _Build({"width": 16}))


@pytest.mark.crosscheck
def test_dbrx_costs_traced_at_a_raised_width_equal_a_tiny_real_model_at_other_sizes():
    # the CPU fit ran at a width of 12 for 3 heads (raised from 5, which builds but does not run); here another
    # width, head count, expert count and top-k, with the eager experts loop (each expert on its routed tokens)
    config = {"model_type": "dbrx", "d_model": 48, "n_heads": 6, "n_layers": 2, "vocab_size": 15,
              "tie_word_embeddings": False, "attn_config": {"kv_n_heads": 3, "rope_theta": 500000, "clip_qkv": 8},
              "ffn_config": {"ffn_hidden_size": 9, "moe_num_experts": 5, "moe_top_k": 2}}
    m = inferred_model(config, head="causal-lm")
    for seed in (0, 1):
        module = _real("dbrx", "causal-lm", config, seed)
        assert m.count == sum(p.numel() for p in module.parameters())
        for seq, batch in ((5, 2), (14, 1)):
            inputs = _inputs(module, seq, batch, seed + 1)
            flops = m.flops(seq, batch)
            assert (flops.forward, flops.training) == counted(module, inputs), (seed, seq, batch)
            assert m.kv_cache("fp32", seq, batch).total == _held_bytes(module, inputs), (seed, seq, batch)
