"""Every aten op of a forward (and backward) pass, with the FLOPs PyTorch's counter gives it and where it ran.

:class:`OpTrace` is a ``TorchDispatchMode`` that records, for each aten op, its name, the FLOPs
``torch.utils.flop_counter`` counts for it (its own formulas: products only), the number of elements it
writes, its output's shape, and whether it ran inside an attention module transformers marks
``is_causal`` (read off the module itself, through ``torch.utils.module_tracker.ModuleTracker``, in the
backward pass too).  The FLOPs modes' tests pick out of it what a causal kernel would skip, what a
checkpointed layer recomputes and what element-wise work the counter leaves out, each by op name and
shape, never by our own numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode, flop_registry
from torch.utils.module_tracker import ModuleTracker

from .flops import _scalar


@dataclass(frozen=True)
class Op:
    name: str  # the overload packet's name: "bmm", "_softmax", "silu"...
    flops: int  # as torch.utils.flop_counter counts it (0 for all but products)
    elements: int  # of its first output
    shape: tuple[int, ...]  # of its first output
    operands: tuple[tuple[int, ...], ...]  # the shapes of its tensor arguments
    causal: bool  # ran inside an attention module whose is_causal is true
    backward: bool


class OpTrace(TorchDispatchMode):
    """Record every aten op run while entered (see the module)."""

    def __init__(self, module: torch.nn.Module):
        super().__init__()
        root = type(module).__name__
        self.causal = {f"{root}.{name}" if name else root for name, sub in module.named_modules()
                       if getattr(sub, "is_causal", False) is True}
        self.tracker = ModuleTracker()
        self.ops: list[Op] = []

    def __enter__(self):
        self.tracker.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        self.tracker.__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func._overloadpacket
        flops = flop_registry[packet](*args, **kwargs, out_val=out) if packet in flop_registry else 0
        first = tree_flatten(out)[0]
        first = first[0] if first and isinstance(first[0], torch.Tensor) else None
        self.ops.append(Op(packet.__name__, int(flops), first.numel() if first is not None else 0,
                           tuple(first.shape) if first is not None else (),
                           tuple(tuple(a.shape) for a in tree_flatten(args)[0] if isinstance(a, torch.Tensor)),
                           bool(self.causal & self.tracker.parents),
                           self.tracker.is_bw))
        return out


def trace(module, inputs: dict, backward: bool = False) -> tuple[list[Op], int]:
    """The ops of a forward pass (and, with ``backward``, of the backward pass of a scalar of its outputs), and
    FlopCounterMode's own total over the same run, so that the trace's FLOPs can be checked against it."""
    module.zero_grad(set_to_none=True)
    with FlopCounterMode(display=False) as counter, OpTrace(module) as recorder:
        output = module(**inputs)
        if backward:
            _scalar(output).backward()
    return recorder.ops, counter.get_total_flops()
