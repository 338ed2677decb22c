"""``count --config`` (and formula, prove, solve, sweep) on a model_type no hand-written family reads: OLMo-1B.

The count is compared with transformers' build of the same file on the meta
device; a config outside the inferred formula's conditions, or of a type the
data could not infer, is one line on stderr and exit status 2.
"""

import json

import pytest
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

from symparams.analysis.inference.tracing import shapes_only
from symparams.families.inferred import OutsideConditions
from symparams.families.lookup import from_config
from tests.reference import FIXTURES, ROOT
from tests.reference.in_process import command_here

OLMO = FIXTURES / "allenai" / "OLMo-1B-hf.json"
DATA = ROOT / "symparams" / "families" / "data" / "inferred.json"
#: a type the data holds but could not infer, whose default config transformers cannot build (its vision tower
#: needs timm, which no extra of symparams installs)
NOT_INFERRED = "gemma3n"


def run(*args):
    """``python -m symparams ARGS`` run in this process (see :mod:`tests.reference.in_process`: a forked run would
    import torch again for each meta-device build): status, stdout, stderr."""
    return command_here(*args)


def assert_one_line_error(code, err, needle):
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("symparams: error: "), err
    assert needle in lines[0], lines[0]


def olmo_with(tmp_path, **changes):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**json.loads(OLMO.read_text()), **changes}))
    return path


@pytest.mark.crosscheck
def test_count_config_of_an_inferred_type_is_what_transformers_builds():
    code, out, err = run("count", "--config", OLMO, "--json")
    assert code == 0 and err == ""
    config = transformers.OlmoConfig.from_json_file(str(OLMO))
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(config)
    assert json.loads(out)["total"] == sum(p.numel() for p in module.parameters())


def test_count_says_on_one_line_where_the_formula_comes_from():
    version = ".".join(json.loads(DATA.read_text())["transformers_version"].split(".")[:2])
    code, out, _ = run("count", "--config", OLMO)
    assert code == 0 and "layers × 16" in out
    notes = [line for line in out.splitlines() if "inferred" in line and "note:" in line]
    assert notes == [f"note: inferred from transformers {version} meta-device builds, verified on 10 configurations"]


def test_formula_prove_solve_and_sweep_work_on_an_inferred_model():
    code, out, _ = run("formula", "--config", OLMO)
    assert code == 0 and "floor(H/A)" in out
    code, out, _ = run("prove", "--config", OLMO)
    assert code == 0 and "depends on the number of heads A" in out
    code, out, _ = run("sweep", "--config", OLMO, "--grid", "L=8,16")
    assert code == 0 and "1,176,764,416" in out  # L = 16 is the config itself
    code, out, _ = run("solve", "--config", OLMO, "--for", "L", "--target", "1176764416")
    assert code == 0 and "L = 16" in out


def meta_total(path, auto: str = "AutoModel") -> int:
    """What transformers builds from the file on the meta device."""
    config = transformers.OlmoConfig.from_json_file(str(path))
    with torch.device("meta"):
        module = getattr(transformers, auto).from_config(config)
    return sum(p.numel() for p in module.parameters())


#: (changes to OLMo-1B's config, head, the condition the formula names: the note repeats it)
CLIPPED = ("outside the inferred formula's conditions: clip_qkv is set, the formula holds only with clip_qkv "
           "unset (null)")
OUTSIDE = [
    ({"clip_qkv": 8.0}, None, CLIPPED),  # a key the fit saw only unset (it changes no shape, but the fit cannot know)
    ({"head_dim": 64}, None, "key head_dim is outside the inferred formula's fields (it may change shapes the "
                             "formula does not follow)"),
    ({"clip_qkv": 8.0}, "causal-lm", CLIPPED),
]


@pytest.mark.crosscheck
@pytest.mark.parametrize("changes,head,condition", OUTSIDE, ids=["unset-key", "unknown-size", "unset-key-lm-head"])
def test_outside_the_conditions_the_formula_refuses_and_one_real_build_counts(tmp_path, changes, head, condition):
    """The library refuses (never a wrong number); the CLI, with torch installed, counts the config by one
    meta-device build and says so, on one line naming the condition."""
    path = olmo_with(tmp_path, **changes)
    with pytest.raises(OutsideConditions) as refused:
        from_config(str(path), head=head)
    assert str(refused.value) == f"{path}: {condition}"
    code, out, err = run("count", "--config", path, *(("--head", head) if head else ()), "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["total"] == meta_total(path, "AutoModelForCausalLM" if head else "AutoModel")
    code, out, _ = run("count", "--config", path, *(("--head", head) if head else ()))
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert notes == [f"note: counted by one meta-device build of transformers {transformers.__version__}: "
                     f"{condition}"]


def test_with_set_outside_the_conditions_stays_refused(tmp_path):
    """A --set asks for the formula at other values: no single build answers that."""
    assert_one_line_error(*run("count", "--config", olmo_with(tmp_path, clip_qkv=8.0), "--set", "L=8")[::2],
                          "clip_qkv is set, the formula holds only with clip_qkv unset (null)")


def test_a_build_too_large_to_make_is_refused_not_attempted(tmp_path):
    """A meta build makes every layer's module: a billion layers would never finish, so it is not started."""
    path = olmo_with(tmp_path, clip_qkv=8.0, num_hidden_layers=10**9)
    assert_one_line_error(*run("count", "--config", path)[::2],
                          "a meta-device build of num_hidden_layers = 1000000000 copies is too large to make")


def test_a_type_that_was_not_inferred_and_does_not_build_is_one_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": NOT_INFERRED}))
    code, _, err = run("count", "--config", path)
    assert_one_line_error(code, err, f"model_type '{NOT_INFERRED}' (base) has no hand-written family and was not "
                                     "inferred: the default config cannot be built")
    assert "transformers cannot build it either" in err


@pytest.mark.parametrize("changes,needle", [
    ({"hidden_size": 0}, "key hidden_size must be at least 1, not 0"),
    ({"hidden_size": "2048"}, 'key hidden_size must be a whole number, not "2048"'),
    ({"attention_bias": "no"}, 'key attention_bias must be true or false, not "no"'),
], ids=["zero", "text", "flag-text"])
def test_bad_values_of_an_inferred_type_are_one_line(tmp_path, changes, needle):
    assert_one_line_error(*run("count", "--config", olmo_with(tmp_path, **changes))[::2], needle)


@pytest.mark.crosscheck
def test_flops_of_an_inferred_type_are_what_the_counter_counts_on_transformers_build():
    """OLMo-1B as published, 16 layers of 2,048: its traced costs against FlopCounterMode on the meta device."""
    code, out, err = run("flops", "--config", OLMO, "--seq", "512", "--batch", "2", "--json")
    assert code == 0 and err == ""
    config = transformers.OlmoConfig.from_json_file(str(OLMO))
    with torch.device("meta"):
        module = transformers.OlmoModel._from_config(config, attn_implementation="eager")
    with shapes_only(), FlopCounterMode(display=False) as counter:  # no mask check reads the meta ids
        module(input_ids=torch.zeros((2, 512), dtype=torch.long, device="meta"), use_cache=False)
    data = json.loads(out)
    assert data["traced"] and data["forward"] == counter.get_total_flops()


def test_memory_of_an_inferred_type_holds_its_traced_cache():
    """OLMo-1B's cache by hand: keys and values of 2,048 (16 heads of 128, no grouping) on each of 16 layers."""
    code, out, err = run("memory", "--config", OLMO, "--dtype", "bf16", "--optimizer", "none", "--seq", "2048",
                         "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["kv_cache"] == 2 * 16 * 2048 * 2048 * 2


@pytest.mark.parametrize("command", [("flops", "--seq", "512"), ("memory", "--seq", "512", "--optimizer", "none"),
                                     ("solve", "--of", "flops", "--target", "1e15", "--for", "s")])
def test_costs_the_data_does_not_hold_are_refused_not_undercounted(tmp_path, command):
    """xLSTM's costs were not inferred (no other layer count traces with the structure of its base): the FLOPs and
    the cache are unknown, not 0."""
    code, _, err = run(command[0], "--config", xlstm_at(tmp_path), *command[1:])
    assert_one_line_error(code, err, "not known: the inferred data holds no costs for this class")


def xlstm_at(tmp_path):
    """A small xLSTM (a type only the inferred data reads), whose costs the data does not hold."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "xlstm", "num_blocks": 2, "hidden_size": 256, "embedding_dim": 256,
                                "num_heads": 4, "vocab_size": 1000}))
    return path


def test_the_weights_bytes_of_an_inferred_type_stand_without_its_costs(tmp_path):
    code, out, err = run("memory", "--config", xlstm_at(tmp_path), "--dtype", "bf16", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["weights"] == 2 * data["parameters"] and data["kv_cache_per_token"] is None


def dots1_with(tmp_path, **changes):
    """A small dots.llm1 (a type only the inferred data reads): one dense layer before the expert layers."""
    config = {"model_type": "dots1", "num_hidden_layers": 4, "first_k_dense_replace": 1, "n_routed_experts": 8,
              "n_shared_experts": 1, "num_experts_per_tok": 2, **changes}
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in config.items() if v is not None}))
    return path


def test_a_set_that_leaves_a_stack_a_negative_count_is_refused(tmp_path):
    """More dense layers than layers: the expert layers' count, L - L_f, would be negative."""
    path = dots1_with(tmp_path)
    assert_one_line_error(*run("count", "--config", path, "--set", "L_f=6")[::2],
                          "with L_f=6: outside the inferred formula's conditions: these values give "
                          "layers.*.mlp.experts.down_proj -2 instances")
    code, out, _ = run("count", "--config", path, "--set", "L_f=4", "--json")  # all dense: the formula counts it
    fields = {k: v for k, v in json.loads(path.read_text()).items() if k != "model_type"}
    config = transformers.AutoConfig.for_model("dots1", **{**fields, "first_k_dense_replace": 4})
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(config)
    assert code == 0 and json.loads(out)["total"] == sum(p.numel() for p in module.parameters())


def test_a_size_whose_default_is_null_must_be_given(tmp_path):
    code, _, err = run("count", "--config", dots1_with(tmp_path, n_routed_experts=None))
    assert_one_line_error(code, err, "key n_routed_experts is missing or null, and the inferred formula needs a number")


#: (type, a config.json, the head whose own field the base model's formula does not read)
HEAD_FIELDS = [
    ("rembert", {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 128,
                 "vocab_size": 1000, "input_embedding_size": 32, "output_embedding_size": 48}, "masked-lm"),
    ("ultravbert", {"text_config": {"hidden_size": 64, "num_attention_heads": 4,
                                    "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 1000}},
     "masked-lm"),
]


@pytest.mark.parametrize("model_type, fields, head", HEAD_FIELDS, ids=[c[0] for c in HEAD_FIELDS])
def test_the_lm_head_beside_the_base_model_reads_its_own_fields(model_type, fields, head, tmp_path):
    """RemBERT's output_embedding_size, UltraVBERT's prediction_head_size: only the masked-LM head reads them, and
    count printed the base model, then stopped at the head beside it ("no value for output_embedding_size")."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": model_type, **fields}))
    code, out, err = run("count", "--config", path, "--json")
    assert code == 0, err
    config = transformers.AutoConfig.for_model(model_type, **fields)
    with torch.device("meta"):
        module = transformers.AutoModelForMaskedLM.from_config(config)
    assert json.loads(out)["with_lm_head"] == {"head": head, "total": sum(p.numel() for p in module.parameters())}
