"""Kernels that work in chunks of positions (symparams/analysis/inference/chunks.py): loops folded, the chunk found,
a loop's backward fitted; and the shipped costs of a chunked type and of a short convolution against tiny real
models on both sides of a chunk's end."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from symparams.analysis.inference import chunks
from symparams.analysis.inference.cost_fitting import backward_of
from symparams.analysis.inference.fitting import products_of_names
from symparams.analysis.inference.observing import Observed, fold_loops, observe
from symparams.analysis.inference.tracing import Product, Trace, Untraceable
from symparams.core.compute import SEQ


def _loop(runs: int) -> list[Product]:
    """A call that runs a product before a loop of [x, x, y, z] ``runs`` times (the gated delta rule's scan over
    chunks), each a product of FLOPs twice its factors'; the last run's z needs no gradient."""
    before = [Product("m", "bmm", (4 * runs, 8, 3, 8), 2 * 4 * runs * 8 * 3 * 8, call=1)]
    body = []
    for i in range(runs):
        body += [Product("m", "bmm", (4, 8, 3, 5), 960, 1920, call=1), Product("m", "bmm", (4, 8, 3, 5), 960, call=1),
                 Product("m", "bmm", (4, 8, 8, 5), 2560, 5120, call=1),
                 Product("m", "bmm", (4, 3, 8, 5), 960, 0 if i == runs - 1 else 1920, call=1)]
    return before + body


def test_a_loop_of_several_products_is_folded_into_one_run_of_each():
    folded = observe(Trace(130, 1, _loop(3)), loops=True)
    once = observe(Trace(7, 1, _loop(1)), loops=True)
    assert folded.structure == once.structure  # three runs or one: the same keys
    counts = {t[1][1]: v for t, v in folded.targets.items() if t[0] == "count"}
    assert counts == {0: 1, 1: 2, 2: 1, 3: 1}  # x twice per run: one key counted twice, as an unrolled pair is
    assert [folded.targets["factor", ("m", k, "bmm"), 0] for k in range(4)] == [12, 12, 12, 12]
    assert folded.by_key["m", 3, "bmm"] == (3 * 960, 2 * 1920)  # every run's FLOPs, the last run's backward 0
    assert folded.loops == {("m", k, "bmm"): 3 for k in (1, 2, 3)}
    # unfolded, every run is a key of its own: another structure at every number of runs
    assert observe(Trace(130, 1, _loop(3))).structure != observe(Trace(7, 1, _loop(1))).structure


def test_a_loop_of_one_product_stays_one_key_counted_per_run():
    scan = [Product("m", "mm", (2, 3, 4), 48, call=1) for _ in range(6)]
    products, runs = fold_loops(scan)
    assert products == scan and runs == {}


def _observed(seq: int, chunk: int = 40) -> Observed:
    """A kernel padding ``seq`` positions to chunks of ``chunk``: a product over the chunks, and attention's
    scores (s² per sequence)."""
    n = -(-seq // chunk)
    return Observed(seq, 2, targets={("count", ("k", 0, "bmm")): 1, ("factor", ("k", 0, "bmm"), 0): 6 * n,
                                     ("count", ("a", 0, "bmm")): 1, ("factor", ("a", 0, "bmm"), 1): seq})


def test_the_chunk_is_found_where_a_target_the_length_did_not_move_first_moves():
    found = chunks.find_chunk(_observed, _observed(7), _observed(11))
    assert found == (40, {("factor", ("k", 0, "bmm"), 0)})
    # a kernel of no chunk: a length moves only what it moved at the base
    assert chunks.find_chunk(lambda s: _observed(s, 10_000), _observed(7, 10_000), _observed(11, 10_000)) is None


@pytest.mark.parametrize("chunk", [128, 64])
def test_a_length_of_another_structure_at_one_or_two_chunks_is_stepped_over(chunk):
    """At a length equal to a head width (128) attention's two products merge into one key (another structure):
    NemotronH's chunk of 128 positions, where the bisection comes to 128 between 127 and 129; LaraMini's chunks of
    64, where 128 is the end of the second chunk and the chunk is confirmed one length below it instead."""
    def observe(seq):
        obs = _observed(seq, chunk)
        if seq == 128:
            obs.targets["count", ("a", 1, "bmm")] = 1
        return obs

    found = chunks.find_chunk(observe, observe(7), observe(11))
    assert found == (chunk, {("factor", ("k", 0, "bmm"), 0)})


def _with_field(name: str, value: int, seq: int, follows: bool = True) -> Observed:
    """The kernel of :func:`_observed` with a field ``name`` at ``value``: its chunk (``follows``), or a width of
    its products only, the chunk fixed at 40."""
    obs = _observed(seq, value if follows else 40)
    obs.targets["factor", ("k", 0, "bmm"), 1] = value
    return obs


def test_a_chunk_that_is_a_fields_value_moves_with_the_field():
    base, longer = _observed(7), _observed(11)
    found = chunks.follows_field(lambda n, v, s: _with_field(n, v, s), base, longer, 40, [("chunk_size", 0)])
    assert found == ("chunk_size", 0)
    # a field equal to the chunk by chance (a width of 40): moved, the chunk stays at 40
    fixed = chunks.follows_field(lambda n, v, s: _with_field(n, v, s, follows=False), base, longer, 40,
                                 [("width", 0)])
    assert fixed is None


def test_a_chunk_one_longer_than_a_fields_value_moves_with_the_field():
    """LongT5's blocks of ``local_radius + 1`` positions: a radius of 39 chunks by 40."""
    base, longer = _observed(7), _observed(11)
    found = chunks.follows_field(lambda n, v, s: _with_field(n, v + 1, s), base, longer, 40,
                                 [("local_radius", 0), ("local_radius", 1)])
    assert found == ("local_radius", 1)  # taken as the chunk itself, its ends one position off at every try


def test_a_step_that_does_not_recur_a_chunk_further_is_no_chunk():
    def once(seq):  # a table switched once, past 100 positions, to one twice as large: no period
        obs = _observed(seq, 10_000)
        obs.targets["factor", ("k", 0, "bmm"), 0] = 6 if seq <= 100 else 12
        return obs

    assert chunks.find_chunk(once, once(7), once(11)) is None


def test_a_loops_backward_is_a_multiple_of_its_forward_and_of_one_runs():
    key = ("m", 3, "bmm")
    samples = []
    for seq in (7, 70, 130, 200, 9):
        obs = observe(Trace(seq, 1, _loop(chunks.count(seq, 64))), loops=True)
        samples.append(({}, obs))
    n = chunks.symbol(64)
    formulas = {("count", key): sp.Integer(1), ("factor", key, 0): 4 * n, ("factor", key, 1): sp.Integer(3),
                ("factor", key, 2): sp.Integer(8), ("factor", key, 3): sp.Integer(5)}
    backward = backward_of(samples, formulas, lambda values: 64, n)[key]
    assert sp.simplify(backward - 960 * 2 * (n - 1)) == 0  # every run's gradient but the last's
    with pytest.raises(Untraceable, match="other than once per chunk"):
        backward_of(samples, formulas, lambda values: 32, chunks.symbol(32))


def test_a_loops_backward_counts_each_samples_own_chunk_when_the_chunk_is_a_field():
    """Samples of chunks of 64 and 50 positions (the field drawn): each run's backward is one chunk's, the loop
    runs once per chunk of the sample's own field; taken for a fixed chunk of 64, the samples of 50 run otherwise."""
    key = ("m", 3, "bmm")
    samples = []
    for seq, size in ((7, 64), (70, 64), (130, 50), (101, 50), (9, 50), (200, 64)):
        samples.append(({"chunk_size": size}, observe(Trace(seq, 1, _loop(chunks.count(seq, size))), loops=True)))
    n = chunks.symbol(sp.Symbol("c", integer=True, positive=True))
    formulas = {("count", key): sp.Integer(1), ("factor", key, 0): 4 * n, ("factor", key, 1): sp.Integer(3),
                ("factor", key, 2): sp.Integer(8), ("factor", key, 3): sp.Integer(5)}
    backward = backward_of(samples, formulas, lambda values: values["chunk_size"], n)[key]
    assert sp.simplify(backward - 960 * 2 * (n - 1)) == 0
    with pytest.raises(Untraceable, match="other than once per chunk"):
        backward_of(samples, formulas, lambda values: 64, chunks.symbol(64))


def test_the_chunk_count_is_a_ceiling_of_the_length():
    assert [chunks.count(s, 64) for s in (1, 64, 65, 128, 129)] == [1, 1, 2, 2, 3]
    assert chunks.symbol(64).subs(SEQ, 65) == 2
    assert chunks.boundaries(64) == (64, 65, 128, 129)


def test_products_of_distinct_variables_fit_a_degree_no_basis_reaches():
    points = [{"b": b, "h": h, "n": n, "k": k, "v": v} for b in (1, 2, 3) for h in (3, 5) for n in (1, 2, 4)
              for k, v in ((5, 7), (6, 6), (11, 4))]
    values = [8192 * p["b"] * p["h"] * p["n"] * (p["k"] + p["v"]) for p in points]
    found = products_of_names(points, values, ["b", "h", "n", "k", "v"])
    assert {str(t): c for t, c in found.items()} == {"b*h*k*n": Fraction(8192), "b*h*n*v": Fraction(8192)}
    # three products are not two: refused, never a near fit
    values = [v + p["b"] for v, p in zip(values, points)]
    assert products_of_names(points, values, ["b", "h", "n", "k", "v"]) is None


# -- against tiny real models ------------------------------------------------------------------------------

def _checked(model_type: str, cls: str, lengths: tuple, **changes) -> None:
    """The shipped costs of ``model_type`` read from a config.json of three times the generator's small widths
    (as many layers of each kind, ``changes`` over them), against FlopCounterMode forward and training and the
    cache's bytes of a tiny real model, at ``lengths``."""
    from symparams.families.inferred import entries

    small = entries(model_type)[cls]["costs"]["check"]["values"]
    values = {k: v if "layer" in k or v < 3 else v * 3 for k, v in small.items() if "position" not in k}
    _checked_at(model_type, cls, lengths, {**values, **changes})


def _checked_at(model_type: str, cls: str, lengths: tuple, values: dict) -> None:
    """The shipped costs of ``model_type`` read from a config.json of ``values``, against FlopCounterMode forward
    and training and the cache's bytes of a tiny real model, at ``lengths``."""
    from symparams.analysis.inference.long_check import _written, default_config
    from symparams.families.inferred import entries
    from symparams.families.inferred import model as inferred_model
    from tests.analysis.test_inferred_costs import _held_bytes, _inputs, _real
    from tests.reference.flops import counted

    entry = entries(model_type)[cls]
    config = _written(default_config(entry), values)
    m = inferred_model(config, head=cls)
    module = _real(model_type, cls, config)
    assert m.count == sum(p.numel() for p in module.parameters())
    for seq in lengths:
        inputs = _inputs(module, seq, 2)
        flops = m.flops(seq, 2)
        assert (flops.forward, flops.training) == counted(module, inputs), seq
        assert m.kv_cache("fp32", seq, 2).total == _held_bytes(module, inputs), seq


@pytest.mark.crosscheck
def test_the_gated_delta_rule_costs_per_chunk_of_64_on_both_sides_of_a_chunks_end():
    # 64 tokens are one chunk, 65 two (the padded products and the scan's runs double), 130 three
    _checked("qwen3_5_text", "causal-lm", (64, 65, 130), **{"layer_types#linear_attention": 2})


@pytest.mark.crosscheck
def test_a_short_convolution_costs_its_unpadded_input_below_its_kernel():
    # a kernel of 7 is longer than 3 tokens: a forward with the cache pads its input to the kernel, one without
    # (the FLOPs counted) does not
    _checked("lfm2", "causal-lm", (3, 9), conv_L_cache=7)


@pytest.mark.crosscheck
def test_the_mamba2_scan_costs_per_chunk_of_its_chunk_size_on_both_sides_of_a_chunks_end():
    # chunk_size 6 (the fit's was 5): 6 tokens are one chunk, 7 two, 13 three; expand·H = D·A = 96
    _checked_at("mamba2", "base", (6, 7, 13), {"num_hidden_layers": 4, "hidden_size": 48, "expand": 2,
                                               "num_heads": 12, "head_dim": 8, "n_groups": 3, "state_size": 7,
                                               "conv_kernel": 3, "vocab_size": 50, "chunk_size": 6})


@pytest.mark.crosscheck
def test_the_falcon_h1_scan_costs_per_chunk_of_its_mamba_chunk_size():
    # its Mamba heads split d_ssm = n_heads · d_head; chunks of 8: 8 tokens one chunk, 9 two
    _checked_at("falcon_h1", "causal-lm", (8, 9), {"num_hidden_layers": 2, "hidden_size": 32,
                                                   "intermediate_size": 40, "num_attention_heads": 4,
                                                   "num_key_value_heads": 2, "mamba_d_ssm": 30, "mamba_n_heads": 6,
                                                   "mamba_d_head": 5, "mamba_n_groups": 2, "mamba_d_state": 6,
                                                   "mamba_d_conv": 3, "vocab_size": 60, "mamba_chunk_size": 8})


@pytest.mark.crosscheck
def test_longt5_local_attention_costs_per_block_of_local_radius_plus_one():
    # local_radius 4 (the fit's was 127): blocks of 5 positions, 5 tokens one block, 6 two, 11 three; each block's
    # queries see three blocks of keys, so a formula of fixed blocks, or of blocks of local_radius, counts otherwise
    _checked("longt5", "seq2seq-lm", (5, 6, 11), local_radius=4)


@pytest.mark.crosscheck
def test_lara_mini_gated_delta_rule_costs_per_chunk_of_64():
    # the chunk was found past a length of another structure (see the confirmation's test above): 64 tokens are
    # one chunk, 65 two, 129 three; a formula of one chunk counts the scan's products once at every length
    _checked("lara_mini", "causal-lm", (64, 65, 129))
