"""When nothing fits a memory budget: the bytes the smallest size needs, and the smallest single change of each
kind that fits, each answer checked against the memory it names."""

import json

from symparams import model
from symparams.analysis.capacity import shortfall
from tests.reference.cli_runner import command

LLAMA3_8B = 7_504_924_672  # LlamaModel's parameters (no LM head), as transformers builds Llama-3-8B
GB = 10**9


def test_training_llama_3_8b_on_80gb_needs_zero_3_over_two_ranks():
    m = model("llama-3-8b")
    s = shortfall(m, 80 * GB, "seq", dtype="bf16", optimizer="adam")
    # bf16 weights and gradients, fp32 master copy and adam moments: 16 bytes a parameter, before activations
    assert s.needed == m.memory("bf16", "adam", seq=1).total and s.needed > 16 * LLAMA3_8B > 80 * GB
    assert s.excess == s.needed - 80 * GB
    (remedy,) = s.remedies  # a smaller type cannot be trained here; no ZeRO without ranks; TP keeps the weights
    assert remedy.change == {"zero": 3, "ranks": 2}
    at = lambda seq: m.memory("bf16", "adam", zero=3, ranks=2, seq=seq).total  # noqa: E731
    assert at(remedy.value) <= 80 * GB < at(remedy.value + 1)  # the longest sequence that fits, exactly


def test_serving_suggests_a_smaller_type_and_each_kind_once():
    m = model("llama-3-8b")
    s = shortfall(m, 10 * GB, "seq", dtype="bf16", optimizer="none")
    assert [r.change for r in s.remedies] == [{"zero": 3, "ranks": 2}, {"dtype": "int8"}]
    int8 = s.remedies[1]
    at = lambda seq: m.memory("int8", "none", seq=seq).total  # noqa: E731
    assert at(int8.value) <= 10 * GB < at(int8.value + 1)
    assert m.memory("int4", "none", seq=1).total <= 10 * GB  # int4 fits too, but int8 is the smaller change


def test_given_ranks_a_zero_stage_is_the_first_suggestion():
    s = shortfall(model("llama-3-8b"), 80 * GB, "seq", dtype="bf16", optimizer="adam", ranks=4)
    assert s.remedies[0].change == {"zero": 1}  # the optimizer state over 4 ranks: 12 → 3 bytes a parameter


def test_the_command_line_says_what_is_needed_and_what_fits():
    code, out, err = command("memory", "llama-3-8b", "--fit", "80GB")
    assert code == 0 and err == ""
    needed = model("llama-3-8b").memory("bf16", "adam", seq=1).total
    assert f"nothing fits 80,000,000,000 bytes: even seq = 1 needs {needed:,} bytes, {needed - 80 * GB:,} more" in out
    assert "fits with --zero 3 --ranks 2: at most " in out
    code, out, err = command("memory", "llama-3-8b", "--fit", "80GB", "--json")
    data = json.loads(out)
    assert data["value"] is None and data["nothing_fits"]["needed"] == needed
    assert data["nothing_fits"]["fits_with"][0]["change"] == {"zero": 3, "ranks": 2}
    code, out, err = command("memory", "llama-3-8b", "--fit", "80GB", "--seq", "4096")  # activations: two changes
    assert "no single change of ZeRO, ranks, tensor parallelism, type or recomputation makes it fit" in out
