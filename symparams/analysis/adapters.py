"""A LoRA adapter on a model, counted as PEFT counts it.

``get_peft_model(model, LoraConfig(r=R, target_modules=...))`` wraps each
module a target names and gives it ``lora_A`` ``[R, in]`` and ``lora_B``
``[out, R]`` (an embedding: ``lora_embedding_A`` ``[R, rows]`` and
``lora_embedding_B`` ``[width, R]``), no bias; DoRA adds a magnitude vector of
``out`` elements.  The base model is frozen: ``get_nb_trainable_parameters()``
gives the adapter (plus the biases ``bias="all"`` or ``"lora_only"`` thaws)
as trainable, and the base plus the adapter as the total.

The adapter's count is a SymPy expression in the model's symbols and ``R``
(the rank), a sum over the wrapped modules of copies · (R·(in + out)).

>>> from symparams import model
>>> a = model("llama-3-8b").lora(16, ["q_proj", "v_proj"])
>>> a.adapter, a.total, a.formula
(6815744, 7511740416, H*L*R*(3 + G/A))
>>> a
<LoRA llama-3-8b: 6,815,744 trainable of 7,511,740,416 (r=16 on q_proj, v_proj: 64 modules)>
"""

from __future__ import annotations

from functools import cached_property
from typing import Sequence

import sympy as sp

from ..core.algebra import per_layer_kind
from ..core.errors import SymparamsError
from ..core.formatting import thousands
from ..core.symbols import R
from ..core.values import parse_whole
from .adapter_targets import ALL_LINEAR, Module, matched

#: PEFT's bias modes: none trains no bias, all every parameter named ``bias``, lora_only the wrapped modules'
BIAS_MODES = ("none", "all", "lora_only")


class LoRA:
    """A LoRA adapter of rank ``r`` on the modules ``targets`` names (a list of names, or ``"all-linear"``) of
    ``model``; ``dora`` adds DoRA's magnitude vectors; ``bias`` is PEFT's bias mode."""

    def __init__(self, model, r, targets: Sequence[str] | str, dora: bool = False, bias: str = "none"):
        self.model = model
        self.rank = parse_whole("the LoRA rank r", r)
        if not isinstance(dora, bool):
            raise SymparamsError(f"dora is True or False, not {dora!r}")
        if bias not in BIAS_MODES:
            raise SymparamsError(f"the LoRA bias mode is one of {', '.join(BIAS_MODES)}, not {bias!r}")
        self.dora, self.bias = dora, bias
        self.targets = _targets(targets)
        types = (model.family.name, *model.family.config_types)
        self.modules: list[Module] = matched(model.tree, self.targets, model.name, types)
        wrapped = next((m.path for m in self.modules if m.kind == "parameter"), None)
        if dora and wrapped:
            raise SymparamsError(f"{model.name}: DoRA on {wrapped}: PEFT's LoRA on a parameter (lora.ParamWrapper) "
                                 f"refuses DoRA")

    @property
    def name(self) -> str:
        """The model's name (what a capacity search names in its messages)."""
        return self.model.name

    # -- formulas ------------------------------------------------------------
    @cached_property
    def formula(self) -> sp.Expr:
        """The adapter's parameters in the model's symbols and the rank R: Σ copies · (R·(in + out) [+ out])."""
        return shaped(sp.Add(*(m.copies * self._one(m) for m in self.modules)))

    def _one(self, m: Module) -> sp.Expr:
        """One copy of the adapter of module ``m``: lora_A and lora_B (of twice the rank on a fused gate_up_proj),
        and DoRA's magnitude."""
        return m.rank * R * (m.n_in + m.n_out) + (m.n_out if self.dora else 0)

    @cached_property
    def thawed_formula(self) -> sp.Expr:
        """The base model's biases the bias mode makes trainable."""
        if self.bias == "all":
            return sp.Add(*(size for path, size, _ in self.model.tree.reference_params()
                            if path == "bias" or path.endswith(".bias")))
        if self.bias == "lora_only":
            return sp.Add(*(m.copies * m.bias for m in self.modules))
        return sp.Integer(0)

    # -- numbers --------------------------------------------------------------
    def _number(self, expr) -> int:
        values = {**self.model.values, R: sp.Integer(self.rank)}
        value = sp.expand(sp.sympify(expr).xreplace(values))
        if not value.is_Integer:
            self.model._require_values("adapter's count")
            raise SymparamsError(f"{self.model.name}: the adapter's count {value} is not a whole number")
        return int(value)

    @cached_property
    def adapter(self) -> int:
        """The adapter's parameters (lora_A, lora_B and DoRA's magnitudes)."""
        return self._number(self.formula)

    @property
    def base(self) -> int:
        """The base model's parameters (frozen)."""
        return self.model.count

    @property
    def total(self) -> int:
        """The base plus the adapter: PEFT's ``all_param``."""
        return self.base + self.adapter

    @cached_property
    def trainable(self) -> int:
        """The adapter plus the biases the bias mode thaws: PEFT's ``trainable_params``."""
        return self.adapter + self._number(self.thawed_formula)

    @cached_property
    def active(self) -> int:
        """The parameters one token uses: the base model's active count plus the adapters of the modules it
        passes through (of routed copies, the ones it is routed to)."""
        return self.model.active + self._number(sp.Add(*(m.used * self._one(m) for m in self.modules)))

    @property
    def layers(self) -> int:
        """How many modules (or parameters) the adapter wraps, every layer's copy: a fused expert tensor is one."""
        return sum(self._number(m.copies / m.experts) for m in self.modules)

    def memory(self, dtype: str = "bf16", optimizer: str = "adam", zero=0, ranks=1, seq=None, batch=1, **options):
        """The bytes of fine-tuning the model with this adapter (the base frozen in ``dtype``, the adapter in fp32;
        see :mod:`symparams.analysis.finetuning`); the arguments as :meth:`Model.memory` takes them."""
        from .finetuning import LoRAMemory  # not imported by a count, which never needs it

        return LoRAMemory(self, dtype, optimizer, zero, ranks, seq, batch, **options)

    # -- output -----------------------------------------------------------------
    @property
    def described(self) -> str:
        """``r=16 on q_proj, v_proj`` (with DoRA, and a bias mode other than none)."""
        on = self.targets if isinstance(self.targets, str) else ", ".join(self.targets)
        extra = (" with DoRA" if self.dora else "") + (f", bias={self.bias}" if self.bias != "none" else "")
        return f"r={self.rank} on {on}{extra}"

    def to_dict(self) -> dict:
        """What ``count --lora --json`` adds under ``"lora"``."""
        return {"r": self.rank, "targets": self.targets, "dora": self.dora, "bias": self.bias,
                "modules": [{"path": m.path, "kind": m.kind, "in": str(m.n_in), "out": str(m.n_out),
                             "copies": self._number(m.copies)} for m in self.modules],
                "wrapped": self.layers, "adapter": self.adapter, "base": self.base,
                "formula": sp.sstr(self.formula), "formula_latex": sp.latex(self.formula)}

    def lines(self) -> list[str]:
        """The text ``count --lora`` prints under the table."""
        names = ", ".join(dict.fromkeys(m.path for m in self.modules))
        return [f"LoRA {self.described}: {self.layers:,} modules ({names})",
                f"adapter = {sp.sstr(self.formula)} = {thousands(self.adapter)}"
                + ("" if self.trainable == self.adapter else f"; trainable with the biases {self.bias} thaws: "
                   f"{thousands(self.trainable)}"),
                "convention: as peft 0.22's get_nb_trainable_parameters() counts it (lora_A [r, in], lora_B [out, r], "
                "no bias; DoRA: a magnitude of out; the base frozen)"] + self._parameter_lines()

    def _parameter_lines(self) -> list[str]:
        if not any(m.kind == "parameter" for m in self.modules):
            return []
        return ["on a mixture of experts peft (transformers 5) wraps the router and the experts' fused tensors as "
                "parameters (lora.ParamWrapper): E experts get lora_A [E·r, in], lora_B [out, E·r]; gate_up_proj, "
                "two projections fused, at rank 2r"]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return (f"<LoRA {self.model.name}: {self.trainable:,} trainable of {self.total:,} ({self.described}: "
                f"{self.layers:,} modules)>")


def shaped(expr: sp.Expr) -> sp.Expr:
    """An adapter's count as it reads best: the rank's terms collected apart from DoRA's, common factors out
    (per kind of layer where the first layers differ)."""
    return sp.factor_terms(sp.collect(sp.expand(expr), R, func=_per_kind))


def _per_kind(coefficient: sp.Expr) -> sp.Expr:
    return per_layer_kind(coefficient, sp.factor_terms)


def _targets(targets) -> list[str] | str:
    """The targets as given: ``"all-linear"``, or a list of names (a string of names with commas is split)."""
    if isinstance(targets, str):
        if targets.strip().lower() == ALL_LINEAR:
            return ALL_LINEAR
        targets = targets.split(",")
    if isinstance(targets, (bytes, dict)) or not hasattr(targets, "__iter__"):
        raise SymparamsError(f"LoRA targets are module names (q_proj, v_proj) or all-linear, not {targets!r}")
    names = [t.strip() if isinstance(t, str) else t for t in targets]
    if not names:
        raise SymparamsError("LoRA needs at least one target: module names (q_proj, v_proj) or all-linear")
    return list(dict.fromkeys(names))
