"""Discovery against toy builders (no transformers): which fields are sizes, how they relate, which are lifted,
held, left out or branched, and how layers of several kinds are named."""

import math

import sympy as sp
import torch

from symparams.analysis.inference import Inferred, Relation, symbols_for
from symparams.analysis.inference.discovery import discover
from symparams.analysis.inference.relations import missed_relations
from symparams.core.symbols import SYMBOLS


def test_layers_of_several_kinds_are_named_by_kind_in_layer_order():
    from symparams.analysis.inference.probing import _layer_kinds, _normalise

    lists = {"layers", "layers.0.experts", "layers.2.experts"}
    names = ["embed.weight", "layers.0.attn.weight", "layers.0.experts.0.w", "layers.0.experts.1.w",
             "layers.1.attn.weight", "layers.1.mlp.weight", "layers.2.attn.weight", "layers.2.experts.0.w",
             "layers.2.experts.1.w"]
    wide = {"layers.1.attn.weight": (8, 4)}  # a global-attention layer, wider than the sliding ones
    named = [(n.split("."), wide.get(n, (4, 4))) for n in names]
    kinds = _layer_kinds(named, lists)
    assert [_normalise(p, lists, kinds) for p, _ in named] == [
        "embed.weight", "layers.*1.attn.weight", "layers.*1.experts.*.w", "layers.*1.experts.*.w",
        "layers.*2.attn.weight", "layers.*2.mlp.weight", "layers.*1.attn.weight", "layers.*1.experts.*.w",
        "layers.*1.experts.*.w"]
    # names that keep one shape: plain *, a name only some layers hold counts fewer instances
    even = [(n.split("."), (4, 4)) for n in names]
    assert {_normalise(p, lists, _layer_kinds(even, lists)) for p, _ in even} == {
        "embed.weight", "layers.*.attn.weight", "layers.*.experts.*.w", "layers.*.mlp.weight"}


def test_a_layer_merely_lacking_names_is_of_the_kind_that_has_them():
    from symparams.analysis.inference.probing import _layer_kinds, _normalise

    # sliding layers (q narrower) and a full one; layer 0 has no residual mix, layer 3 reuses another's keys
    lists = {"layers"}
    shapes = {0: {"q": (4, 4), "k": (4, 4)}, 1: {"q": (4, 4), "k": (4, 4), "mix": (4,)},
              2: {"q": (8, 4), "k": (8, 4), "mix": (4,)}, 3: {"q": (4, 4), "mix": (4,)}}
    named = [(f"layers.{i}.{n}".split("."), shape) for i, found in shapes.items() for n, shape in found.items()]
    kinds = _layer_kinds(named, lists)
    assert sorted({_normalise(p, lists, kinds) for p, _ in named}) == [
        "layers.*1.k", "layers.*1.mix", "layers.*1.q", "layers.*2.k", "layers.*2.mix", "layers.*2.q"]


def test_the_tensors_of_a_parameter_list_in_several_shapes_are_kinds():
    from symparams.analysis.inference.probing import _layer_kinds, _normalise

    lists = {"embeddings.weights"}  # Reformer's axial position tables: [64, 1, 64] and [1, 64, 192]
    named = [("embeddings.weights.0".split("."), (64, 1, 64)), ("embeddings.weights.1".split("."), (1, 64, 192))]
    kinds = _layer_kinds(named, lists)
    assert [_normalise(p, lists, kinds) for p, _ in named] == ["embeddings.weights.*1", "embeddings.weights.*2"]


def test_a_dict_of_numbered_modules_is_a_list():
    from torch import nn

    from symparams.analysis.inference.probing import observation_of

    class Experts(nn.ModuleDict):  # NLLB-MoE's: expert_0, expert_1, … beside a dropout
        def __init__(self, n):
            super().__init__({f"expert_{i}": nn.Linear(4, 8) for i in range(n)})
            self.dropout = nn.Dropout(0.1)

    with torch.device("meta"):
        found = observation_of(nn.ModuleDict({"experts": Experts(3), "norm": nn.LayerNorm(4)}))
    assert {n: len(s) for n, s in found.shapes.items()} == {
        "experts.*.weight": 3, "experts.*.bias": 3, "norm.weight": 1, "norm.bias": 1}


class ToyBuilder:
    """A model without transformers: a width the head count must divide (2304 and 8: ×3 divides it, ×7 does
    not), a token-type table only when its size is above 0, and a stack of layers."""

    DEFAULTS = {"hidden_size": 2304, "num_heads": 8, "type_vocab_size": 0, "num_layers": 2}

    def __init__(self):
        self.errors, self.builds = {}, 0
        self.companions, self.kinds, self.sums = {}, {}, {}

    def defaults(self):
        return dict(self.DEFAULTS)

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        return {k: config[k] for k in [*values, *others]}

    def refusal(self, values):
        return None  # the config takes any values; the model may not build

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, a, t, n = (config[k] for k in ("hidden_size", "num_heads", "type_vocab_size", "num_layers"))
        if h % a or min(h, a, n) < 1 or t < 0:
            self.errors[tuple(values.items())] = "ValueError: the width is not a multiple of the heads"
            return None
        shapes = {"embed": [(100, h)], "layers.*.q": [(h, h)] * n, "layers.*.norm": [(h // a,)] * n}
        if t:
            shapes["token_type"] = [(t, h)]
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total)


def test_a_held_field_whose_next_value_only_adds_parameters_is_lifted_to_a_variable():
    found = discover(ToyBuilder())
    assert found.lifted == {"type_vocab_size": 0} and found.fields["type_vocab_size"].free


class GlobalLayerBuilder(ToyBuilder):
    """A global layer in every 6 (of 12 by default), with a table of its own: a base of 4 layers has none."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "num_layers": 12}

    def observe(self, values):
        found = super().observe(values)
        config = {**self.DEFAULTS, **values}
        if found is None or config["num_layers"] < 6:
            return found
        table = [(config["hidden_size"], 2)] * (config["num_layers"] // 6)
        return type(found)({**found.shapes, "layers.*.global": table}, found.total, found.trainable)


def test_a_base_keeps_every_kind_of_layer_the_default_has():
    assert discover(GlobalLayerBuilder()).base["num_layers"] == 6
    assert discover(ToyBuilder()).base.get("num_layers", 2) == 2  # 2 layers by default: not lowered


class ExclusiveTablesBuilder(ToyBuilder):
    """Two tables that each build alone above size 0 but not together (one or the other)."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "segment_vocab_size": 0}

    def observe(self, values):
        config = {**self.DEFAULTS, **values}
        if config["type_vocab_size"] and config["segment_vocab_size"]:
            self.builds += 1
            self.errors[tuple(values.items())] = "ValueError: a token-type table or a segment table, not both"
            return None
        found = super().observe(values)
        if found is None or not config["segment_vocab_size"]:
            return found
        table = (config["segment_vocab_size"], config["hidden_size"])
        return type(found)({**found.shapes, "segment": [table]}, found.total + math.prod(table),
                           found.trainable + math.prod(table))


def test_fields_lifted_together_that_do_not_build_together_are_held_instead():
    found = discover(ExclusiveTablesBuilder())
    assert found.lifted == {}
    assert found.fields["type_vocab_size"].kind == found.fields["segment_vocab_size"].kind == "fixed"


class PeriodicAttentionBuilder(ToyBuilder):
    """Jamba's layers: an attention layer where ``i % attn_layer_period == attn_layer_offset`` (the offset below
    the period, which the config checks), a recurrent one elsewhere; 32 layers, one in every 8 from the fifth, by
    default.  The base keeps 6 layers, and the period is lowered with them (a layer field): one attention layer
    there whatever the period above the offset, or the offset below the period."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "num_layers": 32, "attn_layer_period": 8, "attn_layer_offset": 4}

    def observe(self, values):
        config = {**self.DEFAULTS, **values}
        period, offset = config["attn_layer_period"], config["attn_layer_offset"]
        if not 0 <= offset < period:
            self.builds += 1
            self.errors[tuple(values.items())] = "ValueError: the offset must be smaller than the period"
            return None
        found = super().observe(values)
        if found is None:
            return found
        attention = sum(1 for i in range(config["num_layers"]) if i % period == offset)
        h = config["hidden_size"]
        shapes = {**found.shapes, "layers.*.attn": [(h, 3 * h)] * attention,
                  "layers.*.scan": [(h, 2)] * (config["num_layers"] - attention)}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return type(found)(shapes, total, total)


def test_a_period_of_layers_the_base_ends_before_is_a_variable_and_its_offset_below_it():
    found = discover(PeriodicAttentionBuilder())
    assert found.base["num_layers"] == 6 and found.base["attn_layer_period"] == 6
    # at the base's 6 layers both change nothing: held there, 18 layers with a period of 6 from 4 would be
    # counted with one attention layer where they have 3
    assert found.fields["attn_layer_period"].free and found.fields["attn_layer_offset"].free
    assert ("layers.*.attn" in {e[1] for e in found.fields["attn_layer_offset"].effects})
    assert ("attn_layer_offset", "attn_layer_period") in found.relations


def test_draws_end_the_layers_where_a_hidden_pattern_starts_again_one_time_in_four():
    # only where L - offset is a multiple of the period do floor((L - o)/p) and floor((L - o - 1)/p) part: drawn
    # freely, 4 of 200 draws land there (Jamba's causal LM fitted its biases on none of them)
    import random

    from symparams.analysis.inference.sampling import draw

    found = discover(PeriodicAttentionBuilder())
    rng = random.Random(0)
    draws = [draw(found, rng) for _ in range(200)]
    meeting = [v for v in draws if v["num_layers"] > v["attn_layer_offset"]
               and (v["num_layers"] - v["attn_layer_offset"]) % v["attn_layer_period"] == 0]
    assert len(meeting) >= 40


class OneExpertBuilder(ToyBuilder):
    """Jamba's feed-forward: a router and ``num_experts`` experts, or a plain MLP (no router) for one expert."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "num_experts": 16}

    def observe(self, values):
        found = super().observe(values)
        experts, h = {**self.DEFAULTS, **values}["num_experts"], {**self.DEFAULTS, **values}["hidden_size"]
        if found is None or experts < 1:
            return None
        shapes = {**found.shapes, "mlp.experts.*": [(h, 4 * h)] * experts, "mlp.router": [(experts, h)]} \
            if experts > 1 else {**found.shapes, "mlp.fc": [(h, 4 * h)]}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return type(found)(shapes, total, total)


def test_a_size_whose_value_1_builds_other_parameters_is_no_lower_than_2():
    found = discover(OneExpertBuilder())
    # counted with the router, one expert would be h more than the plain MLP transformers builds
    assert found.fields["num_experts"].free and found.least == {"num_experts": 2}
    assert "num_heads" not in found.least  # one head builds the same parameters


def test_a_divisibility_the_first_probe_missed_is_found_when_draws_fail():
    builder = ToyBuilder()
    found = discover(builder)
    assert ("num_heads", "hidden_size") not in found.relations  # 24 divides 2304: the ×3 probe built
    assert missed_relations(builder, found)
    assert ("num_heads", "hidden_size") in found.relations


def test_fields_take_the_standard_symbols_once():
    mapped = symbols_for(["hidden_size", "d_model", "num_key_value_heads", "q_lora_rank", "rope_dim"])
    assert mapped["hidden_size"] is SYMBOLS["H"].symbol
    assert str(mapped["d_model"]) == "d_model"  # H is taken: the second field keeps its name
    assert mapped["num_key_value_heads"] is SYMBOLS["G"].symbol and mapped["q_lora_rank"] is SYMBOLS["R_q"].symbol
    assert mapped["rope_dim"].is_integer and mapped["rope_dim"].is_positive
    assert symbols_for(["rope_dim"])["rope_dim"] is mapped["rope_dim"]  # created once


def test_relations_say_where_a_configuration_is_outside_them():
    assert Relation("heads", "divides", "hidden").holds({"heads": 12, "hidden": 768})
    assert not Relation("heads", "divides", "hidden").holds({"heads": 7, "hidden": 768})
    assert Relation("k", "below", "layers").holds({"k": 1, "layers": 2})


class HeadWidthBuilder(ToyBuilder):
    """XLNet's head width: computed from the width and the heads when left out, refused unless it is that."""

    DEFAULTS = {"hidden_size": 1024, "num_heads": 16, "num_layers": 2}

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        config.setdefault("head_width", config["hidden_size"] // config["num_heads"])
        return {k: config[k] for k in [*values, *others]}

    def defaults(self):
        return self.read_back({}, [*self.DEFAULTS, "head_width"])

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = self.read_back(values, ["head_width", *self.DEFAULTS])
        h, a, d, n = (config[k] for k in ("hidden_size", "num_heads", "head_width", "num_layers"))
        if min(h, a, d, n) < 1 or d * a != h:
            return None
        shapes = {"embed": [(100, h)], "layers.*.q": [(h, a, d)] * n}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total, values=config)


def test_a_pair_moved_only_together_at_unequal_bases_is_written_as_their_bases_divide():
    """Moved alone, the width takes its head width along; the head width moves only with the width.  The old
    engine wrote the reversed pair as ``hidden_size < head_width``, which no config meets, its default least."""
    from symparams.analysis.inference.engine import conditions

    builder = HeadWidthBuilder()
    found = discover(builder)
    where = conditions(builder, found)
    assert Relation("head_width", "divides", "hidden_size") in where.relations
    assert not [r for r in where.relations if r.kind == "below"]
    assert where.violated(builder.defaults()) == []


def test_a_verification_applies_the_formula_s_own_conditions_to_the_default_config(monkeypatch):
    from symparams.analysis.inference import engine

    builder = HeadWidthBuilder()
    found = discover(builder)
    contradictory = (Relation("hidden_size", "below", "head_width"),)
    monkeypatch.setattr(engine, "_relations", lambda found: contradictory)
    h, a, d, n = (sp.Symbol(k) for k in ("h", "a", "d", "n"))
    symbols = {"hidden_size": h, "num_heads": a, "head_width": d, "num_layers": n}
    total = 100 * h + n * h * a * d  # right wherever the model builds
    verified = engine.verify(builder, found, total, {k: v for k, v in symbols.items() if k in found.free}, 4, 0)
    assert verified.outside == ("hidden_size < head_width",) and not verified.passed
    assert engine._failure(verified).startswith("the default config breaks the formula's own conditions")


class InnerWidthBuilder(ToyBuilder):
    """GPT-2's ``n_inner``: unset by default (4·H), a width of its own when set; and an embedding of its own size,
    projected to the width only where the two differ (ELECTRA)."""

    DEFAULTS = {"hidden_size": 64, "num_heads": 4, "embedding_size": 32, "num_layers": 2, "n_inner": None}

    def declares_int(self, name):
        return name == "n_inner"

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, a, e, n, inner = (config[k] for k in ("hidden_size", "num_heads", "embedding_size", "num_layers", "n_inner"))
        if h % a or min(h, a, e, n, inner or 1) < 1:
            return None
        shapes = {"embed": [(100, e)], "layers.*.fc": [(h, inner or 4 * h)] * n}
        if e != h:
            shapes["project"] = [(e, h)]
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total, values=config)


def test_an_unset_width_and_two_widths_meeting_start_formulas_of_their_own():
    from symparams.analysis.inference.discovered import Branch
    from symparams.analysis.inference.engine import branch_starts, conditions

    builder = InnerWidthBuilder()
    found = discover(builder)
    assert found.optional == {("n_inner",): 16}
    assert [s[:3] for s in found.splits] == [("embedding_size", "equals", "hidden_size")]
    main = conditions(builder, found)
    assert "n_inner" in main.unset and Relation("embedding_size", "differs", "hidden_size") in main.relations
    starts = branch_starts(Inferred("toy", "base", "Toy", "", None, {}, {}, main, None, 0, 0, 0.0), found)
    assert starts == [Branch(given=(("n_inner", 16),)),
                      Branch(split=(("embedding_size", "equals", "hidden_size"),),
                             start=(("embedding_size", 64),))]
    inner = discover(builder, branch=starts[0])
    assert inner.fields["n_inner"].free and "n_inner" in conditions(builder, inner).given
    equal = conditions(builder, discover(builder, branch=starts[1]))
    assert equal.split == ("embedding_size = hidden_size",) and Relation("embedding_size", "equals",
                                                                         "hidden_size") in equal.relations


class AttentionTypesBuilder(ToyBuilder):
    """GPT-Neo: a layer count the config refuses to move unless its run-length list of layer kinds moves too."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "hidden_size": 64, "num_heads": 4, "num_layers": 24,
                "attention_types": [[["global", "local"], 12]]}

    def refusal(self, values):
        from symparams.analysis.inference.probing import with_companions
        from symparams.families.inferred import expanded

        config = {**self.DEFAULTS, **with_companions(values, self.companions)}
        return None if len(expanded(config["attention_types"])) == config["num_layers"] else "len(attention_layers)"

    def read_back(self, values, others=()):
        return None if self.refusal(values) else super().read_back(values, others)

    def observe(self, values):
        return None if self.refusal(values) else super().observe(values)


def test_a_layer_count_moves_with_its_per_layer_list_retiled():
    builder = AttentionTypesBuilder()
    found = discover(builder)
    assert builder.companions == {"num_layers": ("attention_types", [[["global", "local"], 12]])}
    assert found.fields["num_layers"].free


# -- against transformers (slow) -----------------------------------------------------------------------------------

#: (model_type, class) the engine is checked on; each is inferred once for the module
def test_a_value_the_config_class_refuses_to_change_is_its_only_one():
    class TopOneBuilder(ToyBuilder):  # ZAYA: "currently supports num_experts_per_tok=1 only"
        DEFAULTS = {**ToyBuilder.DEFAULTS, "num_experts_per_tok": 1, "attention_layers": ["global", "local"]}

        def read_back(self, values, others=()):
            return None if self.refusal(values) else super().read_back(values, others)

        def refusal(self, values):
            if values.get("num_experts_per_tok", 1) != 1:
                return "currently supports `num_experts_per_tok=1` only"
            return "len(attention_layers) must be num_layers" if values.get("num_layers", 2) != 2 else None

        def observe(self, values):
            return None if self.refusal(values) else super().observe(values)

    found = discover(TopOneBuilder())
    assert found.fields["num_experts_per_tok"].sole and not found.fields["num_heads"].sole
    # held too, but refused for another field's sake (GPT-Neo's list of attention layers): a relation
    assert found.fields["num_layers"].kind == "fixed" and not found.fields["num_layers"].sole


def test_a_size_the_config_class_validates_to_0_is_its_only_value_not_one_the_model_fails_on():
    class ValidatedBuilder(ToyBuilder):  # Gemma 4's assistant: "hidden_size_per_layer_input must be 0, got 1"
        DEFAULTS = {**ToyBuilder.DEFAULTS, "per_layer_width": 0, "adapter_width": 0}

        def read_back(self, values, others=()):
            return None if self.refusal(values) else super().read_back(values, others)

        def refusal(self, values):
            width = values.get("per_layer_width", 0)
            return None if width == 0 else f"per_layer_width must be 0, got {width}"

        def observe(self, values):
            # the config takes any adapter width; the model builds none but 0 (a failure, not a refusal)
            return None if self.refusal(values) or values.get("adapter_width", 0) else super().observe(values)

    found = discover(ValidatedBuilder())
    assert found.fields["per_layer_width"].kind == "fixed" and found.fields["per_layer_width"].sole
    assert found.fields["adapter_width"].kind == "fixed" and not found.fields["adapter_width"].sole


class SparseStepBuilder(ToyBuilder):
    """Switch Transformers' sparse layers: a router on every layer i with i % step == 1, the step ``num_layers //
    num_sparse`` unless given, and the routers' biases only with ``router_bias`` on."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "num_layers": 4, "num_sparse": 1, "router_bias": False}

    def defaults(self):
        return {**self.DEFAULTS, "step": 4}

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        config.setdefault("step", config["num_layers"] // config["num_sparse"])  # the config computes it
        return {k: config[k] for k in [*values, *others]}

    def observe(self, values):
        found = super().observe(values)
        config = self.read_back(values, ["num_layers", "step", "router_bias", "hidden_size"])
        if found is None or config["step"] < 2:
            return None
        sparse = sum(1 for i in range(config["num_layers"]) if i % config["step"] == 1)
        shapes = {**found.shapes, "layers.*.router.weight": [(4, config["hidden_size"])] * sparse}
        if config["router_bias"]:
            shapes["layers.*.router.bias"] = [(4,)] * sparse
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return type(found)(shapes, total, total)


def test_a_parameter_only_a_flag_builds_follows_a_field_with_the_fields_it_moves_pinned():
    # 12 layers with the step moved along to 12 keep one router, as 4 layers at a step of 4 do: only with the step
    # pinned at 4 do the biases the flag adds show that they follow the layers (3 of 12: 1, 5, 9)
    found = discover(SparseStepBuilder())
    assert found.fields["num_layers"].followers == {"step"}
    assert ("count", "layers.*.router.bias") in found.fields["num_layers"].effects


def test_a_field_written_otherwise_than_held_is_read_as_held():
    # Dory's to_dict doubles the layer counts and puts an "mlp" entry after each layer kind; the model is built
    # from the values held, so the fit's points and the defaults must be those (72 layers counted for 36 before)
    import dataclasses

    from symparams.analysis.inference.probing import held_values, written_otherwise

    @dataclasses.dataclass
    class Doubling:
        num_hidden_layers: int = 3
        hidden_size: int = 8
        layer_types: list = dataclasses.field(default_factory=lambda: ["full", "sliding", "full"])
        num_labels: int = 2

        def to_dict(self):
            return {"num_hidden_layers": 2 * self.num_hidden_layers, "hidden_size": self.hidden_size,
                    "layer_types": [k for kind in self.layer_types for k in (kind, "mlp")]}

    config = Doubling()
    assert written_otherwise(config) == {"num_hidden_layers": (6, 3), "layer_types": (
        ["full", "mlp", "sliding", "mlp", "full", "mlp"], ["full", "sliding", "full"])}
    held = held_values(config)
    assert held["num_hidden_layers"] == 3 and held["layer_types"] == ["full", "sliding", "full"]
    assert held["hidden_size"] == 8


def test_a_field_the_parent_config_computes_into_its_sub_config_is_told_from_a_constant_it_gives(monkeypatch):
    """The parent writes ``shared`` from the layer count (Gemma 4's assistant: every layer reuses the target's keys
    and values) and gives ``width`` a constant of its own: both are held otherwise than the sub-config declares,
    and both come back when left out, but only ``shared`` moves with another field."""
    import dataclasses

    from symparams.analysis.inference import probing

    @dataclasses.dataclass
    class Text:
        layers: int = 4
        shared: int = 0
        width: int = 8

    class Parent:
        def __init__(self, text_config=None):
            self.text_config = Text(**{"width": 16, **(text_config or {})})
            if not self.text_config.shared:
                self.text_config.shared = self.text_config.layers

        def to_dict(self):
            return {"text_config": dataclasses.asdict(self.text_config)}

    monkeypatch.setattr(probing, "configure", lambda model_type, values, cls=None: Parent(**values))
    probing.parent_written.cache_clear()
    try:
        assert probing.parent_written("toy") == {"text_config.shared"}
        # left to the parent, it follows the layers where the sub-config's dict moves them
        without = probing.unwritten("toy", Parent().to_dict())
        assert without == {"text_config": {"layers": 4, "width": 16}}
        assert Parent(**probing.nested(without, {"text_config.layers": 6})).text_config.shared == 6
    finally:
        probing.parent_written.cache_clear()
