"""The command line's commands (symparams.cli.commands), run as a real process (python -m symparams)."""

import json

import pytest

from symparams.families.presets import all_presets
from symparams.families.registry import all_families
from tests.reference.cli_runner import command


def run(*args):
    """``python -m symparams ARGS`` as a process forked from one that imported the package (see
    :mod:`tests.reference.cli_runner`): status, stdout, stderr."""
    return command(*args)


def test_count_bert_base_table_has_thousands_separators_and_shares():
    code, out, err = run("count", "bert-base")
    assert code == 0 and err == ""
    assert "109,482,240" in out and "23,837,184" in out and "21.77%" in out and "77.69%" in out


def test_count_json_schema():
    code, out, _ = run("count", "bert-base", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["model"] == "bert-base"
    assert data["values"] == {"V": 30522, "P": 512, "S": 2, "H": 768, "L": 12, "A": 12, "r": 4}
    assert data["switches"] == {"pooler": True}
    assert (data["total"], data["trainable"]) == (109_482_240, 109_482_240)
    assert data["components"] == {"embeddings": 23_837_184, "encoder": 85_054_464, "pooler": 590_592}


def test_count_json_without_pooler_reports_it_as_zero():
    _, out, _ = run("count", "bert-base", "--set", "pooler=false", "--json")
    assert json.loads(out)["components"]["pooler"] == 0


def test_count_with_set_and_rational_r():
    _, out, _ = run("count", "bert", "--set", "V=30522", "--set", "P=512", "--set", "S=2", "--set", "H=4096",
                    "--set", "L=2", "--set", "A=32", "--set", "r=11008/4096", "--json")
    data = json.loads(out)
    assert data["values"]["r"] == "43/16"
    assert data["total"] == 4096 * (30522 + 512 + 2) + 2 * 4096 + 2 * (
        4 * (4096 * 4096 + 4096) + 2 * 4096 + 4096 * 11008 + 11008 + 11008 * 4096 + 4096 + 2 * 4096) + 4096 * 4096 + 4096


def test_count_transformer_json_components():
    _, out, _ = run("count", "transformer-base", "--json")
    data = json.loads(out)
    assert data["switches"] == {"positions": "sinusoidal", "tie": True, "bias": True, "layernorm": True}
    # MarianModel's count at these sizes (tests/families/test_bert_transformer.py): the shared 37000·512 table
    # and two frozen sinusoidal tables 2·512·512; 6 encoder layers of 3,152,384; 6 decoder layers of 4,204,032
    assert data["components"] == {"embeddings": 37000 * 512 + 2 * 512 * 512, "encoder": 6 * 3_152_384,
                                  "decoder": 6 * 4_204_032, "output": 0}
    assert (data["total"], data["trainable"]) == (63_606_784, 63_082_496)
    assert data["total"] - data["trainable"] == 2 * 512 * 512


def test_count_with_head():
    _, out, _ = run("count", "bert-base", "--head", "masked-lm", "--json")
    data = json.loads(out)
    assert data["head"] == "masked-lm" and data["switches"]["pooler"] is False
    assert data["total"] == 109_482_240 - 590_592 + (768 * 768 + 768) + 2 * 768 + 30522


@pytest.mark.parametrize("args,line", [
    # Llama-3-8B's published 8,030,261,248 includes the untied LM head the base model leaves out
    (("llama-3-8b",), "counted: the base model, no task head; with the causal-lm head (--head causal-lm): "
                      "8,030,261,248"),
    # T5's LM head is tied to the shared embedding: T5ForConditionalGeneration has T5Model's 222,903,552
    (("t5-base",), "counted: the base model, no task head; with the seq2seq-lm head (--head seq2seq-lm): "
                   "222,903,552 (the head adds no parameters)"),
    (("bert-base", "--head", "masked-lm"), "counted: the base model with the masked-lm head"),
])
def test_count_says_which_head_it_counted(args, line):
    code, out, err = run("count", *args)
    assert code == 0 and err == "" and out.splitlines()[-1] == line


def test_count_of_a_family_without_heads_says_nothing_of_heads():
    assert run("count", "transformer-base")[1].splitlines()[-1].startswith("trainable")


def test_formula_keeps_symbols_free_and_substitutes_set_values():
    _, out, _ = run("formula", "bert")
    assert out.splitlines()[0] == "H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)"
    _, out, _ = run("formula", "bert", "--set", "L=12", "--set", "r=4")
    assert out.splitlines()[0] == "145*H**2 + H*(P + S + V + 159)"  # 2·12·(4+2)+1, 12·(4+9)+3
    _, out, _ = run("formula", "bert", "--latex")
    assert out.startswith("H^{2}")


def test_formula_says_what_each_of_its_symbols_stands_for():
    _, out, _ = run("formula", "mixtral-8x7b")
    formula, legend = out.splitlines()
    assert "F_e*N_e" in formula
    assert legend == ("where V: vocabulary size; H: hidden size; L: layers; A: attention heads; G: key/value heads; "
                      "N_e: routed experts per mixture-of-experts layer; F_e: intermediate size of one expert")
    _, out, _ = run("formula", "bert", "--set", "V=30522", "--set", "P=512", "--set", "S=2", "--set", "H=768",
                    "--set", "L=12", "--set", "r=4")
    assert out == "109482240\n"  # a number has no symbols to explain
    assert len(run("formula", "mixtral-8x7b", "--latex")[1].splitlines()) == 1  # LaTeX to paste: the formula only


def test_prove_json():
    code, out, _ = run("prove", "bert-base", "--json")
    data = json.loads(out)
    assert code == 0 and data["invariant"] is True
    assert data["conditions"] and "A divides H" in data["conditions"][0]
    assert [s["step"] for s in data["steps"]][:1] == ["per_head"]
    assert set(data["witness"].values()) == {109_482_240}
    # the query, key and value of each layer hold A, and lose it: A·(H·(H/A) + H/A) = H² + H
    assert [(t["copies"], t["collapsed"], t["cancels"]) for t in data["terms"]] == [("3*L", "H**2 + H", True)]
    assert data["rule_of_thumb"]["value"] == 12 * 12 * 768**2 + (30522 + 512 + 2) * 768


def test_list_names_presets_and_families():
    code, out, err = run("list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "presets:" and lines.count("families:") == 1
    cut = lines.index("families:")
    presets = [line.split()[0] for line in lines[1:cut]]
    families = [line.split()[0] for line in lines[cut + 1:-1]]
    assert "symparams list --inferred" in lines[-1]
    assert presets == list(all_presets())
    for name in ("bert-base", "bert-large", "bert-base-chinese", "transformer-base", "transformer-big"):
        assert name in presets
    # the families section names families only (preset names hold family names: "bert" is in "bert-base")
    assert families == list(all_families())
    assert families[:4] == ["bert", "transformer", "albert", "bart"]  # the articles' two, then by module name
    bert = next(line for line in lines[cut + 1:] if line.split()[0] == "bert")
    assert bert.split(None, 1)[1] == ("switches: pooler  heads: sequence-classification, token-classification, "
                                      "question-answering, masked-lm, causal-lm, pretraining, multiple-choice, "
                                      "next-sentence")


@pytest.mark.parametrize("args,needle", [
    (["count", "gpt-9"], "unknown model 'gpt-9'"),
    (["count", "bert-base", "--head", "nope"], "unknown head 'nope'"),
    (["count", "bert-base", "--set", "Z=3"], "unknown key 'Z'"),
    (["count", "bert-base", "--set", "A=7"], "not divisible by A=7"),
    (["count", "bert-base", "--set", "H=0"], "H must be a positive whole number"),
    (["count", "bert-base", "--set", "L=-2"], "L must be a positive whole number"),
    (["count", "bert-base", "--set", "H=7.5"], "H must be a positive whole number"),
    (["count", "bert-base", "--set", "r=four"], "r must be a positive rational"),
    (["count", "bert-base", "--set", "H"], "--set takes KEY=VALUE"),
    (["count", "bert"], "no value for V, P, S, H, L, A, r"),
    (["count"], "name a model"),
    (["frobnicate"], "invalid choice"),
    (["count", "bert-base", "--bogus"], "unrecognized arguments"),
])
def test_bad_input_is_one_line_and_exit_status_2(args, needle):
    code, out, err = run(*args)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_version_is_the_installed_one():
    from importlib.metadata import version

    import symparams

    code, out, err = run("--version")
    assert code == 0 and err == "" and out == f"symparams {version('symparams')}\n"
    assert symparams.__version__ == version("symparams")


def test_str_of_a_proof_is_what_prove_prints():
    from symparams import model

    code, out, _ = run("prove", "llama-2-70b")
    assert code == 0 and str(model("llama-2-70b").prove()) + "\n" == out


@pytest.mark.parametrize("command", ["list", "count", "formula", "prove", "derive", "solve", "sweep", "audit", "shell"])
def test_every_command_has_a_description_and_a_working_example(command):
    from symparams.cli.parser import COMMANDS

    code, out, err = run(command, "--help")
    summary, description, example = COMMANDS[command]
    assert code == 0 and err == ""
    assert " ".join(description.split()[:4]) in " ".join(out.split()) and f"example:\n  {example}\n" in out
    if command != "shell":  # the example runs (the shell's would wait for input)
        argv = [a for a in example.split()[1:] if not a.endswith(".tex") and a != "-o"]
        code, _, err = run(*argv)
        assert code == 0, (example, err)


def _listed_types() -> set:
    """The model types the data file of inferred formulas holds, read as plain JSON lines."""
    from symparams.families.inferred_data import DATA

    with open(DATA, encoding="utf-8") as fh:
        return {json.loads(line.rstrip().rstrip(","))["model_type"] for line in fh.read().splitlines()[1:]
                if line.startswith("{")}


def _config_with(model_type: str, dotted: str, value: int, cls: str) -> dict:
    """A config.json of ``model_type`` that sets ``dotted`` to ``value``; a sub-config it lives in is written
    whole, at the type's defaults, as ``save_pretrained`` writes it (a sub-config that leaves fields out takes
    its own class's defaults, which the formula may refuse first)."""
    from symparams.families.inferred_data import entries

    config: dict = {"model_type": model_type}
    prefix = dotted.rpartition(".")[0]
    given = {k: v for k, v in entries(model_type)[cls].get("defaults", {}).items()
             if prefix and k.startswith(prefix + ".") and v is not None}
    for key, v in {**given, dotted: value}.items():
        *outer, last = key.split(".")
        inner = config
        for part in outer:
            inner = inner.setdefault(part, {})
        inner[last] = v
    return config


def test_list_inferred_says_what_each_type_refuses():
    from symparams.families.inferred import model
    from symparams.families.inferred_data import OutsideConditions

    code, out, err = run("list", "--inferred")
    assert code == 0 and err == ""
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert set(rows) == _listed_types()
    # a type said to hold a size refuses another value of it, naming it; one said not exact refuses its config
    held = []  # (type, its first class, a field held at a value other than 0, that value)
    for line in rows.values():
        if ": exact, holding " in line:
            named, holding = line.split(": exact, holding ", 1)
            fields = [f.split(" = ") for f in holding.split(";")[0].split(", ")]
            held += [(*named.split(None, 1), f, int(v)) for f, v in fields if v != "0"][:1]  # 0: maybe all it allows
    not_exact = [(t, line.split(": not exact: ", 1)[1].split(":")[0]) for t, line in rows.items()
                 if ": not exact: " in line]  # (the type, its first class not exact)
    assert held and not_exact
    for model_type, classes, field, value in held[:4]:
        first = classes.split(", ")[0]
        with pytest.raises(OutsideConditions, match=f"{field} is {2 * value}"):
            model(_config_with(model_type, field, 2 * value, first), head=None if first == "base" else first)
    for model_type, cls in not_exact[:4]:
        with pytest.raises(OutsideConditions, match="was not inferred"):
            model({"model_type": model_type}, head=None if cls == "base" else cls)
    # a type said to be free with its costs counts at other sizes and answers for FLOPs (OLMo: G = A, H/A = 128)
    assert rows["olmo"].endswith("exact, every size free; FLOPs and memory")
    olmo = model({"model_type": "olmo", "hidden_size": 256, "num_attention_heads": 2, "intermediate_size": 512,
                  "num_hidden_layers": 3, "vocab_size": 1000})
    assert olmo.count == 1000 * 256 + 3 * (4 * 256 * 256 + 3 * 256 * 512)  # tied embeddings, no biases or norms
    assert olmo.flops(16).forward > 0


def test_list_json_holds_presets_families_and_inferred_types():
    code, out, err = run("list", "--json")
    data = json.loads(out)
    assert code == 0 and err == ""
    assert [p["name"] for p in data["presets"]] == list(all_presets())
    assert [f["name"] for f in data["families"]] == list(all_families())
    assert {t["model_type"] for t in data["inferred"]} == _listed_types()
    olmo = next(t for t in data["inferred"] if t["model_type"] == "olmo")
    assert olmo == {"model_type": "olmo", "classes": ["base", "causal-lm"], "exact": True, "free": True, "held": {},
                    "reasons": {}, "costs": True}


def test_set_help_lists_every_symbol():
    from symparams.core.symbols import SYMBOLS

    _, out, _ = run("count", "--help")
    assert " ".join(SYMBOLS) in " ".join(out.split())


def test_a_value_that_starts_with_a_dash_is_a_value():
    code, out, err = run("derive", "bert-base", "--format", "md", "--title", "---")
    assert code == 0 and out.startswith("# ---\n")
    code, _, err = run("solve", "bert-base", "--for", "L", "--target", "-5")
    assert code == 2 and "the target must be a positive whole number of parameters, not '-5'" in err


def test_depth_shows_more_levels_and_nests_the_json():
    code, out, _ = run("count", "bert-base", "--depth", "3")
    assert code == 0 and "    attention             28,366,848    25.91%" in out.splitlines()
    code, out, _ = run("count", "bert-base", "--depth", "3", "--json")
    encoder = json.loads(out)["tree"][1]
    layer = encoder["children"][0]
    assert (encoder["name"], encoder["count"], layer["name"], layer["repeat"]) == ("encoder", 85_054_464, "layer", 12)
    # 12 × (4 × (768² + 768) + 2 × 768): the attention of every layer
    assert layer["children"][0] == {"name": "attention", "count": 12 * (4 * (768 * 768 + 768) + 2 * 768), "repeat": 1,
                                    "children": []}
    assert "tree" not in json.loads(run("count", "bert-base", "--json")[1])


def test_the_cli_reference_in_docs_is_the_parsers():
    from symparams.cli.reference import reference
    from tests.reference import ROOT

    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == reference()


def test_memory_holds_a_sliding_window_and_fit_says_when_every_length_fits():
    # Mistral 7B v0.1: 32 layers keep their last 4,095 tokens, 131,072 bytes each in bf16
    code, out, err = run("memory", "mistral-7b", "--optimizer", "none", "--seq", "32768")
    assert code == 0 and err == ""
    assert f"{131072 * 4095:,}" in out and "every layer keeping only its last 4,095 tokens" in out
    code, out, err = run("memory", "mistral-7b", "--optimizer", "none", "--seq", "32768", "--json")
    data = json.loads(out)
    assert (data["kv_cache"], data["kv_cache_per_token"]) == (131072 * 4095, 131072)
    code, out, err = run("memory", "mistral-7b", "--optimizer", "none", "--fit", "80GB")
    assert code == 2 and out == "" and err.count("\n") == 1 and "4,095" in err


def test_a_size_and_a_sequence_length_take_exponent_notation_as_a_claim_does():
    # 24 layers of 768: 109,482,240 + 12 more layers of 7,087,872 (the article's per-layer count)
    code, out, err = run("count", "bert-base", "--set", "L=2.4e1", "--json")
    assert code == 0 and err == "" and json.loads(out)["total"] == 109_482_240 + 12 * 7_087_872
    _, written_out, _ = run("flops", "bert-base", "--seq", "1e3", "--json")
    _, in_digits, _ = run("flops", "bert-base", "--seq", "1000", "--json")
    assert json.loads(written_out) == json.loads(in_digits) and json.loads(in_digits)["seq"] == 1000


def test_memory_and_flops_name_the_most_loaded_rank_of_a_layout():
    # Llama-3-8B over T = 8, P = 4: the last stage holds 8 layers, the final norm and the LM head
    h, v, f, kv = 4096, 128256, 14336, 1024
    layer = (2 * h * h + 2 * h * kv + 3 * h * f) // 8 + 2 * h  # Q, O, K, V and the MLP split by 8; two norms whole
    code, out, err = run("memory", "llama-3-8b", "--head", "causal-lm", "--tensor-parallel", "8",
                         "--pipeline-parallel", "4", "--json")
    per_rank = json.loads(out)["per_rank"]
    assert code == 0 and per_rank["stage"] == 3 and per_rank["parameters"] == 8 * layer + h + v * h // 8
    assert per_rank["weights"] == 2 * per_rank["parameters"] and len(per_rank["stages"]) == 4
    code, out, err = run("memory", "llama-3-8b", "--head", "causal-lm", "--tensor-parallel", "8",
                         "--pipeline-parallel", "4")
    assert "most loaded rank: pipeline stage 4 of 4 (the last: the head)" in out
    code, out, err = run("flops", "llama-3-8b", "--head", "causal-lm", "--seq", "16", "--tensor-parallel", "8",
                         "--pipeline-parallel", "4", "--json")
    attention = 2 * 2 * 16 * 16 * 32 * 128  # scores and weighted sum of 32 heads of 128 over 16 × 16
    layer_flops = 2 * 16 * (layer - 2 * h) + attention // 8  # the norms multiply nothing
    assert json.loads(out)["per_rank"]["forward"] == 8 * layer_flops + 2 * 16 * h * v // 8
    assert "per_rank" not in json.loads(run("memory", "llama-3-8b", "--json")[1])
