"""``flops`` and ``memory`` with the published laws and ``--step-time``/``--peak``/``--gpus``, as a real process."""

import json
from fractions import Fraction

from tests.reference.cli_runner import command


def test_flops_json_lists_each_law_with_its_source_and_parts_and_the_utilisation():
    code, out, err = command("flops", "llama-3-8b", "--head", "causal-lm", "--seq", "2048", "--batch", "4",
                             "--step-time", "0.5", "--peak", "989e12", "--gpus", "4", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    megatron = next(law for law in data["laws"] if law["name"] == "megatron_training")
    assert "Megatron-LM" in megatron["source"] and megatron["compares"] == "training"
    # the causal half of the scores: 6·H·L·s per token at H = 4096, L = 32, s = 2048
    assert megatron["terms"] == [{"part": "attention scores", "exact": megatron["terms"][0]["exact"],
                                  "law": megatron["terms"][0]["law"], "difference": "6*H*L*s",
                                  "difference_per_token": 6 * 4096 * 32 * 2048}]
    used = {row["name"]: row for row in data["utilisation"]["conventions"]}
    capacity = Fraction(1, 2) * 4 * 989 * 10**12
    assert Fraction(used["mfu"]["utilisation"]) == Fraction(data["forward"] + data["backward"]) / capacity
    assert data["laws_refused"] == []


def test_flops_text_says_why_a_law_is_not_applied_to_an_encoder():
    code, out, _ = command("flops", "bert-base", "--seq", "128")
    assert code == 0
    assert "Megatron-LM num_floating_point_operations: not applied: not a decoder-only causal language model" in out


def test_flops_text_prints_the_utilisation_table():
    code, out, _ = command("flops", "gpt2", "--head", "causal-lm", "--seq", "1024", "--batch", "480",
                           "--step-time", "2.5", "--peak", "312e12")
    assert code == 0
    assert "utilisation of a 5/2 s step on 1 GPU(s)" in out and "nanoGPT" in out and "53.89%" in out


def test_memory_json_lists_megatrons_theoretical_memory():
    code, out, _ = command("memory", "llama-3-8b", "--head", "causal-lm", "--seq", "4096", "--json")
    laws = {law["name"]: law for law in json.loads(out)["laws"]}
    assert code == 0 and set(laws) == {"megatron_weights_and_optimizer", "megatron_activations",
                                       "korthikanti_activations"}
    # Megatron's fp32 gradients: 2 bytes a parameter more than the exact bf16 ones
    assert laws["megatron_weights_and_optimizer"]["difference_value"] == -2 * 8_030_261_248
