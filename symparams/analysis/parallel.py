"""A parallel layout, and which parameters each rank of it holds, from the same Block tree.

A layout is Megatron-LM's: ``T`` tensor-parallel ranks (with or without
sequence parallelism), ``P`` pipeline stages (``V`` model chunks each with the
interleaved schedule, ``M`` micro-batches), ``E`` expert-parallel ranks and
``N`` data-parallel ranks (ZeRO 0–3, or Megatron's distributed optimizer).
Each parameter's share on one rank follows the module it belongs to:

* **column-parallel** (Megatron's ``ColumnParallelLinear``: the query, key and
  value projections, an MLP's gate, up and first layers, an expert's fused
  gate/up tensor): the output features are divided by ``T``, weight and bias;
* **row-parallel** (``RowParallelLinear``: the attention output, an MLP's
  down or second layer, an expert's down tensor): the input features are
  divided by ``T``; the bias is added after the all-reduce, so every rank
  holds all of it;
* **vocabulary-parallel** (``VocabParallelEmbedding`` and the output layer):
  the ``V`` rows of the word embedding and of the LM head are divided by
  ``T``; with ``pad_vocabulary`` to ``V'`` = the next multiple of ``128·T``
  as Megatron pads them (``make_vocab_size_divisible_by`` = 128), else as
  evenly as they go, the first rank holding ``⌈V/T⌉``;
* **replicated**: norms, position and token-type embeddings, a mixture of
  experts' router: every tensor-parallel rank holds all of them.

Pipeline stages split the layers evenly, in order (``P·V`` must divide
``L``; consecutive stacks, DeepSeek's dense layers then its mixture of
experts, are one run); the first stage also holds what comes before them
(the embeddings), the last what comes after (the final norm, the head).  A head
tied to the word embedding is a parameter of its own on the last stage when
``P > 1``: Megatron keeps a copy there and all-reduces the two copies'
gradients.  Expert parallelism divides each layer's routed experts by ``E``.

>>> from symparams import model
>>> m = model("llama-3-8b", head="causal-lm")
>>> stages = stage_parameters(m, Layout(tensor=8, pipeline=4))
>>> layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # Q, O, K, V and the MLP, split by 8
>>> stages[0].parameters == (128256 * 4096 + 8 * layer) // 8 + 8 * 2 * 4096  # + the 8 layers' norms, whole
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from ..core.blocks import Block, written_in_out
from ..core.errors import SymparamsError
from ..core.module_paths import first_module_paths
from ..core.symbols import V
from ..core.values import parse_whole
from .dtypes import _shown

#: Megatron pads the vocabulary to a multiple of this times T (``--make-vocab-size-divisible-by``)
VOCAB_MULTIPLE = 128
#: the keyword options of a layout, beside ``Memory``'s tensor_parallel and sequence_parallel
LAYOUT_OPTIONS = ("context_parallel", "pipeline_parallel", "virtual_stages", "micro_batches", "expert_parallel",
                  "distributed_optimizer", "pad_vocabulary")

#: modules Megatron splits by their output features (``ColumnParallelLinear``), by our names
COLUMN = frozenset({"q_proj", "k_proj", "v_proj", "query", "key", "value", "qkv_proj", "query_key_value",
                    "query_proj", "key_proj", "value_proj", "q_lin", "k_lin", "v_lin", "q", "k", "v", "Wqkv",
                    "gate_proj", "up_proj", "gate_up_proj", "c_fc", "fc1", "fc_in", "lin1", "Wi", "dense_h_to_4h",
                    "wi", "wi_0", "wi_1", "w1", "w3"})
#: modules split by their input features (``RowParallelLinear``)
ROW = frozenset({"o_proj", "c_proj", "out_proj", "out_lin", "o", "Wo", "wo", "down_proj", "fc2", "fc_out",
                 "lin2", "dense_4h_to_h", "w2"})
#: tables every tensor-parallel rank holds whole: learned positions and token types
REPLICATED_TABLES = frozenset({"position_embeddings", "token_type_embeddings", "wpe", "embed_positions"})
#: ``dense`` by the module holding it: BERT's intermediate and output, Falcon's and Phi's attention, BERT's pooler
#: and masked-LM transform (plain linear layers in Megatron's BERT, on every rank)
DENSE = {"intermediate": "column", "output": "row", "attention": "row", "self_attn": "row", "self_attention": "row",
         "pooler": "replicated", "transform": "replicated"}
#: linear maps every rank holds whole: a mixture of experts' routers
REPLICATED_LINEAR = frozenset({"gate", "router", "shared_expert_gate"})


@dataclass(frozen=True)
class Layout:
    """How many ranks share the model, and how (see the module's docstring)."""

    tensor: int = 1
    sequence: bool = False
    context: int = 1
    pipeline: int = 1
    virtual: int = 1
    micro_batches: int | None = None
    expert: int = 1
    data: int = 1
    distributed_optimizer: bool = False
    pad_vocabulary: bool = False

    @property
    def splits(self) -> bool:
        """Whether the model's weights or activations are spread over more than the data-parallel ranks."""
        return (self.tensor * self.context * self.pipeline * self.expert > 1 or self.distributed_optimizer
                or self.pad_vocabulary)

    def to_dict(self) -> dict:
        return {"tensor_parallel": self.tensor, "sequence_parallel": self.sequence,
                "context_parallel": self.context, "pipeline_parallel": self.pipeline,
                "virtual_stages": self.virtual, "micro_batches": self.micro_batches,
                "expert_parallel": self.expert, "data_parallel": self.data,
                "distributed_optimizer": self.distributed_optimizer, "pad_vocabulary": self.pad_vocabulary}


def parse_bool(raw, what: str) -> bool:
    """A yes/no option given as a bool or as text (true/false, yes/no, on/off, 1/0)."""
    if isinstance(raw, bool):
        return raw
    text = raw.strip().lower() if isinstance(raw, str) else None
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise SymparamsError(f"{what} must be true or false, not {_shown(raw)}")


def parse_layout(options: dict, tensor: int, sequence: bool, data: int, zero: int) -> Layout:
    """The layout from :class:`Memory`'s keyword options (the ones in :data:`LAYOUT_OPTIONS`).

    >>> parse_layout({"pipeline_parallel": "4", "virtual_stages": 2}, 2, True, 8, 0).pipeline
    4
    """
    def whole(key, what):
        return parse_whole(what, options[key]) if options.get(key) is not None else None

    layout = Layout(tensor=tensor, sequence=sequence, data=data,
                    context=whole("context_parallel", "the context-parallel ranks C") or 1,
                    pipeline=whole("pipeline_parallel", "the pipeline stages P") or 1,
                    virtual=whole("virtual_stages", "the virtual stages V") or 1,
                    micro_batches=whole("micro_batches", "the micro-batches M"),
                    expert=whole("expert_parallel", "the expert-parallel ranks E") or 1,
                    distributed_optimizer=parse_bool(options.get("distributed_optimizer", False),
                                                      "distributed_optimizer"),
                    pad_vocabulary=parse_bool(options.get("pad_vocabulary", False), "pad_vocabulary"))
    if layout.distributed_optimizer and zero:
        raise SymparamsError("the distributed optimizer is Megatron's partition of the optimizer state: give it or "
                             f"a ZeRO stage, not both (ZeRO stage {zero})")
    if layout.virtual > 1 and layout.pipeline == 1:
        raise SymparamsError("virtual stages interleave pipeline stages: give the pipeline stages P > 1 with them")
    if layout.sequence and layout.tensor == 1:
        raise SymparamsError("sequence parallelism shards along the tensor-parallel ranks: give T > 1 with it")
    return layout


def of_most_loaded(part: str) -> property:
    """A property reading ``part`` off the most loaded stage's figures (``self.most_loaded``)."""
    return property(lambda self: getattr(self.most_loaded, part), doc=f"The most loaded rank's {part}.")


# -- which share of each parameter one rank holds -------------------------------------------------

def _over_vocabulary(block: Block, vocab: sp.Expr | None) -> bool:
    """Whether the leaf's rows are the vocabulary's: the word embedding, the LM head, an output bias."""
    if vocab is None:
        return False
    return ((block.kind == "embedding" and block.shape[:1] == (vocab,))
            or (block.kind == "linear" and tuple(block.shape[1:]) == (vocab,))
            or (block.kind == "parameter" and tuple(block.shape) == (vocab,)))


def _role(path: tuple[str, ...], block: Block, vocab: sp.Expr | None) -> str | None:
    """How tensor parallelism splits the leaf at ``path``: column, row, vocab or replicated (None: unknown)."""
    name = path[-1]
    if block.kind == "norm":
        return "replicated"
    if _over_vocabulary(block, vocab):
        return "vocab"  # Megatron's VocabParallelEmbedding, the output layer and its bias
    if block.kind == "embedding" and (name in REPLICATED_TABLES or not block.trainable):
        return "replicated"  # learned positions and token types, or a fixed (sinusoidal) table
    if block.kind in ("linear", "tensor"):
        if name in COLUMN or path[-2:-1] == ("c_attn",):
            return "column"
        if name in ROW:
            return "row"
        if name == "dense" and len(path) > 1 and path[-2] in DENSE:
            return DENSE[path[-2]]
        if name in REPLICATED_LINEAR and block.kind == "linear":
            return "replicated"
    return None


def _split_dimension(block: Block, role: str) -> sp.Expr:
    """The features tensor parallelism divides: a linear map's (in, out), another tensor's [out, in]."""
    out_first = not written_in_out(block)
    if role == "column":
        return block.shape[0] if out_first else block.shape[1]
    return block.shape[-1] if out_first else block.shape[0]


@dataclass(frozen=True)
class Share:
    """One stage's parameters on one rank, as expressions in the model's symbols (``T``, ``P``, ``E`` numbers)."""

    parameters: sp.Expr = sp.Integer(0)
    trainable: sp.Expr = sp.Integer(0)
    expert_trainable: sp.Expr = sp.Integer(0)  # the routed experts' part of ``trainable``

    def __add__(self, other: "Share") -> "Share":
        return Share(self.parameters + other.parameters, self.trainable + other.trainable,
                     self.expert_trainable + other.expert_trainable)

    def times(self, k) -> "Share":
        return Share(self.parameters * k, self.trainable * k, self.expert_trainable * k)

    def expanded(self) -> "Share":
        return Share(*(sp.expand(x) for x in (self.parameters, self.trainable, self.expert_trainable)))


@dataclass
class _Walk:
    """The tree walked once: each leaf's share, by where it sits against the stack of layers."""

    layout: Layout
    vocab: sp.Expr | None
    stacks: list  # the consecutive stacks of layers a pipeline splits (none without pipeline parallelism)
    named: dict  # each block's path → its first copy's name in named_parameters(), which a message prints
    regions: dict = field(default_factory=lambda: {"before": Share(), "after": Share()})
    tied_after: Share = field(default_factory=Share)  # tied leaves after the stack: copies when P > 1
    splits: list = field(default_factory=list)  # (what, dimension) tensor parallelism must divide
    places: dict = field(default_factory=dict)  # each block's path: (region, its leaf's tensor-parallel share)
    experts: list = field(default_factory=list)  # routed groups' copies, which E must divide

    def visit(self, block: Block, path: tuple, copies, trainable: bool, region: str, in_experts: bool) -> str:
        """Add ``block``'s leaves; returns the region the walk is in after it."""
        path = path + (block.name,)
        trainable = trainable and block.trainable
        repeat = block.repeat
        stack = next((i for i, b in enumerate(self.stacks) if b is block), None)
        if stack is not None:  # one layer of it: each stage holds its own number of them
            region, repeat = f"stack{stack}", sp.Integer(1)
            self.regions[region] = Share()
        if block.used is not None:  # routed experts: E ranks share them
            self.experts.append(block.repeat)
            repeat, in_experts = repeat / self.layout.expert, True
        copies = copies * repeat
        self.places[".".join(path)] = (region, self._tensor_share(block, path) if block.is_leaf else None)
        if block.is_leaf:
            self._leaf(block, path, copies, trainable, region, in_experts)
        for child in block.children:
            region = self.visit(child, path, copies, trainable, region, in_experts)
        return "after" if stack is not None else region

    def _leaf(self, block, path, copies, trainable, region, in_experts) -> None:
        size = self._rank_size(block, path)
        share = Share(size, size if trainable else 0, size if trainable and in_experts else 0).times(copies)
        if block.tied_to is None:
            self.regions[region] += share
        elif region == "after":
            self.tied_after += share

    def _tensor_share(self, block: Block, path: tuple):
        """The share of a leaf's weights (and of its products) one tensor-parallel rank holds, or None for a
        leaf that multiplies nothing."""
        t = self.layout.tensor
        if block.kind not in ("linear", "tensor"):
            return None
        role = self._role(block, path)
        if role == "vocab":
            return vocab_rows(self.vocab, t, self.layout.pad_vocabulary) / self.vocab
        return sp.Integer(1) if role == "replicated" else sp.Rational(1, t)

    def _role(self, block: Block, path: tuple) -> str:
        """The leaf's role; without tensor parallelism only the vocabulary's rows matter (they may be padded)."""
        if self.layout.tensor == 1:
            return "vocab" if _over_vocabulary(block, self.vocab) else "replicated"
        role = _role(path, block, self.vocab)
        if role is None:
            raise SymparamsError(f"tensor parallelism: symparams does not know how Megatron splits the module "
                                 f"{self.named['.'.join(path)]} ({block.kind}); use --tensor-parallel 1")
        return role

    def _rank_size(self, block: Block, path: tuple) -> sp.Expr:
        t, role = self.layout.tensor, self._role(block, path)
        if role == "replicated":
            return sp.Add(*(n for _, n in block.params))
        if role == "vocab":
            other = {"embedding": block.shape[-1], "linear": block.shape[0]}.get(block.kind, 1)
            return vocab_rows(self.vocab, t, self.layout.pad_vocabulary) * other
        self.splits.append((self.named[".".join(path)], _split_dimension(block, role)))
        divided = {"weight", ""} | ({"bias"} if role == "column" else set())
        return sp.Add(*(n / t if pname in divided else n for pname, n in block.params))


def vocab_rows(vocab, t: int, pad: bool):
    """The rows of the vocabulary one tensor-parallel rank holds (the first, the most loaded).

    >>> from symparams.core.symbols import V
    >>> vocab_rows(V, 4, True), vocab_rows(50257, 2, False), vocab_rows(50257, 2, True)
    (128*ceiling(V/512), 25129, 25216)
    """
    if pad:
        return VOCAB_MULTIPLE * sp.ceiling(sp.sympify(vocab) / (VOCAB_MULTIPLE * t))
    return sp.ceiling(sp.sympify(vocab) / t)


def _consecutive(tree: Block, stacks: list[Block]) -> bool:
    """Whether ``stacks`` are adjacent children of one module (DeepSeek's dense layers, then its MoE layers)."""
    for _, block, _ in tree.walk():
        kids = list(block.children)
        for start, kid in enumerate(kids):
            if stacks and kid is stacks[0]:
                return len(kids) - start >= len(stacks) and all(a is b for a, b in zip(kids[start:], stacks))
    return False


def layer_stacks(tree: Block) -> list[Block]:
    """The stacks of distinct layers pipeline stages split: repeated groups no repeated group holds."""
    found = []

    def visit(block: Block) -> None:
        if block.repeat != 1 and block.used is None and block.children:
            found.append(block)
            return
        for child in block.children:
            visit(child)

    visit(tree)
    return found


@dataclass(frozen=True)
class Stage:
    """One pipeline stage's share on its first tensor-, expert- and data-parallel rank."""

    index: int
    share: Share
    layers: int  # the layers of the stack it holds

    @property
    def parameters(self) -> int:
        return self.share.parameters


class Split:
    """The model split by a layout: each stage's share as an expression and its number.

    The checks Megatron makes are made here, each refused in one line: ``T``
    dividing the heads, the key/value heads and every split dimension; ``P·V``
    dividing the layers; ``E`` dividing the experts.
    """

    def __init__(self, model, layout: Layout):
        self.model, self.layout = model, layout
        tree = model.tree
        stacks = layer_stacks(tree) if layout.pipeline > 1 else []
        if layout.pipeline > 1 and not _consecutive(tree, stacks):
            what = "no stack of distinct layers" if not stacks else "stacks of layers apart"
            raise SymparamsError(f"pipeline parallelism splits one run of consecutive layers; {model.name} has {what} "
                                 f"(an encoder and a decoder, or shared layers): use --pipeline-parallel 1")
        vocab = V if V in tree.symbols else None
        self.stacks = stacks
        self._walk = _Walk(layout, vocab, stacks, first_module_paths(tree, model.values))
        self._walk.visit(tree, (), sp.Integer(1), True, "before", False)
        self.stack_sizes = [int(model.evaluate(b.repeat)) for b in stacks]
        self.stack_layers = sum(self.stack_sizes)
        self._check()

    def _check(self) -> None:
        layout, model = self.layout, self.model
        t = layout.tensor
        values = {s.name: int(v) for s, v in model.values.items() if getattr(v, "is_Integer", False)}
        if t > 1:
            for name, what in (("A", "attention heads A"), ("G", "key/value heads G")):
                if name in values and values[name] % t:
                    raise SymparamsError(f"the tensor-parallel ranks T = {t} must divide the {what} = {values[name]}")
            for path, dim in self._walk.splits:
                n = model.evaluate(dim)
                if n.is_Integer and int(n) % t:
                    raise SymparamsError(f"the tensor-parallel ranks T = {t} must divide the features {dim} = {n} "
                                         f"that {path} splits")
        chunks = layout.pipeline * layout.virtual
        if chunks > 1 and self.stack_layers % chunks:
            what = "pipeline stages P" if layout.virtual == 1 else "pipeline stages times virtual stages P·V"
            raise SymparamsError(f"the {what} = {chunks} must divide the layers L = {self.stack_layers} "
                                 f"(Megatron splits them evenly)")
        if layout.expert > 1:
            if not self._walk.experts:
                raise SymparamsError(f"expert parallelism divides routed experts; {model.name} has none: "
                                     f"use --expert-parallel 1")
            for experts in self._walk.experts:
                n = int(model.evaluate(experts))
                if n % layout.expert:
                    raise SymparamsError(f"the expert-parallel ranks E = {layout.expert} must divide the experts "
                                         f"N_e = {n}")

    @property
    def places(self) -> dict:
        """Each block's path: (region, the share of its products one tensor-parallel rank runs)."""
        return self._walk.places

    def layers_on(self, index: int) -> list:
        """How many layers of each stack stage ``index`` holds: ``L/P`` of one stack (in its symbol), or the
        layers of each stack among the stage's (its ``V`` chunks of ``L/(P·V)`` consecutive layers, chunk ``c``
        of stage ``i`` starting at layer ``(c·P + i)·L/(P·V)``)."""
        p, v = self.layout.pipeline, self.layout.virtual
        if len(self.stacks) == 1:
            return [self.stacks[0].repeat / p]
        chunk, counts, start = self.stack_layers // (p * v), [], 0
        for size in self.stack_sizes:
            held = sum(max(0, min(start + size, (c * p + index + 1) * chunk) - max(start, (c * p + index) * chunk))
                       for c in range(v))
            counts.append(sp.Integer(held))
            start += size
        return counts

    def layer_share(self, region: str, index: int):
        """The share of a stack's layers (``region`` ``stack0``, ...) that stage ``index`` runs; 1 elsewhere."""
        if not region.startswith("stack"):
            return sp.Integer(1)
        i = int(region[len("stack"):])
        return self.layers_on(index)[i] / self.stacks[i].repeat

    def share(self, index: int) -> Share:
        """Stage ``index``'s share (0-based): what comes before the stacks on the first, after them on the last."""
        regions, last = self._walk.regions, self.layout.pipeline - 1
        share = Share()
        for i, layers in enumerate(self.layers_on(index) if self.stacks else []):
            share += regions[f"stack{i}"].times(layers)
        if index == 0:
            share += regions["before"]
        if index == last:
            share += regions["after"] + (self._walk.tied_after if last > 0 else Share())
        return share.expanded()

    @cached_property
    def stages(self) -> tuple[Stage, ...]:
        layers = self.stack_layers // self.layout.pipeline if self.stack_layers else 0
        out = []
        for index in range(self.layout.pipeline):
            if len(self.stacks) == 1 and 1 < index < self.layout.pipeline - 1:
                out.append(Stage(index, out[-1].share, layers))  # the middle stages of one stack hold the same
                continue
            share = self.share(index)
            out.append(Stage(index, Share(*map(self._whole, (share.parameters, share.trainable,
                                                             share.expert_trainable))), layers))
        return tuple(out)


    def _whole(self, expr) -> int:
        value = self.model.evaluate(expr)
        if not value.is_Integer:
            raise SymparamsError(f"a rank's share of the parameters is not whole ({value}): the layout does not "
                                 f"divide {self.model.name}")
        return int(value)


def stage_parameters(model, layout: Layout) -> tuple[Stage, ...]:
    """Each pipeline stage's parameters on one rank (see :class:`Split`)."""
    return Split(model, layout).stages
