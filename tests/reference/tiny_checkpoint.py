"""The tiny checkpoints of tests/checkpoints (the guides' ``audit`` examples): what this module writes, byte for
byte (``tests/cli/test_audit_command.py`` regenerates them and compares).

``tiny-llama``: transformers' config.json of a Llama of 2 layers, H = 32, GQA, an untied head, in float16; its
``model.safetensors`` holds every tensor transformers' model has (built on the meta device), as zeros of
float16, written by ``safetensors.numpy.save_file``; ``damaged.safetensors`` lacks ``lm_head.weight`` and holds
``model.norm.weight`` in float32.  ``python -m tests.reference.tiny_checkpoint`` writes them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import safetensors.numpy
import torch
import transformers

FOLDER = Path(__file__).resolve().parents[1] / "checkpoints" / "tiny-llama"
CONFIG = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, tie_word_embeddings=False, architectures=["LlamaForCausalLM"], dtype="float16")


def write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    config = transformers.LlamaConfig(**CONFIG)
    config.save_pretrained(folder)
    with torch.device("meta"):
        module = transformers.LlamaForCausalLM(config)
    arrays = {name: np.zeros(tuple(p.shape), np.float16) for name, p in module.named_parameters()}
    safetensors.numpy.save_file(arrays, str(folder / "model.safetensors"))
    del arrays["lm_head.weight"]
    arrays["model.norm.weight"] = arrays["model.norm.weight"].astype(np.float32)
    safetensors.numpy.save_file(arrays, str(folder / "damaged.safetensors"))


if __name__ == "__main__":
    write(FOLDER)
