"""Bounds against toy builders (no transformers): a field that bounds a count by a layer count and stops mattering
past it gets one formula on each side of the order (the bound below the layers, as the default has it, and a
branch at or above them), and a range of layers up to a last one the base's few layers hid is found."""

import math

from symparams.analysis.inference import Relation
from symparams.analysis.inference.discovered import Branch
from symparams.analysis.inference.discovery import discover
from symparams.analysis.inference.engine import _inferred, evaluate


class BoundBuilder:
    """A toy model of ``num_layers`` layers and the parts :meth:`count` says; a subclass says which."""

    model_type, cls = "toy", "base"
    DEFAULTS = {"hidden_size": 64, "num_layers": 12}
    WIDTHS = {"layers.*.w": 1}  # each name's width, in hidden sizes

    class model_class:  # what the engine names the class by
        pass

    def __init__(self):
        self.errors, self.builds, self.failures = {}, 0, 0
        self.companions, self.kinds, self.sums = {}, {}, {}

    def defaults(self):
        return dict(self.DEFAULTS)

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        return {k: config[k] for k in [*values, *others] if k in config}

    def refusal(self, values):
        return None

    def count(self, config: dict) -> dict:
        return {"layers.*.w": config["num_layers"]}

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        if min(v for v in config.values() if isinstance(v, int)) < 1:  # a list of indices is no size
            self.failures += 1
            return None
        h = config["hidden_size"]
        shapes = {name: [(h, self.WIDTHS[name] * h)] * n for name, n in self.count(config).items() if n}
        shapes["embed"] = [(100, h)]
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total, values=config)


class SharedBlocksBuilder(BoundBuilder):
    """Zamba2's shared transformers: as many as ``num_mem_blocks``, but no more than the layers."""

    DEFAULTS = {**BoundBuilder.DEFAULTS, "num_mem_blocks": 2}
    WIDTHS = {"layers.*.w": 1, "shared.*.w": 2}

    def count(self, config: dict) -> dict:
        return {"layers.*.w": config["num_layers"], "shared.*.w": min(config["num_layers"], config["num_mem_blocks"])}


class ExpertRangeBuilder(BoundBuilder):
    """ERNIE 4.5's experts: on the layers ``i`` with ``(i + 1) % moe_layer_interval == 0`` from
    ``moe_layer_start`` to ``moe_layer_end`` (past the last layer: to the last layer), a plain MLP elsewhere."""

    DEFAULTS = {**BoundBuilder.DEFAULTS, "moe_layer_start": 1, "moe_layer_end": 11, "moe_layer_interval": 1}
    WIDTHS = {"layers.*.w": 1, "layers.*.experts": 3, "layers.*.mlp": 5}

    def count(self, config: dict) -> dict:
        layers, step = config["num_layers"], config["moe_layer_interval"]
        experts = sum(1 for i in range(layers) if (i + 1) % step == 0
                      and config["moe_layer_start"] <= i <= config["moe_layer_end"])
        return {"layers.*.w": layers, "layers.*.experts": experts, "layers.*.mlp": layers - experts}


def counted(inferred, builder: BoundBuilder, config: dict) -> tuple[int, int]:
    """The formula's count of ``config`` and the toy's."""
    config = {**builder.DEFAULTS, **config}
    formula = evaluate(inferred.total, inferred.symbols, {n: config[n] for n in inferred.symbols})
    return int(formula), builder.observe(config).total


def test_a_last_layer_the_base_s_few_layers_pass_is_found_with_the_layers_alone_raised():
    found = discover(ExpertRangeBuilder())
    # at the base's 4 layers the last expert layer (11, lowered to 4) is past them: it changes nothing; raised with
    # the layers, the first expert layer and the interval (×3) leave no layer with experts
    assert found.base["num_layers"] == 4 and found.base["moe_layer_end"] >= 3
    assert found.fields["moe_layer_end"].free and "moe_layer_end" in found.hidden


def both_sides(builder: BoundBuilder, bound: str, below: dict, beyond: dict) -> None:
    """The main formula holds with ``bound`` below the layers and counts ``below`` as the toy builds it; the
    branch at or above them counts ``beyond``; each formula miscounts the other side's config."""
    main, found = _inferred(builder, 10, 0)
    assert main.exact, main.reason
    assert Relation(bound, "below", "num_layers") in main.conditions.relations
    assert len(set(counted(main, builder, below))) == 1
    split = next(s for s in found.splits if s[:3] == (bound, "atleast", "num_layers"))
    branch, _ = _inferred(builder, 10, 0, Branch(split=(split[:3],), start=split[3]))
    assert branch.exact, branch.reason
    assert Relation(bound, "atleast", "num_layers") in branch.conditions.relations
    assert len(set(counted(branch, builder, beyond))) == 1
    # the order is a condition each formula needs, not a formality
    assert len(set(counted(main, builder, beyond))) == 2 and len(set(counted(branch, builder, below))) == 2


def test_shared_blocks_bounded_by_the_layers_get_a_formula_on_each_side():
    # 3 blocks of 10 layers; 9 blocks of 5 layers, as many as the layers
    both_sides(SharedBlocksBuilder(), "num_mem_blocks", {"num_layers": 10, "num_mem_blocks": 3},
               {"num_layers": 5, "num_mem_blocks": 9})


def test_a_range_of_expert_layers_up_to_a_last_one_gets_a_formula_on_each_side():
    # the experts on layers 3 and 5 (from 2 to 6, one in every 2) of 10; on layers 1 and 3 of 5 (to 30: the last)
    both_sides(ExpertRangeBuilder(), "moe_layer_end",
               {"num_layers": 10, "moe_layer_start": 2, "moe_layer_end": 6, "moe_layer_interval": 2},
               {"num_layers": 5, "moe_layer_start": 1, "moe_layer_end": 30, "moe_layer_interval": 2})


class GlobalIndexesBuilder(BoundBuilder):
    """SAM's (GOT-OCR2's) vision layers: global attention on the layers a list of indices the config keeps as it
    is names (2, 5, 8 and 11 of 12), windowed attention, with another table, on the others; past the last layer
    an index names nothing."""

    DEFAULTS = {**BoundBuilder.DEFAULTS, "global_attn_indexes": (2, 5, 8, 11)}
    WIDTHS = {"layers.*.w": 1, "layers.*.global": 3}

    def count(self, config: dict) -> dict:
        layers = config["num_layers"]
        listed = sum(1 for i in config["global_attn_indexes"] if i < layers)
        return {"layers.*.w": layers - listed, "layers.*.global": listed}


def test_a_list_of_layer_indices_the_config_holds_gives_a_formula_from_its_last_index_up():
    builder = GlobalIndexesBuilder()
    main, _ = _inferred(builder, 10, 0)
    assert main.exact, main.reason
    # from 12 layers every listed index names a layer: 4 global layers, the rest windowed, at any depth from there
    assert main.conditions.minimum == {"num_layers": 12}
    for layers in (12, 13, 14, 17, 20, 31):
        assert len(set(counted(main, builder, {"num_layers": layers}))) == 1, layers
    # below 12 fewer layers are global than the formula counts: a condition it needs, not a formality
    assert len(set(counted(main, builder, {"num_layers": 8}))) == 2
