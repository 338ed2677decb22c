"""Layers of one structure that run apart by their place (Funnel's pooled blocks, Pegasus-X's staggered odd layers):
keyed by their place in a period of their list, fitted at a sequence pooled to a fixed fraction, and read back on
their list's block."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from symparams.analysis.inference import tracing
from symparams.analysis.inference.cost_fitting import _pooled
from symparams.analysis.inference.cost_keying import MOST_PERIOD, keyed_apart, lists_of
from symparams.analysis.inference.costs import B, S
from symparams.analysis.inference.observing import CopiesDiffer, observe
from symparams.families.inferred_costs import _owner


class Pooled(nn.Module):
    """Three blocks of two layers, each block at half the last one's positions (rounded up), as Funnel pools."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.ModuleList(nn.Linear(4, 4) for _ in range(2)) for _ in range(3))

    def forward(self, x):
        for block in self.blocks:
            for layer in block:
                x = layer(x)
            x = x[:, ::2]  # positions 0, 2, 4, …: ceil(n/2) of them
        return x


def _trace(model, seq: int, positions=None):
    model.train()
    x = torch.ones(1, seq, 4)
    recorder = tracing.Recorder(frozenset(id(p) for p in model.parameters()))
    paths = tracing.module_paths(model, positions=positions)

    def enter(module, args):
        recorder.calls += 1  # each call its own: the products of one call of a module are keyed by their order
        recorder.stack.append((paths[id(module)], recorder.calls))

    def leave(module, args, output):
        recorder.stack.pop()

    hooks = [h for m in model.modules() for h in (m.register_forward_pre_hook(enter), m.register_forward_hook(leave))]
    with recorder:
        model(x)
    for h in hooks:
        h.remove()
    return tracing.Trace(seq, 1, recorder.products, traced_backward=False)


def test_a_list_keyed_by_place_names_each_element_by_its_index_modulo_the_period():
    model = Pooled()
    paths = tracing.module_paths(model, positions={"blocks": 2})
    by_name = {name: paths[id(m)] for name, m in model.named_modules()}
    assert [by_name[f"blocks.{i}.0"] for i in range(3)] == ["blocks.*@0.*", "blocks.*@1.*", "blocks.*@0.*"]
    # an inner list keyed too: its path has every index as a plain *
    paths = tracing.module_paths(model, positions={"blocks": 3, "blocks.*": 2})
    assert {paths[id(m)] for name, m in model.named_modules() if name.startswith("blocks.1.")} == \
        {"blocks.*@1.*@0", "blocks.*@1.*@1"}
    assert tracing.module_paths(model)[id(model.blocks[2][1])] == "blocks.*.*"  # no positions: plain


def test_pooled_blocks_differ_between_copies_until_each_block_is_keyed_apart():
    model = Pooled()
    with pytest.raises(CopiesDiffer) as caught:
        observe(_trace(model, 7))
    assert lists_of(caught.value.module) == ["blocks", "blocks.*"]
    domain = SimpleNamespace(positions={}, by_names=False, by_calls=False)
    found = keyed_apart(domain, lambda: observe(_trace(model, 7, domain.positions)))
    # the period grows to 3 (blocks 0 and 2 run at 7 and 2 positions); the layers within a block are equal
    assert domain.positions == {"blocks": 3, "blocks.*": 3}
    rows = {t[1][0]: found.targets["factor", t[1], 0] for t in found.targets if t[0] == "count"}
    assert rows == {"blocks.*@0.*@0": 7, "blocks.*@0.*@1": 7, "blocks.*@1.*@0": 4, "blocks.*@1.*@1": 4,
                    "blocks.*@2.*@0": 2, "blocks.*@2.*@1": 2}


def test_copies_no_period_tells_apart_stay_refused():
    def differ():
        raise CopiesDiffer("layers.*.mlp", "the products of layers.*.mlp differ between its copies")

    domain = SimpleNamespace(positions={}, by_names=False, by_calls=False)
    with pytest.raises(CopiesDiffer):
        keyed_apart(domain, differ)
    assert domain.positions == {"layers": MOST_PERIOD}
    outside = SimpleNamespace(positions={}, by_names=False, by_calls=False)
    with pytest.raises(CopiesDiffer):  # a module in no list: nothing to key by place
        keyed_apart(outside, lambda: (_ for _ in ()).throw(CopiesDiffer("lm_head", "differ")))
    assert outside.positions == {}


@pytest.mark.parametrize("up", [True, False])
def test_a_sequence_pooled_by_a_fixed_stride_is_fitted_exactly(up):
    points = [{S: s, B: b, "H": h} for s in range(3, 15) for b in (1, 2, 3) for h in (4, 6)]
    rounded = [(-(-p[S] // 4) if up else p[S] // 4) for p in points]
    values = [p[B] * r * p["H"] for p, r in zip(points, rounded)]  # a matmul's rows: the batch times ⌈s/4⌉
    found = _pooled(points, [p[B] * r for p, r in zip(points, rounded)], [S, B], frozenset())
    assert {str(t): str(c) for t, c in found.items()} == {f"<b>*{'ceiling' if up else 'floor'}(<s>/4)": "1"}
    assert _pooled(points, values, [S, B], frozenset()) is None  # H not among the names: no function of them
    assert _pooled(points, [p[B] * p["H"] for p in points], [B, "H"], frozenset()) is None  # no sequence


def test_a_layer_keyed_by_place_is_read_on_its_lists_block():
    paths = {"": None, "encoder": None, "encoder.blocks.*.*.attention": None}
    assert _owner("encoder.blocks.*@1.*@0.attention.q_head", paths) == "encoder.blocks.*.*.attention"
    assert _owner("encoder.blocks.*@1.*@0.attention", paths) == "encoder.blocks.*.*.attention"


def test_a_layer_traced_as_a_kind_is_read_on_its_stacks_block_where_the_count_has_one_for_every_kind():
    """Nemotron-H's layers are traced as kinds (``layers.*1`` a Mamba mixer, ``*3`` attention, ...) and counted as
    one stack whose mixer holds every kind's parameters: each product is the stack's mixer's, or (a module with no
    parameter) its nearest ancestor's; it was the root's, and the FLOPs table showed the layers at 0."""
    paths = {"": None, "layers.*": None, "layers.*.mixer": None, "layers.*.mixer.in_proj": None}
    assert _owner("layers.*1.mixer.in_proj", paths) == "layers.*.mixer.in_proj"
    assert _owner("layers.*3.mixer.rotary", paths) == "layers.*.mixer"
    assert _owner("layers.*1.mixer.in_proj", {**paths, "layers.*1.mixer.in_proj": None}) == "layers.*1.mixer.in_proj"


def test_nemotron_h_flops_table_puts_every_layers_flops_on_its_layers():
    import transformers

    from symparams.families.inferred import model as inferred_model

    config = {**transformers.AutoConfig.for_model("nemotron_h").to_dict(), "model_type": "nemotron_h"}
    f = inferred_model(config, head=None).flops(100)
    rows = {path: flops for _, path, _, flops in f.by_component(depth=1)}
    assert rows["layers"] == f.forward > 0


def test_the_flops_of_a_tied_lm_head_are_in_its_row():
    import transformers

    from symparams.families.inferred import model as inferred_model

    config = {**transformers.AutoConfig.for_model("smollm3").to_dict(), "model_type": "smollm3"}
    f = inferred_model(config, head="causal-lm").flops(100)
    rows = {path: flops for _, path, _, flops in f.by_component(depth=1)}
    h, v = config["hidden_size"], config["vocab_size"]
    assert rows["lm_head"] == 2 * 100 * h * v  # one [100, H] @ [H, V] product
    assert sum(rows.values()) == f.forward


def test_a_head_the_formula_holds_tied_has_its_flops_in_a_row_of_its_own():
    """Falcon's formula holds ``tie_word_embeddings`` true, so its count has no ``lm_head``; the head's product
    is still run, and lands in a weightless ``lm_head`` row, not in none."""
    import transformers

    from symparams.families.inferred import model as inferred_model

    config = {**transformers.AutoConfig.for_model("falcon").to_dict(), "model_type": "falcon"}
    f = inferred_model(config, head="causal-lm").flops(101)
    rows = {path: flops for _, path, _, flops in f.by_component(depth=1)}
    assert rows["lm_head"] == 2 * 101 * config["hidden_size"] * config["vocab_size"]  # [101, H] @ [H, V]
    assert sum(rows.values()) == f.forward


#: a base model, an encoder-decoder's weightless head, a hybrid stack (the tied heads of SmolLM3 and Falcon: above)
ROWS = [("smollm3", None), ("t5", "seq2seq-lm"), ("nemotron_h", None)]


@pytest.mark.parametrize("model_type, head", ROWS, ids=lambda v: str(v))
def test_the_flops_tables_rows_add_up_to_the_forward_pass(model_type, head):
    import transformers

    from symparams.families.inferred import model as inferred_model

    config = {**transformers.AutoConfig.for_model(model_type).to_dict(), "model_type": model_type}
    f = inferred_model(config, head=head).flops(101)
    assert sum(flops for _, _, _, flops in f.by_component(depth=1)) == f.forward > 0
