"""``symparams infer``: the closed form of a transformers model_type, its symbols, conditions and verification.

The counts are checked against transformers built here on the meta device.
"""

import json
import subprocess
import sys

import pytest
import torch
import transformers

from tests.reference.in_process import command_here

TIMEOUT = 120


def run(*args, code=None):
    """``symparams ARGS`` run in this process, whose torch and transformers are imported already (a process of
    its own would spend seconds importing them again), or ``python -c CODE ARGS``."""
    if code is None:
        return command_here(*args, seconds=TIMEOUT)
    argv = [sys.executable, "-c", code, *args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT)
    return proc.returncode, proc.stdout, proc.stderr


def real_count(model_type, auto_class):
    with torch.device("meta"):
        module = getattr(transformers, auto_class).from_config(transformers.AutoConfig.for_model(model_type))
    return sum(p.numel() for p in module.parameters())


@pytest.mark.crosscheck
def test_json_names_the_symbols_and_the_default_configs_real_count():
    code, out, err = run("infer", "gpt2", "--class", "causal-lm", "--json", "--verify", "3")
    assert code == 0 and err == "", err
    data = json.loads(out)
    assert data["exact"] is True and data["reason"] is None
    assert data["symbols"]["n_embd"] == "H" and data["symbols"]["n_head"] == "A"
    assert data["flags"] == {"add_cross_attention": "add_cross_attention", "tie_word_embeddings": "tie_word_embeddings"}
    assert "n_head divides n_embd" in data["conditions"]["relations"]
    v = data["verification"]
    assert v["configurations"] == v["exact"] == 3
    assert v["default_formula"] == v["default_real"] == real_count("gpt2", "AutoModelForCausalLM")
    assert isinstance(data["total_srepr"], str) and "H" in data["total"]


@pytest.mark.crosscheck
def test_text_output_shows_the_closed_form_the_mapping_and_the_verification():
    code, out, err = run("infer", "llama", "--class", "causal-lm", "--verify", "2")
    assert code == 0 and err == "", err
    assert "verdict: exact" in out
    assert "parameters = " in out and "H = hidden_size" in out and "G = num_key_value_heads" in out
    assert "A (num_attention_heads) divides H (hidden_size)" in out
    assert "verification: 2 of 2 fresh random configurations exact" in out
    assert f"real {real_count('llama', 'AutoModelForCausalLM')}" in out


@pytest.mark.crosscheck
def test_a_branch_is_shown_under_the_values_it_holds_for():
    code, out, err = run("infer", "xlm", "--verify", "2")
    assert code == 0 and err == "", err
    assert "  n_langs = 1 (held)" in out
    assert "where n_langs ≥ 2, a formula of its own:" in out and "    n_langs ≥ 2" in out
    main, branch = out.split("where n_langs ≥ 2")
    assert "*n_langs*" not in main and "n_langs*use_lang_emb" in branch  # one embedding row per language
    assert "the default config with n_langs = 2: formula" in branch


def test_without_torch_the_command_names_the_extra():
    blocked = "import sys; sys.modules['torch'] = None; from symparams.cli import main; sys.exit(main(sys.argv[1:]))"
    code, out, err = run("infer", "llama", code=blocked)
    assert code == 2 and out == ""
    assert err == "symparams: error: symparams infer needs torch and transformers: pip install symparams[infer]\n"


def test_the_plain_cli_never_imports_torch():
    code, out, err = run(code="import sys, symparams.cli; from symparams.cli.parser import build_parser; "
                              "from symparams.cli.commands import HANDLERS; build_parser(HANDLERS, only='infer'); "
                              "print('torch' in sys.modules, 'transformers' in sys.modules)")
    assert (code, out, err) == (0, "False False\n", "")
