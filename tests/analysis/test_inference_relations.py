"""Held fields against toy builders (no transformers): a field the config keeps at most another is free within
that order, and a value the config class refuses to change is its only one even beside a label map."""

from symparams.analysis.inference.discovery import discover
from symparams.analysis.inference.engine import conditions
from tests.analysis.test_inference_discovery import ToyBuilder


class GroupedRoutingBuilder(ToyBuilder):
    """DeepSeek-style grouped routing: ``1 ≤ topk_group ≤ n_group``, both 1 by default, checked by the config
    class; neither shapes a tensor unless ``topk_shapes`` (then a table of ``topk_group`` rows, and one of
    ``n_group`` rows)."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "n_group": 1, "topk_group": 1}
    topk_shapes = False

    def refusal(self, values):
        config = {**self.DEFAULTS, **values}
        return None if 1 <= config["topk_group"] <= config["n_group"] else "topk_group must be in [1, n_group]"

    def read_back(self, values, others=()):
        return None if self.refusal(values) else super().read_back(values, others)

    def observe(self, values):
        found = None if self.refusal(values) else super().observe(values)
        if found is None or not self.topk_shapes:
            return found
        config = {**self.DEFAULTS, **values}
        tables = {"router.groups": [(config["topk_group"], 2)], "router.gate": [(config["n_group"], 2)]}
        added = 2 * (config["topk_group"] + config["n_group"])
        return type(found)({**found.shapes, **tables}, found.total + added, found.trainable + added)


def test_a_field_the_config_keeps_at_most_another_moves_with_it_and_the_order_is_a_condition():
    builder = GroupedRoutingBuilder()
    found = discover(builder)
    # held at 1, a config.json with 4 groups and a top-k of 2 (as real ones have) would be refused for nothing
    assert found.fields["topk_group"].kind == "irrelevant"
    assert found.orders == {("topk_group", "n_group")}
    where = conditions(builder, found)
    assert "n_group ≥ topk_group" in [str(r) for r in where.relations]
    assert where.violated({"n_group": 2, "topk_group": 3}) == ["n_group ≥ topk_group"]
    assert where.violated({"n_group": 4, "topk_group": 2}) == []
    assert not any("divides" in str(r) for r in where.relations)  # 2 of 3 groups is a config too


def test_a_field_kept_below_another_that_shapes_a_tensor_is_a_variable():
    builder = GroupedRoutingBuilder()
    builder.topk_shapes = True
    found = discover(builder)
    assert found.fields["topk_group"].free
    # the bound's own effect, seen as the two moved together, is not taken for this field's
    assert found.fields["topk_group"].effects == {("dim", "router.groups", 0)}
    assert found.fields["n_group"].effects == {("dim", "router.gate", 0)}


def test_a_field_that_fails_to_build_otherwise_for_the_model_s_sake_is_no_order():
    class BuildOnlyBuilder(GroupedRoutingBuilder):  # the config takes any value, the model refuses the same ones
        def refusal(self, values):
            return None

        def read_back(self, values, others=()):
            return ToyBuilder.read_back(self, values, others)

        def observe(self, values):
            config = {**self.DEFAULTS, **values}
            return ToyBuilder.observe(self, values) if 1 <= config["topk_group"] <= config["n_group"] else None

    assert not discover(BuildOnlyBuilder()).orders


def test_a_value_refused_beside_a_label_map_is_still_the_only_one():
    class FourTilesBuilder(ToyBuilder):  # Mllama: "max_num_tiles must be 4 for default supported aspect ratios"
        DEFAULTS = {**ToyBuilder.DEFAULTS, "max_num_tiles": 4, "id2label": {0: "LABEL_0", 1: "LABEL_1"}}

        def refusal(self, values):
            return None if values.get("max_num_tiles", 4) == 4 else "max_num_tiles must be 4"

        def read_back(self, values, others=()):
            return None if self.refusal(values) else super().read_back(values, others)

        def observe(self, values):
            return None if self.refusal(values) else super().observe(values)

    # keyed 0 and 1, below 4, the label map was taken for a list of one entry per layer
    found = discover(FourTilesBuilder())
    assert found.fields["max_num_tiles"].kind == "fixed" and found.fields["max_num_tiles"].sole


class CodebookBuilder(ToyBuilder):
    """Mimi's codebook size: "must be a power of 2", checked by the config class; a table of its rows only when
    ``shapes``."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "codebook_size": 2048}
    shapes = False

    def refusal(self, values):
        size = {**self.DEFAULTS, **values}["codebook_size"]
        return None if size > 0 and size & (size - 1) == 0 else "codebook_size must be a power of 2"

    def read_back(self, values, others=()):
        return None if self.refusal(values) else super().read_back(values, others)

    def observe(self, values):
        found = None if self.refusal(values) else super().observe(values)
        if found is None or not self.shapes:
            return found
        rows = {**self.DEFAULTS, **values}["codebook_size"]
        return type(found)({**found.shapes, "codebook": [(rows, 2)]}, found.total + 2 * rows,
                           found.trainable + 2 * rows)


def test_a_power_of_two_the_config_takes_only_doubled_that_shapes_nothing_is_irrelevant_and_drawn_doubled():
    import random

    from symparams.analysis.inference.sampling import draw

    found = discover(CodebookBuilder())
    assert found.fields["codebook_size"].kind == "irrelevant" and found.fields["codebook_size"].step == "double"
    drawn = {draw(found, random.Random(seed), every=True)["codebook_size"] for seed in range(40)}
    # moved as other irrelevant fields are (±2, or down to any value), every draw would be refused
    assert drawn <= {1024, 2048, 4096, 8192} and len(drawn) > 1


def test_a_power_of_two_that_shapes_a_tensor_stays_held():
    builder = CodebookBuilder()
    builder.shapes = True
    # its formula would hold at powers of two only, a condition not written: held, and refused elsewhere
    assert discover(builder).fields["codebook_size"].kind == "fixed"


def test_the_costs_move_a_power_of_two_by_doubling_as_discovery_did():
    from symparams.analysis.inference.costs import _moves

    found = discover(CodebookBuilder())
    start = {n: f.base for n, f in found.fields.items()}
    # by one or ×3 the config refuses it: no move would trace, and the costs would hold it at 2048
    assert _moves(found, "codebook_size", start) == [{"codebook_size": 4096}, {"codebook_size": 1024}]


class _Body:
    """A module the head builds: it fails on a negative width (the modeling code failing, no refusal)."""

    def __init__(self, config):
        if config["width"] < 0:
            raise ValueError("negative dimensions are not allowed")


class _CausalHead:
    """Reformer's causal LM head in miniature: its own ``__init__`` asserts a value its config class takes."""

    @classmethod
    def _from_config(cls, config):
        return cls(config)

    def __init__(self, config):
        assert config["after"] == 0, f"make sure that `config.after` is set to 0 and not {config['after']}"
        self.body = _Body(config)


def test_a_value_the_model_class_refuses_in_its_own_init_is_a_refusal_and_a_module_failing_is_not():
    from symparams.analysis.inference.probing import Builder

    builder = object.__new__(Builder)  # no transformers class: the toy head is built as one would be
    builder.model_class = _CausalHead
    # (pytest's rewritten assert adds its own lines to the message)
    assert builder.class_refusal({"after": 1, "width": 4}).startswith("make sure that `config.after` is set to 0")
    assert builder.class_refusal({"after": 0, "width": -1}) is None
    assert builder.class_refusal({"after": 0, "width": 4}) is None
