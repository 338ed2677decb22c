"""The fine-tuning section of a document: LoRA and QLoRA of the model at one common setting.

The setting: a LoRA adapter of rank 16 on every linear layer but the output layer (PEFT's ``all-linear``), the
model as it is released and fine-tuned (a generative model with its LM head), trained with AdamW; LoRA on a
bf16 base, QLoRA on bitsandbytes' NF4 base with double quantization.  On a mixture of experts PEFT's
``all-linear`` also puts LoRA on the experts' 3-D tensors and the router where it converts the model's names
(:mod:`~symparams.analysis.adapter_experts`), and the section says so; on a mixture whose adapter is not counted
there, the adapter wraps the attention's linear layers only, and the section says that.

The adapter's count and formula are :class:`~symparams.analysis.adapters.LoRA`'s, the bytes
:class:`~symparams.analysis.finetuning.LoRAMemory`'s (the ``memory --lora`` command's), each from the tree's one
exact evaluation; this module only chooses the setting and checks that the parts add up to the total.

>>> from symparams import model
>>> v = finetune_view(model("llama-3-8b"))
>>> v.head, v.targets, v.wrapped, v.adapter
('causal-lm', None, 224, 41943040)
>>> v.lora["total"] == sum(v.lora[part] for part in PARTS)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..analysis.adapter_targets import ALL_LINEAR, adaptable, output_layer, paths
from ..core.errors import SymparamsError
from ..core.model import Model
from .formulas import latex

#: the rank of the common setting (the one most fine-tuning recipes start from)
RANK = 16
#: AdamW keeps the same two fp32 moments a parameter as Adam: the ``memory`` command's ``adam``
OPTIMIZER = "adam"
#: the frozen base's dtype fine-tuned with LoRA, and with QLoRA
LORA_DTYPE, QLORA_DTYPE = "bf16", "nf4"
#: the rows of each way's memory, in the order the section shows them, before their total
PARTS = ("base_weights", "adapter_weights", "gradients", "optimizer")


@dataclass(frozen=True)
class FinetuneView:
    """The fine-tuning section of ``m``'s document (see the module's docstring for the setting).

    ``targets`` is None where the adapter is PEFT's ``all-linear``, else the names of the attention's linear
    layers it wraps on a mixture of experts; ``lora`` and ``qlora`` hold the bytes by :data:`PARTS` and
    ``total``; a refused adapter (``refusal``) or QLoRA (``qlora_refusal``) holds the command's message.
    """

    rank: int
    head: str | None              # the head of the model fine-tuned (None: the model as it is)
    targets: tuple[str, ...] | None
    modules: tuple[str, ...]      # the wrapped modules' paths, layers as *
    output: bool                  # the model has an output layer, which all-linear leaves out and NF4 keeps
    wrapped: int                  # how many modules, every layer's copy
    formula: str                  # the adapter's parameters in the model's symbols and R (LaTeX)
    formula_expr: sp.Expr         # the same, for the page's MathML
    adapter: int
    base: int
    share: Fraction               # the adapter's share of the base plus the adapter
    lora: dict
    qlora: dict | None
    qlora_refusal: str = ""
    refusal: str = ""
    moe: str = ""                 # a mixture of experts: "parameters" (its router and experts wrapped too),
                                  # "unconverted" (left out by all-linear), "attention" (the attention alone)

    @property
    def total(self) -> int:
        """The base plus the adapter: PEFT's ``all_param``."""
        return self.base + self.adapter


def finetune_view(m: Model) -> FinetuneView:
    """The fine-tuning section of ``m``'s document: its released model (with its LM head) at the common setting."""
    released = m.as_released()
    try:
        adapter, targets = _adapter(released)
        if not adapter.modules:  # PEFT refuses a config whose targets match no module
            raise SymparamsError(f"{released.name}: all-linear wraps no module: the model has no linear layer "
                                 f"but its output layer")
        lora = _bytes(adapter, LORA_DTYPE)
    except SymparamsError as error:  # the model's modules are not all known as PEFT sees them
        return _refused(released, str(error))
    try:
        qlora, qlora_refusal = _bytes(adapter, QLORA_DTYPE), ""
    except SymparamsError as error:  # a model transformers keeps partly in fp32 beside a 4-bit base, say
        qlora, qlora_refusal = None, str(error)
    return FinetuneView(
        rank=RANK, head=released.head, targets=targets,
        modules=tuple(dict.fromkeys(module.path for module in adapter.modules)), wrapped=adapter.layers,
        output=_has_output_layer(released),
        formula=latex(adapter.formula), formula_expr=adapter.formula, adapter=adapter.adapter, base=adapter.base,
        share=Fraction(adapter.adapter, adapter.total), lora=lora, qlora=qlora, qlora_refusal=qlora_refusal,
        moe=_moe(released, adapter, targets))


def _adapter(m: Model):
    """The common setting's adapter and its targets (None: all-linear); on a mixture of experts whose adapter
    all-linear cannot count, the attention's linear layers."""
    try:
        return m.lora(RANK, ALL_LINEAR), None
    except SymparamsError:
        if not _experts(m):
            raise
    targets = attention_targets(m)
    return m.lora(RANK, list(targets)), targets


def _moe(m: Model, adapter, targets) -> str:
    if not _experts(m):
        return ""
    if targets is not None:
        return "attention"
    return "parameters" if any(module.kind == "parameter" for module in adapter.modules) else "unconverted"


def attention_targets(m: Model) -> tuple[str, ...]:
    """The names of the linear layers of a mixture of experts' attention (``q_proj``, ``kv_b_proj``): the modules
    under a path segment that names attention, which match nothing else (else refused)."""
    modules = [module for module in adaptable(m.tree) if module.kind == "linear"]
    attention = [module for module in modules if _in_attention(module.path)]
    names = tuple(dict.fromkeys(module.path.rsplit(".", 1)[-1] for module in attention))
    if not names:
        raise SymparamsError(f"{m.name}: no attention module found to put LoRA on beside its experts")
    elsewhere = [module.path for module in modules if not _in_attention(module.path)
                 and module.path.rsplit(".", 1)[-1] in names and module.path != output_layer(modules)]
    if elsewhere:
        raise SymparamsError(f"{m.name}: {elsewhere[0]} bears an attention module's name outside the attention")
    return names


def _has_output_layer(m: Model) -> bool:
    """Whether ``m`` has an output layer (which all-linear leaves out and bitsandbytes keeps): an LM head, or a
    linear layer onto the vocabulary (a tied head may be listed only under its table)."""
    return m.head in ("causal-lm", "seq2seq-lm") or output_layer(adaptable(m.tree)) is not None


def _experts(m: Model) -> bool:
    """Whether PEFT's all-linear would reach experts: routed ones, or modules under ``experts`` (as
    :func:`~symparams.analysis.adapter_targets.matched` tells them)."""
    return m.tree.routed or any("experts" in path.split(".") for path in paths(m.tree))


def _in_attention(path: str) -> bool:
    return any("attn" in part or "attention" in part for part in path.split(".")[:-1])


def _bytes(adapter, dtype: str) -> dict:
    """The bytes of training ``adapter`` on a base in ``dtype`` (no sequence: weights and training state only),
    by :data:`PARTS` and ``total``, and ``serving``: the weights alone, base and adapter, which is what serving the
    model with the adapter beside it holds before its KV cache; checked to add up to the ``memory`` command's total."""
    memory = adapter.memory(dtype, OPTIMIZER)
    parts = {"base_weights": memory.base_weights, "adapter_weights": memory.adapter_weights,
             "gradients": memory.gradients, "optimizer": memory.optimizer}
    if sum(parts.values()) != memory.total or parts["base_weights"] + parts["adapter_weights"] != memory.weights:
        raise SymparamsError(f"{adapter.name}: the parts of the memory of fine-tuning do not add up to its total")
    return {**parts, "total": memory.total, "serving": memory.weights}


def _refused(m: Model, reason: str) -> FinetuneView:
    return FinetuneView(rank=RANK, head=m.head, targets=None, modules=(), output=False, wrapped=0, formula="",
                        formula_expr=sp.Integer(0), adapter=0, base=m.count, share=Fraction(0), lora={}, qlora=None,
                        refusal=reason)

