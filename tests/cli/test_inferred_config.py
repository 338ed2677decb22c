"""``count --config`` (and formula, prove, solve, sweep) on a model_type no hand-written family reads: OLMo-1B.

The count is compared with transformers' build of the same file on the meta
device; a config outside the inferred formula's conditions, or of a type the
data could not infer, is one line on stderr and exit status 2.
"""

import json
import subprocess
import sys

import pytest
import torch
import transformers

from tests.reference import FIXTURES, ROOT

OLMO = FIXTURES / "allenai" / "OLMo-1B-hf.json"
DATA = ROOT / "symparams" / "families" / "data" / "inferred.json"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "symparams", *map(str, args)], capture_output=True, text=True,
                          timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


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


def test_a_held_value_of_the_config_is_refused_in_one_line(tmp_path):
    assert_one_line_error(*run("count", "--config", olmo_with(tmp_path, attention_bias=True))[::2],
                          "attention_bias is true, the formula holds only for attention_bias = false")


def test_a_size_key_the_formula_does_not_know_is_refused_in_one_line(tmp_path):
    assert_one_line_error(*run("count", "--config", olmo_with(tmp_path, head_dim=64))[::2],
                          "key head_dim is outside the inferred formula's fields")


def test_a_head_outside_the_conditions_is_refused_in_one_line():
    assert_one_line_error(*run("count", "--config", OLMO, "--head", "causal-lm")[::2],
                          "tie_word_embeddings is true, the formula holds only for tie_word_embeddings = false")


def test_a_type_that_was_not_inferred_is_refused_with_its_reason(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "dbrx"}))
    assert_one_line_error(*run("count", "--config", path)[::2],
                          "model_type 'dbrx' (base) has no hand-written family and was not inferred: the default "
                          "config cannot be built")


@pytest.mark.parametrize("changes,needle", [
    ({"hidden_size": 0}, "key hidden_size must be at least 1, not 0"),
    ({"hidden_size": "2048"}, 'key hidden_size must be a whole number, not "2048"'),
    ({"attention_bias": "no"}, 'key attention_bias must be true or false, not "no"'),
], ids=["zero", "text", "flag-text"])
def test_bad_values_of_an_inferred_type_are_one_line(tmp_path, changes, needle):
    assert_one_line_error(*run("count", "--config", olmo_with(tmp_path, **changes))[::2], needle)


@pytest.mark.parametrize("command", [("flops", "--seq", "512"), ("memory",),
                                     ("solve", "--of", "flops", "--target", "1e15", "--for", "s")])
def test_costs_of_an_inferred_type_are_refused_not_undercounted(command):
    """Its attention modules are not declared: the FLOPs of attention and the cache are unknown, not 0."""
    code, _, err = run(command[0], "--config", OLMO, *command[1:])
    assert_one_line_error(code, err, "does not declare its attention modules")
