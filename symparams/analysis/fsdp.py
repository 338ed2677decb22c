"""PyTorch FSDP's memory on one rank: ``--fsdp full-shard|shard-grad-op|hybrid-shard``.

The convention is FSDP2's (``torch.distributed.fsdp.fully_shard``, torch
2.13), applied as torchtitan and transformers' auto-wrap policies apply it:
each layer of a stack of distinct layers is one unit (``fully_shard(layer)``),
the root (``fully_shard(model)``) holds the rest (embeddings, final norm,
head).  FSDP1's strategies are FSDP2's settings:

* ``full-shard`` (FSDP1 ``FULL_SHARD``): ``reshard_after_forward`` left at
  its default, so each layer frees its gathered parameters after its forward
  and gathers them again for its backward; the root does not
  (``_fsdp_state.py`` ``FSDPState._lazy_init``: "For the root, do not reshard
  after forward");
* ``shard-grad-op`` (``SHARD_GRAD_OP``): ``reshard_after_forward=False``:
  every unit keeps its gathered parameters from its forward to its backward;
* ``hybrid-shard`` (``HYBRID_SHARD``): a 2-D mesh, the ``N`` data-parallel
  ranks as ``N/K`` replicas of a shard group of ``K``; sharded as
  ``full-shard`` over the ``K`` ranks of a group.

What one rank holds, the first rank of a shard group of ``K`` (the most
loaded: FSDP2 splits every parameter along its first dimension with
``torch.chunk``, so that rank 0 holds ``⌈d₀/K⌉`` rows and every rank pads its
shard to that size, ``_fsdp_param.py`` ``FSDPParam._init_sharded_param``):

* the sharded parameters in fp32, the sharded gradients in fp32 (reduced and
  kept in the parameter's dtype, ``_fsdp_collectives.py`` ``foreach_reduce``)
  and the optimizer's fp32 state of the shard (Adam two moments, SGD one; the
  fp32 parameters are the master copy): 16 bytes a parameter of the shard
  with Adam.  ``--dtype bf16`` or ``fp16`` is FSDP's ``MixedPrecisionPolicy``
  with that ``param_dtype``;
* the gathered (unsharded) parameters at the peak, in ``param_dtype`` (the
  gathered tensor is ``K`` padded shards): ``full-shard`` the root and two
  layers (the one whose backward runs and the one before it, which FSDP2's
  default backward prefetch gathers: ``FSDPParamGroup._backward_prefetch``);
  ``shard-grad-op`` every unit (all are held when the backward starts);
* the activations as without FSDP (each rank its own ``--batch``).
  Gradients before their reduce-scatter and the communication buffers are
  not counted.

>>> from symparams import model
>>> mem = model("llama-3-8b", head="causal-lm").memory("bf16", "adam", ranks=8, fsdp="full-shard")
>>> r = FsdpRank(mem)
>>> r.shard == 8030261248 // 8, r.weights == 4 * r.shard, r.optimizer == 8 * r.shard
(True, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from ..core.algebra import closed_form
from ..core.errors import SymparamsError
from ..core.values import parse_whole
from .dtypes import DTYPE_BYTES
from .expected_tensors import CONV1D
from .parallel import layer_stacks
from .stored import _routed, stored_tensors

#: FSDP1's sharding strategies as the option names them: whether layers reshard after forward, a 2-D mesh
STRATEGIES = {"full-shard": "FULL_SHARD", "shard-grad-op": "SHARD_GRAD_OP", "hybrid-shard": "HYBRID_SHARD"}
#: the keyword options of :class:`~.memory.Memory` for FSDP
FSDP_OPTIONS = ("fsdp", "shard_group")
#: the fp32 optimizer state per parameter of the shard (the fp32 parameters are the master copy)
STATE_BYTES = {"adam": 8, "sgd": 4}


@dataclass(frozen=True)
class Fsdp:
    """An FSDP setting: the strategy and the ranks of one shard group (all ``N`` but with ``hybrid-shard``)."""

    strategy: str
    shard_group: int
    data: int

    def to_dict(self) -> dict:
        return {"fsdp": self.strategy, "data_parallel": self.data, "shard_group": self.shard_group,
                "replicas": self.data // self.shard_group}


def parse_fsdp(options: dict, mem) -> Fsdp | None:
    """The FSDP setting from :class:`~.memory.Memory`'s options, refused where it meets another partition."""
    raw, group = options.get("fsdp"), options.get("shard_group")
    if raw is None:
        if group is not None:
            raise SymparamsError("a shard group is hybrid sharding's: give --fsdp hybrid-shard with it")
        return None
    strategy = raw.strip().lower() if isinstance(raw, str) else None
    if strategy not in STRATEGIES:
        raise SymparamsError(f"unknown FSDP strategy {raw!r}: use one of {', '.join(STRATEGIES)}")
    n = mem.ranks
    if strategy == "hybrid-shard":
        if group is None:
            raise SymparamsError("hybrid sharding shards within a group of ranks: give its size, --shard-group K")
        k = parse_whole("the shard group's ranks K", group)
        if n % k:
            raise SymparamsError(f"the shard group's ranks K = {k} must divide the data-parallel ranks N = {n}")
    elif group is not None:
        raise SymparamsError(f"a shard group is hybrid sharding's, not {strategy}'s: leave out --shard-group")
    else:
        k = n
    _refuse_others(mem, strategy)
    return Fsdp(strategy, k, n)


def _refuse_others(mem, strategy: str) -> None:
    """FSDP is the data-parallel partition here: ZeRO, Megatron's distributed optimizer or a Megatron layout beside
    it would describe another run."""
    if mem.zero:
        raise SymparamsError(f"FSDP {strategy} is itself a ZeRO-like partition: give it or a ZeRO stage, not both "
                             f"(ZeRO stage {mem.zero})")
    layout = mem.layout
    if layout.distributed_optimizer:
        raise SymparamsError("FSDP and Megatron's distributed optimizer each partition the optimizer state: give one")
    if layout.splits or layout.tensor > 1:
        raise SymparamsError("FSDP is placed here over data-parallel ranks alone: leave out the tensor, pipeline, "
                             "context and expert parallelism and --pad-vocab")
    if not mem.training:
        raise SymparamsError("FSDP is counted here for training: give --optimizer adam or sgd")
    if mem.quantization is not None:
        raise SymparamsError(f"a checkpoint quantized as {mem.dtype} is not sharded by FSDP here")
    if mem.model.family.inferred:
        raise SymparamsError(f"{mem.model.name}: FSDP splits each parameter along its first dimension as PyTorch "
                             f"holds it, which an inferred type's formula does not say")
    if mem.model.trainable != mem.model.count:
        raise SymparamsError(f"{mem.model.name} has frozen parameters, whose gradients FSDP does not keep: not "
                             f"placed here")


# -- the tensors FSDP shards, unit by unit ---------------------------------------------------------

@dataclass(frozen=True)
class Tensor:
    """``copies`` parameters of ``shape`` as PyTorch holds them (FSDP2 splits the first dimension)."""

    shape: tuple
    copies: sp.Expr

    def shard(self, k: int) -> sp.Expr:
        """Rank 0's elements of them over ``k`` ranks: ``⌈d₀/k⌉`` rows each."""
        return self.copies * sp.ceiling(self.shape[0] / sp.Integer(k)) * sp.Mul(*self.shape[1:])


@dataclass(frozen=True)
class Unit:
    """One ``fully_shard`` unit: the root, or a layer of a stack (``layers`` of them)."""

    name: str
    tensors: tuple[Tensor, ...]
    layers: sp.Expr = sp.Integer(1)

    def shard(self, k: int) -> sp.Expr:
        return sp.Add(*(t.shard(k) for t in self.tensors))


def fsdp_units(m) -> tuple[Unit, ...]:
    """The root and each stack's layer, with their parameters' shapes as PyTorch holds them (``Conv1D`` weights
    ``[in, out]``; a routed expert's weights one tensor ``[experts, out, in]``); every parameter in one of them."""
    tree, conv1d = m.tree, m.family.name in CONV1D
    stacks = layer_stacks(tree)
    prefixes = {path for path, block in tree.reference_paths() if any(block is s for s in stacks)}
    root = [t for t in stored_tensors(tree) if not any(t.path.startswith(p + ".") for p in prefixes)]
    units = [Unit("root", tuple(_torch_tensor(t, sp.Integer(1), conv1d) for t in root))]
    for stack in stacks:
        _refuse_expert_modules(stack)
        tensors = tuple(_torch_tensor(t, stack.repeat, conv1d) for t in stored_tensors(stack))
        units.append(Unit(stack.ref or stack.name, tensors, stack.repeat))
    placed = sp.expand(sum((u.layers * sp.Add(*(t.copies * sp.Mul(*t.shape) for t in u.tensors)) for u in units),
                           sp.Integer(0)))
    if m.evaluate(placed) != m.count:
        raise SymparamsError(f"{m.name}: FSDP's units do not hold its {m.count:,} parameters here, so its shards are "
                             f"not known")
    return tuple(units)


def _torch_tensor(t, layers: sp.Expr, conv1d: bool) -> Tensor:
    copies = sp.cancel(t.copies / layers)
    if t.part == "experts":  # transformers 5 stacks a layer's routed experts in one parameter
        return Tensor((copies, *t.shape), sp.Integer(1))
    shape = t.shape[::-1] if conv1d and t.part == "layers" and len(t.shape) == 2 else t.shape
    return Tensor(tuple(shape), copies)


def _refuse_expert_modules(stack) -> None:
    for _, block, _ in stack.walk():
        if _routed(block) and any(c.is_leaf and c.kind != "tensor" for c in block.children):
            raise SymparamsError("FSDP: routed experts held as modules of their own, not one stacked tensor: "
                                 "their shards are not known here")


# -- the most loaded rank -----------------------------------------------------------------------

def _figure(part: str) -> property:
    """A property reading the rank's bytes of ``part`` (weights, unsharded, gradients, optimizer)."""
    return property(lambda self: self._figures[part], doc=f"The rank's {part}, in bytes.")


class FsdpRank:
    """The memory of the first rank of an FSDP shard group (see the module's docstring)."""

    stage = 0

    def __init__(self, mem):
        self.mem, self.fsdp = mem, mem.fsdp
        self.units = fsdp_units(mem.model)

    def _value(self, expr) -> int:
        return int(self.mem.model.evaluate(expr))

    @property
    def _shard_formula(self) -> sp.Expr:
        k = self.fsdp.shard_group
        return sp.Add(*(u.layers * u.shard(k) for u in self.units))

    @property
    def _gathered_formula(self) -> sp.Expr:
        """The elements gathered at the peak: ``K`` padded shards of each unit held."""
        k, root, layers = self.fsdp.shard_group, self.units[0], self.units[1:]
        if self.fsdp.strategy == "shard-grad-op":
            held = sp.Add(*(u.layers * u.shard(k) for u in self.units))
        else:
            held = root.shard(k) + self._two_adjacent_layers(layers, k)
        return k * held

    def _two_adjacent_layers(self, layers, k: int) -> sp.Expr:
        """The largest two consecutive layers' shards (one layer where the model has one)."""
        run = [u.shard(k) for u in layers for _ in range(self._value(u.layers))]
        if len(run) < 2:
            return sp.Add(*run)
        pairs = [run[i] + run[i + 1] for i in range(len(run) - 1)]
        return max(pairs, key=self._value)

    @cached_property
    def shard(self) -> int:
        """The parameters (elements) of the rank's shards."""
        return self._value(self._shard_formula)

    @property
    def parameters(self) -> int:
        return self.shard

    @cached_property
    def _bytes(self) -> dict[str, sp.Expr]:
        mem, shard = self.mem, self._shard_formula
        each = DTYPE_BYTES[mem.dtype]  # the gathered copy's dtype: fp32, bf16 or fp16, whole bytes
        return {"weights": 4 * shard, "unsharded": sp.Integer(int(each)) * self._gathered_formula,
                "gradients": 4 * shard, "optimizer": STATE_BYTES[mem.optimizer_name] * shard}

    @cached_property
    def _figures(self) -> dict[str, int]:
        return {part: self._value(expr) for part, expr in self._bytes.items()}

    weights = _figure("weights")
    unsharded = _figure("unsharded")
    gradients = _figure("gradients")
    optimizer = _figure("optimizer")

    @property
    def activations(self) -> int:
        return self.mem.activations

    @property
    def total(self) -> int:
        return self.weights + self.unsharded + self.gradients + self.optimizer + self.activations

    @property
    def rank(self) -> str:
        k, n = self.fsdp.shard_group, self.fsdp.data
        replicas = f" (any of its {n // k} replicas: each holds as much)" if n > k else ""
        return f"rank 1 of a shard group of {k}, the first shard of every parameter{replicas}"

    @property
    def formulas(self) -> dict[str, sp.Expr]:
        parts = dict(self._bytes)
        if "activations" in self.mem.formulas:
            parts["activations"] = self.mem.formulas["activations"]
        parts["total"] = sp.Add(*parts.values())
        return {k: closed_form(sp.sympify(v)) for k, v in parts.items()}

    @property
    def conventions(self) -> list[str]:
        return fsdp_conventions(self)

    def to_dict(self) -> dict:
        parts = {"weights": self.weights, "unsharded": self.unsharded, "gradients": self.gradients,
                 "optimizer": self.optimizer, "activations": self.activations, "kv_cache": 0}
        stage = {"stage": 0, "parameters": self.shard, "layers": None, **parts, "total": self.total}
        return {"rank": self.rank, "stage": 0, "layout": self.fsdp.to_dict(), "parameters": self.shard, **parts,
                "total": self.total, "stages": [stage], "formulas": {k: str(v) for k, v in self.formulas.items()},
                "conventions": self.conventions}


def fsdp_conventions(r: FsdpRank) -> list[str]:
    """The conventions of FSDP's per-rank figures, one sentence each."""
    f, mem = r.fsdp, r.mem
    strategy = {"full-shard": "reshard_after_forward left at its default (layers reshard, the root does not)",
                "shard-grad-op": "reshard_after_forward=False", "hybrid-shard":
                f"a 2-D mesh of {f.data // f.shard_group} replicas × {f.shard_group} shards, layers resharding"}
    held = ("every unit, all held when the backward starts" if f.strategy == "shard-grad-op" else
            "the root and the two largest consecutive layers (the one whose backward runs and the one FSDP2's "
            "default backward prefetch gathers)")
    precision = ("" if mem.dtype == "fp32" else
                 f", MixedPrecisionPolicy(param_dtype={mem.dtype}, reduce_dtype=fp32)")
    return [f"per rank: PyTorch FSDP2 fully_shard on each layer and on the root, {STRATEGIES[f.strategy]} as "
            f"{strategy[f.strategy]}{precision}",
            f"per rank: each parameter split along its first dimension over the {f.shard_group} ranks of a shard "
            f"group, the first rank holding ⌈d₀/{f.shard_group}⌉ rows, every rank padding its shard to that size",
            f"per rank: the shards' parameters and gradients in fp32, the {mem.optimizer_name} state in fp32 "
            f"({STATE_BYTES[mem.optimizer_name]} bytes a parameter of the shard; the fp32 parameters are the master "
            f"copy)",
            f"per rank: unsharded: the parameters gathered at the peak in {mem.dtype}: {held}; gradients before "
            f"their reduce-scatter and communication buffers not counted"]
