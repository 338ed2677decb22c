"""Published memory formulas beside the exact bytes: Megatron-LM's theoretical memory and Korthikanti et al.'s forms.

* Megatron-LM ``megatron/training/theoretical_memory_usage.py`` (NVIDIA/Megatron-LM @
  00caa53af30912914981c86f39db123961678bbd): ``compute_weight_and_optimizer_memory`` (its own parameter
  count: no biases, no position table, no router; 18 bytes a parameter, or ``6 + 12/dp`` with the distributed
  optimizer) and the activations of the first pipeline stage, ``compute_activation_memory`` (with sequence
  parallelism and selective recomputation: Table 2's ``18 + 4·ffn/h`` per layer, the embedding's input and
  dropout, the output layer and loss, all over t) or ``compute_activation_memory_without_sp`` (otherwise:
  ``10 + 24/t`` per layer, the logits, and a 5% overhead), chosen as its ``report_theoretical_memory``
  chooses; one pipeline stage here, so its in-flight micro-batch factors are 1;
* Korthikanti et al. 2022, Table 2: the per-layer activation forms (``34·s·b·h + 5·a·s²·b`` and its tensor,
  sequence-parallel and recomputation rows), summed over the layers.  The activations figure of
  :class:`~.memory.Memory` follows these forms, so that law's difference is 0 by construction: what it shows is
  what the forms assume of this model.

Each law is a sum of named parts in bytes per rank, in the model's symbols, ``s`` and ``b``; the exact figure is
the matching parts of :attr:`Memory.formulas` before their rounding up to whole bytes.

>>> from symparams import model
>>> m = model("llama-3-8b", head="causal-lm")
>>> found = {law["name"]: law for law in m.memory("bf16", "adam", seq=4096).laws}
>>> sp.expand(found["megatron_weights_and_optimizer"]["difference"] + 2 * m.tree.total)  # its fp32 gradients
0
"""

from __future__ import annotations

import sympy as sp

from ..core.compute import BATCH, SEQ
from .law_shape import NotDescribed, Shape, read_shape
from .flops import _exact_number
from .laws import RefusedLaw, SourcedLaw, _difference, always, departures

MEGATRON = "NVIDIA/Megatron-LM megatron/training/theoretical_memory_usage.py @ 00caa53"
#: the parts the memory laws are split into, in the order they are shown
MEMORY_PARTS = ("parameters", "bytes per parameter", "transformer layers", "embedding input and dropout",
                "output layer and loss", "overhead")


def megatron_parameters(shape: Shape) -> sp.Expr:
    """``compute_weight_and_optimizer_memory``'s ``num_total_parameters`` (every layer dense, or every layer MoE,
    no shared experts, no MTP)."""
    h, query = shape.hidden, shape.heads * shape.head_dim  # kv_channels × num_attention_heads
    norm_size = shape.norm_params  # 1 for RMSNorm, 2 for LayerNorm
    gated_linear_multiplier = sp.Rational(3, 2) if shape.gated else 1
    self_attn_term = 2 * h * h * ((1 + shape.kv_heads / shape.heads) * (query / h))
    experts = shape.experts if shape.moe else 1
    layer = 2 * h * (shape.ffn * experts * gated_linear_multiplier + norm_size) + self_attn_term
    embedding_size = h * shape.vocab
    embedding_layers = embedding_size if shape.tied else 2 * embedding_size
    return sp.expand(layer * shape.layers + norm_size * h + embedding_layers)


def _weights_and_optimizer(mem, shape: Shape, exact: sp.Expr) -> SourcedLaw:
    distributed = mem.zero == 1  # the distributed optimizer shards the fp32 main weights and moments
    per_parameter = 6 + sp.Rational(12, mem.ranks) if distributed else sp.Integer(18)
    n_law = megatron_parameters(shape)
    n = sp.expand(mem.model.tree.total)
    parts = {"parameters": n_law * per_parameter}
    exact_parts = {"parameters": n * per_parameter, "bytes per parameter": sp.expand(exact - n * per_parameter)}
    assumes = [always("its parameter count leaves out biases, learned positions and routers, and counts "
                      "padded_vocab_size as V"),
               always("18 bytes a parameter: bf16 weights, fp32 gradients, fp32 main weights and two Adam moments"
                      + (f"; the distributed optimizer over {mem.ranks} ranks shards the last 12" if distributed
                         else ""))]
    return SourcedLaw("megatron_weights_and_optimizer", MEGATRON + " compute_weight_and_optimizer_memory",
                      "states", parts, exact_parts, tuple(assumes))


def _megatron_activations(mem, shape: Shape, exact: sp.Expr) -> SourcedLaw:
    s, b, h, t, l, v = SEQ, BATCH, shape.hidden, mem.tensor_parallel, shape.layers, shape.vocab
    embedding = 8 * s * b + s * b * h  # input (pp_size micro-batches in flight: 1) and its dropout
    if mem.sequence_parallel and mem.recompute == "selective":  # compute_activation_memory
        parts = {"transformer layers": s * b * h * (18 + 4 * (shape.ffn / h)) * l / t,
                 "embedding input and dropout": embedding / t,
                 "output layer and loss": s * b * h * 4 * (1 + v / h) / t}
        path = "compute_activation_memory (sequence parallel, selective recomputation)"
    else:  # compute_activation_memory_without_sp, with its 5% overhead
        layers, output = s * b * h * (10 + sp.Rational(24, t)) * l, (s * b * v / t + s * b * h) * 2
        parts = {"transformer layers": layers, "embedding input and dropout": embedding,
                 "output layer and loss": output, "overhead": (layers + embedding + output) / 20}
        path = "compute_activation_memory_without_sp"
    assumes = [always("the first pipeline stage of one, so one micro-batch in flight"),
               always("a layer's activations do not depend on its heads or key/value groups")]
    return SourcedLaw("megatron_activations", f"{MEGATRON} {path}", "activations",
                      {k: sp.expand(v_) for k, v_ in parts.items()}, {"transformer layers": exact}, tuple(assumes))


def _korthikanti(mem, shape: Shape, exact: sp.Expr, table_2) -> SourcedLaw:
    per_layer = table_2(SEQ, BATCH, shape.hidden, shape.heads, mem.tensor_parallel, mem.sequence_parallel,
                        mem.recompute)
    assumes = [always("the activations figure follows these forms: the difference is 0 by construction"),
               (shape.kv_heads - shape.heads, "keys and values as wide as the queries; this model shares G "
                                              "key/value heads"),
               (1 if shape.gated else shape.ffn - 4 * shape.hidden, "a 4h MLP of two matrices; this model's FFN "
                                                                     "differs")]
    return SourcedLaw("korthikanti_activations", "Korthikanti et al. 2022, Table 2", "activations",
                      {"transformer layers": sp.expand(shape.layers * per_layer)}, {"transformer layers": exact},
                      tuple(assumes))


def memory_laws(mem, table_2) -> tuple[SourcedLaw | RefusedLaw, ...]:
    """Megatron-LM's theoretical memory (weights and optimizer; activations) and Korthikanti et al.'s forms
    beside ``mem`` (a :class:`~.memory.Memory`), or why each is not set beside it; ``table_2`` is Korthikanti
    et al.'s per-layer form (:func:`~.memory.activation_bytes_per_layer`, which the activations figure uses)."""
    names = ("megatron_weights_and_optimizer", "megatron_activations", "korthikanti_activations")
    if not mem.training:  # serving: the laws describe training, so none is set beside it (nor refused)
        return ()
    try:
        shape = read_shape(mem.model.tree)
    except NotDescribed as reason:
        return tuple(RefusedLaw(name, str(reason)) for name in names)
    formulas = mem.formulas
    states = sp.expand(formulas["weights"] + formulas["gradients"] + formulas["optimizer"])
    out = [_states_law(mem, shape, states)]
    reason = _activations_refused(mem, shape, formulas)
    if reason:
        return (*out, RefusedLaw("megatron_activations", reason), RefusedLaw("korthikanti_activations", reason))
    return (*out, _megatron_activations(mem, shape, formulas["activations"]),
            _korthikanti(mem, shape, formulas["activations"], table_2))


def _states_law(mem, shape: Shape, states: sp.Expr) -> SourcedLaw | RefusedLaw:
    name = "megatron_weights_and_optimizer"
    if mem.optimizer_name != "adam" or mem.dtype not in ("bf16", "fp16"):
        return RefusedLaw(name, "Megatron-LM's 18 bytes a parameter are mixed-precision Adam (bf16 or fp16)")
    if mem.zero > 1:
        return RefusedLaw(name, "Megatron-LM's distributed optimizer shards as ZeRO stage 1 does, not stage 2 or 3")
    if mem.tensor_parallel > 1:
        return RefusedLaw(name, "the exact figure here does not shard weights by tensor parallelism, so the two "
                                "would not describe the same rank")
    return _weights_and_optimizer(mem, shape, states)


def _activations_refused(mem, shape: Shape, formulas: dict) -> str | None:
    if mem.seq is None or "activations" not in formulas:
        return "no activations without a sequence length"
    if shape.moe:
        return "a mixture of experts (the activation forms read one dense FFN)"
    return None


def evaluated(law: SourcedLaw, mem) -> dict:
    """``law`` in bytes per rank at the model's values, ``s`` and ``b``, beside the exact formula's value."""
    values = {**mem.model.values, SEQ: sp.Integer(mem.seq or 1), BATCH: sp.Integer(mem.batch)}

    def number(expr):  # a whole number, or "p/q", as the FLOPs laws list theirs
        return _exact_number(sp.sympify(expr), values)

    terms = [(part, law.exact_parts.get(part, sp.Integer(0)), law.parts.get(part, sp.Integer(0)))
             for part in MEMORY_PARTS]
    return {"name": law.name, "source": law.source, "formula": law.formula, "difference": law.difference,
            "law_value": number(law.formula), "exact_value": number(law.exact),
            "difference_value": number(law.difference), "assumes": departures(law, values),
            "terms": [{"part": part, "difference": _difference(exact, formula),
                       "difference_value": number(_difference(exact, formula))}
                      for part, exact, formula in terms if _difference(exact, formula) != 0]}

