"""The FLOPs and cache reference: tiny transformers models run on the CPU under PyTorch's own counter.

``torch.utils.flop_counter.FlopCounterMode`` counts every matrix product
(``mm``, ``addmm``, ``bmm``, ``baddbmm``, convolutions) as ``2·m·n·k`` and
nothing else; the model is built with eager attention (whether the counter
sees a fused SDPA kernel depends on the PyTorch version and device: eager
attention's plain matmuls it always sees) and eager experts (a loop over the
experts tokens are routed to).  Weights are random and tiny: only shapes matter.
"""

from __future__ import annotations

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

transformers.logging.set_verbosity_error()


def real(cls_name: str, config, seed: int = 0):
    """``transformers.<cls_name>`` built on the CPU with eager attention and eager experts."""
    config._attn_implementation = "eager"
    if hasattr(config, "_experts_implementation"):
        config._experts_implementation = "eager"
    torch.manual_seed(seed)
    module = getattr(transformers, cls_name)(config)
    module.train()  # dropout on or off changes no matmul; train() lets backward run everywhere
    return module


def token_ids(vocab: int, seq: int, batch: int, seed: int = 1) -> torch.Tensor:
    """``batch × seq`` random token ids (no special tokens: ids from 3 up, where the vocabulary allows)."""
    generator = torch.Generator().manual_seed(seed)
    low = 3 if vocab > 3 else 0
    return torch.randint(low, vocab, (batch, seq), generator=generator)


def _scalar(output) -> torch.Tensor:
    """A scalar that depends on every floating-point output tensor, for ``backward()``."""
    total = 0
    values = output.values() if hasattr(output, "values") else output
    for value in values:
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.requires_grad:
            total = total + value.float().sum()
    return total


def counted(module, inputs: dict) -> tuple[int, int]:
    """(forward FLOPs, forward + backward FLOPs) as FlopCounterMode counts them, without a cache: one pass,
    the counter read once the forward pass is done and again after the backward pass."""
    module.zero_grad(set_to_none=True)
    with FlopCounterMode(display=False) as counter:
        output = module(**inputs, use_cache=False) if _takes_cache(module) else module(**inputs)
        forward = counter.get_total_flops()
        _scalar(output).backward()
    return forward, counter.get_total_flops()


def forward_counted(module, inputs: dict) -> int:
    """Forward FLOPs as FlopCounterMode counts them, without a cache."""
    with FlopCounterMode(display=False) as counter:
        module(**inputs, use_cache=False) if _takes_cache(module) else module(**inputs)
    return counter.get_total_flops()


def _takes_cache(module) -> bool:
    import inspect

    return "use_cache" in inspect.signature(module.forward).parameters


def cache_bytes(module, inputs: dict) -> tuple[int, int]:
    """(self-attention cache bytes, cross-attention cache bytes) a forward pass with ``use_cache=True``
    leaves, summed over every key and value tensor the cache holds."""
    with torch.no_grad():
        output = module(**inputs, use_cache=True)
    cache = output.past_key_values
    if hasattr(cache, "self_attention_cache"):  # an encoder-decoder cache
        return tensor_bytes(cache.self_attention_cache), tensor_bytes(cache.cross_attention_cache)
    return tensor_bytes(cache), 0


def tensor_bytes(cache) -> int:
    """Bytes of every key and value tensor ``cache`` (a transformers cache) holds."""
    total = 0
    for layer in cache.layers:
        for tensor in (getattr(layer, "keys", None), getattr(layer, "values", None)):
            if isinstance(tensor, torch.Tensor):
                total += tensor.numel() * tensor.element_size()
    return total
