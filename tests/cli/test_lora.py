"""count and formula with a LoRA adapter, run as the command line runs them, against PEFT."""

import json

import pytest
import sympy as sp
import torch
import transformers

from symparams.core.symbols import SYMBOLS
from tests.reference import FIXTURES
from tests.reference.cli_runner import command
from tests.reference.hf import lora_wrapped

pytestmark = pytest.mark.crosscheck


def peft_counts(folder: str, head_class, r: int, targets, **options) -> tuple[int, int]:
    config = transformers.AutoConfig.from_pretrained(FIXTURES / folder)
    with torch.device("meta"):
        module = head_class.from_config(config)
    return lora_wrapped(module, r=r, target_modules=targets, **options).get_nb_trainable_parameters()


def test_count_lora_json_gives_peft_trainable_and_total():
    code, out, err = command("count", "--config", FIXTURES / "gpt2", "--lora", "8", "--lora-targets", "c_attn,c_fc",
                             "--dora", "--json")
    data = json.loads(out)
    assert (code, err) == (0, "")
    assert (data["trainable"], data["total"]) == peft_counts("gpt2", transformers.AutoModel, 8, ["c_attn", "c_fc"],
                                                             use_dora=True)
    assert data["lora"]["wrapped"] == 24 and data["lora"]["adapter"] == data["trainable"]


def test_count_lora_table_shows_peft_figures():
    code, out, err = command("count", "qwen2.5-0.5b", "--head", "causal-lm", "--lora", "16", "--lora-targets",
                             "all-linear", "--lora-bias", "all")
    trainable, total = peft_counts("Qwen/Qwen2.5-0.5B", transformers.AutoModelForCausalLM, 16, "all-linear",
                                   bias="all")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert any(line.split()[:2] == ["total", f"{total:,}"] for line in lines)
    assert any(line.split()[:2] == ["trainable", f"{trainable:,}"] for line in lines)


def test_formula_lora_is_the_count_by_hand():
    """BERT's dense: the attention output and the FFN's two layers in each layer, and the pooler:
    L·(R·(H + H) + R·(H + rH) + R·(rH + H)) + R·(H + H)."""
    code, out, err = command("formula", "bert", "--lora", "8", "--lora-targets", "dense")
    H, L, R, r = (SYMBOLS[k].symbol for k in "HLRr")
    printed = sp.parse_expr(out.splitlines()[0], local_dict={"H": H, "L": L, "R": R, "r": r})
    assert (code, err) == (0, "")
    assert sp.expand(printed - (L * (R * 2 * H + R * (H + r * H) + R * (r * H + H)) + R * 2 * H)) == 0
    assert "R: rank of a LoRA adapter" in out.splitlines()[1]


def test_memory_lora_weights_are_the_bytes_peft_holds():
    """GPT-2 in bf16 with LoRA on c_attn, on the meta device: the base's bf16 tensors and PEFT's fp32 adapter."""
    config = transformers.AutoConfig.from_pretrained(FIXTURES / "gpt2")
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(config, dtype=torch.bfloat16)
    wrapped = lora_wrapped(module, r=8, target_modules=["c_attn"])
    held = sum(p.numel() * p.element_size() for p in wrapped.parameters())
    code, out, err = command("memory", "--config", FIXTURES / "gpt2", "--lora", "8", "--lora-targets", "c_attn",
                             "--dtype", "bf16", "--optimizer", "none", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["weights"] == held
