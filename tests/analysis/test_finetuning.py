"""The memory of fine-tuning with LoRA against what PyTorch holds: a tiny real model in bf16 wrapped by PEFT,
one training step with a real optimizer, every tensor's bytes added up."""

import pytest
import torch
import transformers

from symparams import SymparamsError, model
from tests.reference.flops import real, token_ids
from tests.reference.hf import lora_wrapped

pytestmark = pytest.mark.crosscheck

CONFIG = {"model_type": "llama", "vocab_size": 50, "hidden_size": 32, "intermediate_size": 48,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": False}


def held_after_a_step(targets, optimizer: str, dora: bool = False) -> tuple[int, int, int]:
    """(weights, gradients, optimizer state) bytes a bf16 LlamaForCausalLM with a LoRA adapter holds after one
    step: every parameter's bytes, every gradient's, every optimizer state tensor's (but the scalar step
    counters)."""
    module = real("LlamaForCausalLM", transformers.LlamaConfig(**{k: v for k, v in CONFIG.items()
                                                                   if k != "model_type"})).to(torch.bfloat16)
    wrapped = lora_wrapped(module, r=4, target_modules=targets, use_dora=dora)
    trainable = [p for p in wrapped.parameters() if p.requires_grad]
    step = torch.optim.AdamW(trainable) if optimizer == "adam" else torch.optim.SGD(trainable, lr=0.1, momentum=0.9)
    ids = token_ids(50, 8, 1)
    wrapped(input_ids=ids, labels=ids).loss.backward()
    step.step()
    weights = sum(p.numel() * p.element_size() for p in wrapped.parameters())
    gradients = sum(p.grad.numel() * p.grad.element_size() for p in wrapped.parameters() if p.grad is not None)
    state = sum(t.numel() * t.element_size() for s in step.state.values() for t in s.values()
                if torch.is_tensor(t) and t.dim() > 0)
    return weights, gradients, state


@pytest.mark.parametrize("targets, optimizer, dora", [(["q_proj", "v_proj"], "adam", False),
                                                      ("all-linear", "sgd", True)], ids=str)
def test_lora_memory_is_what_pytorch_holds_after_a_step(targets, optimizer, dora):
    adapter = model(CONFIG, head="causal-lm").lora(4, targets, dora=dora)
    mem = adapter.memory("bf16", optimizer)
    assert (mem.weights, mem.gradients, mem.optimizer) == held_after_a_step(targets, optimizer, dora)


def test_lora_memory_formulas_are_its_numbers_at_the_model_values():
    """The formulas, in the model's symbols and R, give the figures at the preset's values and the rank."""
    from symparams.core.symbols import R
    adapter = model("llama-3-8b", head="causal-lm").lora(16, ["q_proj", "v_proj"])
    mem = adapter.memory("bf16", "adam", zero=1, ranks=8)
    values = {**adapter.model.values, R: 16}
    for part in ("weights", "gradients", "optimizer"):
        assert mem.formulas[part].xreplace(values) == getattr(mem, part)


def test_lora_memory_refuses_a_quantized_base_and_trained_biases():
    adapter = model("llama-3-8b").lora(16, ["q_proj"])
    with pytest.raises(SymparamsError, match="QLoRA"):
        adapter.memory("int4", "adam")
    with pytest.raises(SymparamsError, match="bias"):
        model("qwen2.5-0.5b").lora(8, ["q_proj"], bias="all").memory("bf16", "adam")
    # a packed base (its blocks and scales) and a layout's ranks are placed for the model alone, not the adapter
    with pytest.raises(SymparamsError, match="quantized as q4_k"):
        adapter.memory("q4_k", "adam")
    with pytest.raises(SymparamsError, match="parallel layout"):
        adapter.memory("bf16", "adam", tensor_parallel=2)


def test_the_longest_context_of_a_lora_fine_tuning_is_the_last_that_fits():
    """--fit with an adapter searches the fine-tuning's memory, not the full training's."""
    from symparams.analysis.capacity import longest_context
    m = model("llama-3-8b", head="causal-lm")
    adapter = m.lora(16, "all-linear")
    found = longest_context(adapter, 24 * 10**9, dtype="bf16", optimizer="adam")
    assert adapter.memory(seq=found).total <= 24 * 10**9 < adapter.memory(seq=found + 1).total
    assert longest_context(m, 24 * 10**9, dtype="bf16", optimizer="adam") is None  # full training: nothing fits


def test_lora_memory_sets_no_megatron_state_law_beside_an_adapter():
    """Megatron-LM's 18 bytes a parameter describe training every parameter: beside an adapter, refused, and the
    report (which evaluates every law it sets) is whole."""
    mem = model("llama-3-8b", head="causal-lm").lora(16, ["q_proj", "v_proj"]).memory("bf16", "adam")
    assert [law["name"] for law in mem.laws_refused][0] == "megatron_weights_and_optimizer"
    assert mem.to_dict()["laws"] == []


def test_a_fine_tunings_memory_prints_as_the_commands_report():
    # a subclass of Memory: str() and the notebook's displays are its report, as memory --lora prints it
    mem = model("llama-3-8b").lora(16, ["q_proj"]).memory("bf16", "adam")
    text = str(mem)
    assert text.splitlines()[1].split() == ["part", "bytes", "GiB"]
    assert f"{mem.gradients:,}" in text and "| part | bytes | GiB |" in mem._repr_markdown_()
