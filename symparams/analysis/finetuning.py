"""The memory of fine-tuning with a LoRA adapter: the frozen base in its dtype, the adapter trained in fp32.

PEFT's ``get_peft_model`` keeps the adapter in fp32 beside a bf16 or fp16
base (``autocast_adapter_dtype``), so the adapter's weights, its gradients
(fp32, 4 bytes a parameter) and its optimizer state (Adam's two fp32 moments,
8 bytes; SGD's momentum, 4) need no master copy; the frozen base has no
gradient and no optimizer state.  Activations and the KV cache are counted as
for the model without the adapter (:mod:`.memory`): the backward pass still
runs through every frozen layer to reach the adapters.

>>> from symparams import model
>>> a = model("llama-3-8b", head="causal-lm").lora(16, ["q_proj", "v_proj"])
>>> mem = a.memory("bf16", "adam")
>>> mem.weights == 2 * a.base + 4 * a.adapter, mem.gradients == 4 * a.adapter, mem.optimizer == 8 * a.adapter
(True, True, True)
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property
from typing import Any

import sympy as sp

from ..core.algebra import closed_form
from ..core.errors import SymparamsError
from .dtypes import parse_dtype, weight_bytes
from .fourbit import FOURBIT
from .memory import OPTIMIZER_BYTES, Memory, _ceil, _state_conventions, zero_per_rank
from .quantized import weights_formula

#: bytes of one adapter parameter: PEFT keeps the adapter in fp32 beside a 16-bit base
ADAPTER_BYTES = 4


class LoRAMemory(Memory):
    """Bytes one rank holds to fine-tune (or serve) ``adapter.model`` with ``adapter`` (a
    :class:`~symparams.analysis.adapters.LoRA`); the other arguments as :class:`~symparams.analysis.memory.Memory`
    takes them, ``dtype`` the frozen base's."""

    def __repr__(self) -> str:
        return (f"<LoRAMemory {self.model.name}: {self.total:,} bytes ({self.dtype} base, {self.adapter.described}, "
                f"{self.optimizer_name}, seq={self.seq}, batch={self.batch})>")

    def __init__(self, adapter, dtype: str = "bf16", optimizer: str = "adam", zero=0, ranks=1, seq=None, batch=1,
                 **options):
        if parse_dtype(dtype) in ("int8", "int4"):
            raise SymparamsError(f"a LoRA adapter on an {parse_dtype(dtype)} base is not counted: give the base's "
                                 f"dtype as fp32, bf16 or fp16, or QLoRA's nf4 or fp4")
        super().__init__(adapter.model, dtype, optimizer, zero, ranks, seq, batch, **options)
        if self.quantization is not None and self.dtype not in FOURBIT:
            raise SymparamsError(f"a LoRA adapter on a base quantized as {self.dtype} is not counted yet: give the "
                                 f"base's dtype as fp32, bf16 or fp16, or nf4 or fp4 (QLoRA)")
        if self.layout.splits or self.fsdp is not None:
            raise SymparamsError("the memory of a LoRA adapter under a parallel layout is not counted yet: leave out "
                                 "the tensor, pipeline, context and expert parallelism and FSDP")
        if adapter.bias != "none":
            raise SymparamsError(f"the memory of a LoRA adapter with bias={adapter.bias} (base biases trained in "
                                 f"the base's dtype) is not counted yet: use bias none")
        self.adapter = adapter

    @property
    def base_weights(self) -> int:
        """The frozen base's bytes in its dtype (before ZeRO divides them): :attr:`weights` less the adapter's."""
        return self._weight_bytes

    @property
    def adapter_weights(self) -> int:
        """The adapter's bytes, fp32 (before ZeRO divides them)."""
        return ADAPTER_BYTES * self.adapter.adapter

    def _training_bytes(self) -> tuple[int, int]:
        """The adapter is fp32: its gradients are, and the optimizer keeps no master copy."""
        return (ADAPTER_BYTES if self.training else 0), OPTIMIZER_BYTES[self.optimizer_name][0]

    @cached_property
    def _states(self) -> tuple[int, int, int]:
        adapter = self.adapter.adapter
        return tuple(_ceil(p) for p in zero_per_rank(self._weight_bytes + ADAPTER_BYTES * adapter,
                                                     self.gradient_bytes * adapter, self.optimizer_bytes * adapter,
                                                     self.zero, self.ranks))

    @cached_property
    def formulas(self) -> dict[str, sp.Expr]:
        """As :attr:`Memory.formulas`, the states in the base's count and the adapter's formula (in R)."""
        parts = dict(super().formulas)
        base = (weight_bytes(closed_form(self.model.tree.total), self.dtype) if self._packed is None
                else weights_formula(self._packed))
        adapter = self.adapter.formula
        states = zero_per_rank(base + ADAPTER_BYTES * adapter,
                               self.gradient_bytes * adapter, self.optimizer_bytes * adapter, self.zero,
                               sp.Integer(self.ranks))
        parts.update((key, closed_form(sp.sympify(value))) for key, value in
                     zip(("weights", "gradients", "optimizer"), states))
        parts["total"] = closed_form(sp.Add(*(parts[key] for key in ("weights", "gradients", "optimizer",
                                                                     "activations", "kv_cache") if key in parts)))
        return parts

    @cached_property
    def _laws(self) -> tuple:
        """The activation laws as for the model; Megatron-LM's 18 bytes a parameter train every parameter, so its
        weights-and-optimizer law is not set beside an adapter's."""
        from .laws import RefusedLaw

        reason = "Megatron-LM's 18 bytes a parameter train every parameter; LoRA trains the adapter alone"
        return tuple(RefusedLaw(law.name, reason) if law.name == "megatron_weights_and_optimizer" else law
                     for law in super()._laws)

    @property
    def bytes_per_parameter(self) -> dict[str, Fraction]:
        """The base's weights per parameter; the adapter's weights, gradients and optimizer state per adapter
        parameter."""
        return {"weights": super().bytes_per_parameter["weights"], "adapter_weights": Fraction(ADAPTER_BYTES),
                "gradients": Fraction(self.gradient_bytes), "optimizer": Fraction(self.optimizer_bytes)}

    @property
    def conventions(self) -> list[str]:
        states = len(_state_conventions(self))
        adapter = (f"LoRA {self.adapter.described}: {self.adapter.adapter:,} adapter parameters in fp32 (4 bytes, "
                   f"as peft keeps them beside a 16-bit or 4-bit base) beside the frozen base")
        training = ("the base is frozen: gradients (fp32, 4 bytes) and the optimizer state "
                    f"({self.optimizer_name}: {self.optimizer_bytes} bytes, fp32 moments, no master copy) of the "
                    f"adapter only; an optimizer's step counters left out" if self.training else
                    "serving (no optimizer): no gradients, no optimizer state, no activations kept")
        return [*_state_conventions(self)[:1], adapter, training, *super().conventions[states:]]

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(parameters=self.adapter.total, trainable=self.adapter.trainable, lora=self.adapter.to_dict())
        return out
