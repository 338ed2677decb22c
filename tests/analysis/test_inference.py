"""The inference engine against transformers on the meta device, and against symparams' hand-written families.

The reference is transformers itself: for each sampled type the inferred
closed form is evaluated on random configurations this test draws (not the
engine's own verification: other ranges, heads that need not divide the
width, flags at random) and on the type's default config, and compared
with ``parameters()`` of the real model built on the meta device (so the
engine's own verification runs on one configuration here, not four).  Where
symparams has a hand-written family, the two closed forms must be the same
polynomial once the symbols are matched.
"""

import importlib.util
import json
import random
from pathlib import Path

import pytest
import sympy as sp
import torch
import transformers

from symparams import model
from symparams.analysis.inference import AUTO_CLASSES, Inferred, Relation, infer
from symparams.core.symbols import SYMBOLS

SAMPLE = [("bert", "base"), ("bert", "masked-lm"), ("bert", "sequence-classification"), ("gpt2", "causal-lm"),
          ("llama", "causal-lm"), ("qwen2", "base"), ("mixtral", "causal-lm"), ("t5", "seq2seq-lm")]
CONFIGS = 6  # random configurations per type, drawn here


@pytest.fixture(scope="session")
def inferred():
    cache = {}

    def get(model_type, cls) -> Inferred:
        if (model_type, cls) not in cache:
            cache[model_type, cls] = infer(model_type, cls, verify_configurations=1, seed=7)
        return cache[model_type, cls]
    return get


def real_count(model_type: str, cls: str, values: dict) -> int | None:
    """``parameters()`` of the model transformers builds on the meta device (None: the config does not build)."""
    try:
        cfg = transformers.AutoConfig.for_model(model_type, **values)
        with torch.device("meta"):
            module = getattr(transformers, AUTO_CLASSES[cls]).from_config(cfg)
    except Exception:  # the config class or the modeling code refuses these values (an odd rotary width, ...)
        return None
    return sum(p.numel() for p in module.parameters())


def random_values(result: Inferred, rng: random.Random) -> dict:
    """Sizes drawn uniformly (not multiples of the defaults), layer counts 1..5, flags at random, then the
    relations made to hold: a divided field becomes a multiple, an equal one a copy, a bound one larger."""
    values = {}
    for name, sym in result.symbols.items():
        values[name] = rng.randint(1, 5) if "layer" in name or sym.name in ("L", "L_d") else rng.randint(1, 48)
    values.update({name: rng.random() < 0.5 for name in result.flags})
    for r in result.conditions.relations:
        if r.kind == "divides":
            values[r.right] = values[r.left] * rng.randint(1, 6)
        elif r.kind == "equals":
            values[r.right] = values[r.left]
        else:
            values[r.right] = max(values[r.right], values[r.left] + rng.randint(1, 3))
    return values


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls", SAMPLE)
def test_the_inferred_count_is_the_real_count_of_random_configurations(inferred, model_type, cls):
    result = inferred(model_type, cls)
    assert result.exact, result.reason
    rng = random.Random(f"{model_type}/{cls}")
    compared = 0
    for _ in range(4 * CONFIGS):
        values = random_values(result, rng)
        real = real_count(model_type, cls, values)
        if real is None:
            continue  # transformers refuses the configuration: no count to compare
        assert result.count(values) == real, values
        compared += 1
        if compared == CONFIGS:
            break
    assert compared == CONFIGS


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls", SAMPLE)
def test_the_inferred_count_is_the_real_count_of_the_default_config(inferred, model_type, cls):
    result = inferred(model_type, cls)
    cfg = transformers.AutoConfig.for_model(model_type)
    values = {name: getattr(cfg, name) for name in [*result.symbols, *result.flags]}
    assert result.count(values) == real_count(model_type, cls, {})


#: (model_type, a field whose default leaves out parameters its larger values add, the values compared, fixed values)
LIFTED = [
    ("deberta", "type_vocab_size", [0, 1, 3], {"num_hidden_layers": 2}),  # no token-type embedding at 0
    ("qwen2_moe", "decoder_sparse_step", [1, 2, 3], {"num_hidden_layers": 5}),  # experts on every layer at 1
]


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,name,moved,fixed", LIFTED, ids=[m[0] for m in LIFTED])
def test_a_field_whose_default_leaves_parameters_out_is_a_variable(model_type, name, moved, fixed):
    result = infer(model_type, "base", verify_configurations=1, seed=7)
    assert result.exact, result.reason
    assert name in result.symbols and name not in result.conditions.fixed
    for value in moved:  # its default among them: the parameters it adds vanish there
        cfg = transformers.AutoConfig.for_model(model_type, **fixed, **{name: value})
        values = {field: getattr(cfg, field) for field in [*result.symbols, *result.flags]}
        assert result.count(values) == real_count(model_type, "base", {**fixed, name: value}), values


#: (model_type, a field held at its default whose larger values get a formula of their own, values compared)
BRANCHED = [("xlm", "n_langs", [1, 2, 5])]  # no language embedding for one language (Gemma 4's: tests/families)


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,name,moved", BRANCHED, ids=[b[0] for b in BRANCHED])
def test_a_held_field_whose_larger_values_build_gets_a_branch(model_type, name, moved):
    result = infer(model_type, "base", verify_configurations=1, seed=7)
    assert result.exact and result.conditions.fixed[name] == moved[0]
    (branch,) = result.branches
    assert branch.exact and branch.conditions.minimum == {name: moved[0] + 1} and name in branch.symbols
    layers = {"n_layers": 2}
    for value in moved:
        cfg = transformers.AutoConfig.for_model(model_type, **layers, **{name: value})
        formula = branch if value > moved[0] else result
        values = {field: getattr(cfg, field) for field in [*formula.symbols, *formula.flags]}
        assert formula.count(values) == real_count(model_type, "base", {**layers, name: value}), value


def formula_at(result: Inferred, model_type: str, values: dict) -> int:
    """The inferred count at the config transformers makes of ``values`` (its fields as it holds them, a list of
    layer kinds as how many layers of each kind it holds)."""
    cfg = transformers.AutoConfig.for_model(model_type, **values)
    point = {}
    for name in [*result.symbols, *result.flags]:
        listed, mark, kind = name.partition("#")
        point[name] = list(getattr(cfg, listed)).count(kind) if mark else getattr(cfg, name)
    return result.count(point)


@pytest.mark.crosscheck
def test_an_unset_width_is_a_formula_of_its_own_where_a_config_sets_it():
    """GPT-BigCode's ``n_inner`` unset is 4·H; set (SantaCoder: 8192 for a width of 2048), it is a variable of a
    branch.  Both against real builds, a width of 4·H set explicitly among them."""
    result = infer("gpt_bigcode", "causal-lm", verify_configurations=1, seed=7)
    assert result.exact and "n_inner" in result.conditions.unset and "n_inner" not in result.symbols
    (branch,) = [b for b in result.branches if b.conditions.given == ("n_inner",)]
    assert branch.exact and "n_inner" in branch.symbols
    sizes = {"n_embd": 64, "n_head": 4, "n_layer": 2, "n_positions": 32, "vocab_size": 100, "multi_query": True}
    assert formula_at(result, "gpt_bigcode", sizes) == real_count("gpt_bigcode", "causal-lm", sizes)
    for inner in (48, 256, 300):
        values = {**sizes, "n_inner": inner}
        assert formula_at(branch, "gpt_bigcode", values) == real_count("gpt_bigcode", "causal-lm", values), inner


@pytest.mark.crosscheck
def test_a_head_width_the_config_checks_against_the_width_is_no_contradiction():
    """XLNet's ``d_head`` must be ``d_model // n_head``: the shipped formula of old held 16 heads (the only count
    its samples built) and wrote ``d_model < d_head`` beside ``d_head divides d_model``, refusing every config."""
    result = infer("xlnet", "base", verify_configurations=1, seed=7)
    assert result.exact and not [r for r in result.conditions.relations if r.kind == "below"]
    base_cased = {"d_model": 768, "n_head": 12, "d_head": 64, "d_inner": 3072, "n_layer": 2, "vocab_size": 320}
    assert not result.conditions.violated(base_cased)
    assert formula_at(result, "xlnet", base_cased) == real_count("xlnet", "base", base_cased)


@pytest.mark.crosscheck
def test_two_widths_meeting_count_by_the_formula_of_their_side():
    """ELECTRA projects its embeddings to the hidden width only where the two differ (the small model: 128 and
    256; the large: 1024 and 1024)."""
    result = infer("electra", "base", verify_configurations=1, seed=7)
    assert Relation("embedding_size", "differs", "hidden_size") in result.conditions.relations
    (equal,) = [b for b in result.branches if b.conditions.split]
    sizes = {"vocab_size": 100, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 96,
             "max_position_embeddings": 32, "type_vocab_size": 2}
    for formula, widths in [(result, {"embedding_size": 32, "hidden_size": 64}),
                            (equal, {"embedding_size": 64, "hidden_size": 64})]:
        assert not formula.conditions.violated(widths)
        values = {**sizes, **widths}
        assert formula_at(formula, "electra", values) == real_count("electra", "base", values), widths


@pytest.mark.crosscheck
def test_a_list_of_layer_kinds_counts_by_how_many_layers_of_each_kind_it_holds():
    """Reformer's layers are as many as its ``attn_layers`` list, local or LSH attention, in any order."""
    result = infer("reformer", "base", verify_configurations=1, seed=7)
    assert result.exact and {"attn_layers#local", "attn_layers#lsh"} <= set(result.symbols)
    for kinds in (["lsh", "lsh", "local"], ["local", "lsh", "local", "local", "lsh"]):
        values = {"attn_layers": kinds}
        assert formula_at(result, "reformer", values) == real_count("reformer", "base", values), kinds


# -- against the hand-written families (slow) ----------------------------------------------------------------------

S = {name: info.symbol for name, info in SYMBOLS.items()}


def _plain(expr):
    """``floor(H/A)`` as ``H/A``: the families need A | H, where the two are equal."""
    return expr.replace(sp.floor, lambda x: x)


def same(a, b) -> bool:
    return sp.expand(_plain(a) - _plain(b)) == 0


#: (model_type, class, family head, family switches, flags, substitution into the inferred form)
MUTUAL = [
    ("bert", "base", None, {}, {}, {"F": S["r"] * S["H"]}),
    ("bert", "masked-lm", "masked-lm", {}, {"tie_word_embeddings": 1}, {"F": S["r"] * S["H"]}),
    ("bert", "sequence-classification", "sequence-classification", {}, {}, {"F": S["r"] * S["H"]}),
    ("gpt2", "causal-lm", "causal-lm", {"tie": True, "cross_attention": False},
     {"tie_word_embeddings": 1, "add_cross_attention": 0}, {}),
    ("gpt2", "causal-lm", "causal-lm", {"tie": False, "cross_attention": True},
     {"tie_word_embeddings": 0, "add_cross_attention": 1}, {}),
    ("llama", "causal-lm", "causal-lm",
     {"free_head_dim": True, "tie": False, "attention_bias": True, "mlp_bias": False},
     {"tie_word_embeddings": 0, "attention_bias": 1, "mlp_bias": 0}, {}),
    ("llama", "causal-lm", "causal-lm",
     {"free_head_dim": True, "tie": True, "attention_bias": False, "mlp_bias": True},
     {"tie_word_embeddings": 1, "attention_bias": 0, "mlp_bias": 1}, {}),
    ("qwen2", "base", None, {"free_head_dim": False}, {}, {}),
    ("mixtral", "causal-lm", "causal-lm", {"free_head_dim": False, "tie": False}, {"tie_word_embeddings": 0},
     {"F": S["F_e"]}),
    ("t5", "seq2seq-lm", "seq2seq-lm", {"gated": True, "tie": True, "split_layers": True}, {"is_gated_act": 1}, {}),
    ("t5", "seq2seq-lm", "seq2seq-lm", {"gated": False, "tie": True, "split_layers": True}, {"is_gated_act": 0}, {}),
]


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls,head,switches,flags,subs", MUTUAL,
                         ids=[f"{m[0]}-{m[1]}-{i}" for i, m in enumerate(MUTUAL)])
def test_the_inferred_form_is_the_families_closed_form(inferred, model_type, cls, head, switches, flags, subs):
    result = inferred(model_type, cls)
    ours = result.total.subs({result.flags[k]: v for k, v in flags.items()}).subs({S[k]: v for k, v in subs.items()})
    family = model(model_type, head=head, **switches).closed_form
    family = family.subs({S["r"]: 4}) if model_type == "gpt2" else family  # GPT-2's n_inner unset is 4H
    assert same(ours, family), sp.expand(_plain(ours) - _plain(family))


# -- the shipped data file is what the generator writes (slow) ---------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "symparams" / "families" / "data" / "inferred.json"
#: one small class (seconds to infer) with a branch of its own (n_inner set) and costs, regenerated whole
REGENERATED = [("gptj", "base")]


def generator():
    """scripts/infer_formulas.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("infer_formulas", ROOT / "scripts" / "infer_formulas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type, cls", REGENERATED)
def test_the_shipped_entries_are_what_the_generator_writes_again(model_type, cls):
    gen = generator()
    text = DATA.read_text(encoding="utf-8")
    assert json.loads(text)["transformers_version"] == transformers.__version__
    shipped = [_inferred_only(line.rstrip(",")) for line in text.splitlines()
               if f'"model_type":"{model_type}"' in line]
    assert len(shipped) == len(gen.text_types()[model_type])
    entry, *_ = gen.run_one(model_type, cls)  # and the seconds of its count and costs
    assert entry["exact"], entry["reason"]
    assert gen.line(entry) in shipped  # byte for byte


def _inferred_only(line: str) -> str:
    """A shipped line as the inference writes it, before the check that follows it adds the head widths the
    forward runs at (tests/analysis/test_inference_running.py checks those against transformers)."""
    entry = json.loads(line)
    entry.get("costs", {}).pop("runs", None)
    return json.dumps(entry, sort_keys=True, separators=(",", ":"))


@pytest.mark.crosscheck
def test_a_class_whose_costs_outrun_their_time_is_stopped(monkeypatch):
    gen = generator()
    monkeypatch.setattr(gen, "COST_SECONDS", 1)  # OLMo's costs take several seconds of traces
    entry, _, cost_seconds = gen.run_one("olmo", "base")
    assert entry["exact"] and entry["costs"] == {"exact": False, "reason": "timed out after 1 s"}
    assert cost_seconds < 3


def test_a_trace_stopped_inside_a_dispatch_mode_leaves_no_mode_behind():
    # the time limit above stops a trace by an alarm, which can land inside a mode's dispatch and skip its exit;
    # a recorder left on the stack would record every later product of the worker (tests/conftest.py's guard)
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode, _push_mode

    from symparams.analysis.inference.tracing import dispatch_modes_restored

    depth = torch._C._len_torch_dispatch_stack()
    with pytest.raises(KeyboardInterrupt), dispatch_modes_restored():
        _push_mode(TorchDispatchMode())  # entered, and never left: as the alarm leaves it
        raise KeyboardInterrupt
    assert torch._C._len_torch_dispatch_stack() == depth


def test_a_costs_only_run_keeps_the_count_and_takes_costs_only_from_the_same_count():
    """``--costs-only`` infers a class again for its costs: they replace the stored ones only where the fresh
    count is the stored one (costs fitted over another discovery would name other symbols)."""
    gen = generator()
    stored = next(json.loads(line.rstrip(",")) for line in DATA.read_text(encoding="utf-8").splitlines()
                  if '"model_type":"gptj"' in line)
    fresh = {**json.loads(json.dumps(stored)), "costs": {"exact": True, "planted": 1}}
    assert gen.costs_merged(stored, fresh) == {**stored, "costs": {"exact": True, "planted": 1}}
    fresh["parameters"] = fresh["parameters"][1:]  # the count came out otherwise: the stored entry stays whole
    assert gen.costs_merged(stored, fresh) is stored


def test_a_kept_count_without_costs_is_written_with_the_reason_its_costs_are_unknown():
    """An exact count no run gave costs (kept from an earlier run, or by ``--costs-only`` where a fresh inference
    counts otherwise) is never written without a reason for its costs."""
    gen = generator()
    stored = next(json.loads(line.rstrip(",")) for line in DATA.read_text(encoding="utf-8").splitlines()
                  if '"model_type":"gptj"' in line)
    bare = {k: v for k, v in stored.items() if k != "costs"}
    assert json.loads(gen.line(bare))["costs"] == {"exact": False, "reason": gen.NOT_TRACED}
    assert json.loads(gen.line(stored))["costs"] == stored["costs"]  # exact costs are written as they are
    refused = {**stored, "costs": {"exact": False, "reason": "planted"}}
    assert json.loads(gen.line(refused))["costs"] == refused["costs"]
    fresh = {**json.loads(json.dumps(bare)), "costs": {"exact": True, "planted": 1}}
    fresh["parameters"] = fresh["parameters"][1:]
    assert gen.costs_merged(bare, fresh)["costs"] == {
        "exact": False, "reason": "a fresh inference of the count differs in its parameters, and the stored count "
                                  "was kept"}
    failed = {"model_type": "gptj", "class": "base", "exact": False, "reason": "planted failure"}
    assert "is not exact (planted failure)" in gen.costs_merged(bare, failed)["costs"]["reason"]
    # costs traced and refused over the other count: refused for that reason, which holds of the model whatever
    # count they were fitted over (not the count's difference, which says nothing of why the costs are unknown)
    fresh["costs"] = {"exact": False, "reason": "planted refusal"}
    assert gen.costs_merged(bare, fresh)["costs"] == {"exact": False, "reason": "planted refusal"}
    assert gen.costs_merged(stored, fresh) is stored  # exact stored costs are never replaced by a refusal


@pytest.mark.crosscheck
def test_a_held_field_the_config_computes_when_unset_is_left_out_so_the_layers_move():
    """Dory's recurrent layers default to None, computed as the layers less the input and output ones, and a
    config refuses any other sum: set, it pins every layer count; left out, the layer count is a variable.  The
    fit reads the config as the class holds it, not as it saves it (each layer written as two blocks, twice the
    layer count): count --config reads a saved file back as the class does."""
    result = infer("dory", "base", verify_configurations=1, seed=7)
    assert result.exact, result.reason
    assert "num_hidden_layers" in result.symbols and "n_recurrent_layers" in result.conditions.derived
    small = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
             "head_dim": 16, "vocab_size": 1000, "n_input_layers": 1, "n_output_layers": 1}
    for layers in (3, 5):
        cfg = transformers.AutoConfig.for_model("dory", **small, num_hidden_layers=layers)
        values = {field: getattr(cfg, field) for field in [*result.symbols, *result.flags]}
        assert cfg.to_dict()["num_hidden_layers"] == 2 * layers
        assert result.count(values) == real_count("dory", "base", {**small, "num_hidden_layers": layers}), layers


@pytest.mark.crosscheck
def test_a_type_whose_class_refuses_its_own_default_is_built_from_its_seeds():
    """Gemma 4's assistant validates no per-layer inputs, which its text config has by default: the bare default
    config is refused, so the model class is found without making it, and the builds start from the seeds."""
    from symparams.analysis.inference.probing import Builder

    with pytest.raises(Exception, match="hidden_size_per_layer_input must be 0"):
        transformers.AutoConfig.for_model("gemma4_assistant")
    builder = Builder("gemma4_assistant", "causal-lm")
    built = builder.observe({})
    assert built is not None, builder.errors
    config = builder.config({})
    with torch.device("meta"):
        real = transformers.AutoModelForCausalLM.from_config(config)
    assert built.total == sum(p.numel() for p in real.parameters()) > 0


@pytest.mark.crosscheck
def test_the_shared_layers_gemma_4_s_assistant_writes_into_its_text_config_follow_the_layers_the_fit_moves():
    """The assistant sets its text config's ``num_kv_shared_layers`` to the layer count and refuses any other: left
    in the sub-config's default dict it would stay at the default's 30 and no other layer count would build.
    Voxtral's parent gives its text config constants of its own, which follow nothing."""
    from symparams.analysis.inference.probing import Builder, parent_written

    assert parent_written("gemma4_assistant") == {"text_config.num_kv_shared_layers"}
    assert parent_written("voxtral") == frozenset()
    builder = Builder("gemma4_assistant", "causal-lm")
    moved = builder.observe({"text_config.num_hidden_layers": 3})
    assert moved is not None, builder.errors
    config = builder.config({"text_config.num_hidden_layers": 3})
    assert config.text_config.num_kv_shared_layers == 3
    with torch.device("meta"):
        real = transformers.AutoModelForCausalLM.from_config(config)
    assert moved.total == sum(p.numel() for p in real.parameters()) < builder.observe({}).total
