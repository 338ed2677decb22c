"""The FLOPs formulas of published codebases and papers, each computed as its source computes it, part by part.

Each law is a sum of named parts per token (attention projections, attention
scores, feed-forward, logits, and what only the law counts: embeddings,
softmax, norms), in the model's symbols and ``s``; the exact count per token is
split into the same parts from the model's own FLOP terms (PyTorch's counter's
conventions: full s × s attention, no element-wise FLOPs), so that the
difference is explained term by term.  Each law compares with the exact figure
it describes: the forward pass, a training step (forward and backward), or a
training step with full recomputation.

Sources (the commit read is the one cited):

* Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
  Clusters Using Megatron-LM", eq. (3): ``96·B·s·l·h²·(1 + s/6h + V/16lh)`` per
  iteration, with full activation recomputation;
* Megatron-LM ``num_floating_point_operations`` (NVIDIA/Megatron-LM,
  megatron/training/training.py @ 001b00c2734d8f0fad096fe48a382fedf755d321,
  its ``transformer_flops``, MHA/GQA path, no MTP);
* nanoGPT ``GPT.estimate_mfu`` (karpathy/nanoGPT, model.py @
  04a1d697ddc57aadb2edbe95816bf86c6b8918b0): ``6N + 12·L·H·Q·T`` per token,
  N without the position embeddings (``get_num_params``), Q = n_embd // n_head;
* torchtitan (pytorch/torchtitan, torchtitan/models/utils.py @
  01c01c88fe7a58a250e7adf6ddc3b7a3857597f4): ``6·active_nparams`` (routed
  experts weighted by top_k / num_experts, embedding tables left out unless
  shared with the output head) plus ``quadratic_attention_flops_per_token``,
  ``6·heads·(qk_head_dim + v_head_dim)·seq_len`` per layer;
* MaxText ``calculate_tflops_training_per_device`` (AI-Hypercomputer/maxtext,
  MaxText/maxtext_utils.py @ 0245b56820bb37b2f1770e01483d406a3f0066f3), in FLOPs
  rather than its TFLOPs (its ``/ 10**12``);
* Hoffmann et al. 2022 ("Chinchilla"), Appendix F: embeddings, attention
  (with softmax), dense block and logits per sequence, backward twice forward.

>>> from symparams import model
>>> from symparams.analysis.flops import flop_terms
>>> tree = model("llama-3-8b", head="causal-lm").tree
>>> found = {law.name: law for law in published_laws(tree, flop_terms(tree))}
>>> found["megatron_training"].difference  # Megatron halves the causal square; the counter does not
6*H*L*s
>>> found["maxtext_training"].difference
0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..core.blocks import Block
from ..core.compute import BATCH, SEQ, Attention, costed
from .law_shape import NotDescribed, Shape, leaves, read_shape

#: the parts a law and the exact count are split into, in the order they are shown
PARTS = ("attention projections", "attention scores", "feed-forward", "logits", "embeddings", "softmax", "norms")
#: what each law compares with: the exact figure per token it describes
COMPARES = {"forward": "the forward pass", "training": "a training step (forward and backward)",
            "recompute": "a training step with full recomputation (the layers' forward twice, and backward)"}


@dataclass(frozen=True)
class SourcedLaw:
    """A published formula per token, by part, beside the exact count split the same way."""

    name: str
    source: str
    compares: str  # a key of COMPARES
    parts: dict[str, sp.Expr]
    exact_parts: dict[str, sp.Expr]
    assumes: tuple[tuple[sp.Expr, str], ...] = field(default=())  # (departure, note): shown where departure ≠ 0

    @property
    def formula(self) -> sp.Expr:
        return sp.Add(*self.parts.values())

    @property
    def exact(self) -> sp.Expr:
        return sp.expand(sp.Add(*self.exact_parts.values()))

    @property
    def difference(self) -> sp.Expr:
        return _difference(self.exact, self.formula)

    def terms(self) -> list[tuple[str, sp.Expr, sp.Expr, sp.Expr]]:
        """``(part, exact, law, exact − law)`` for every part where the two differ."""
        out = []
        for part in PARTS:
            exact, law = self.exact_parts.get(part, sp.Integer(0)), self.parts.get(part, sp.Integer(0))
            difference = _difference(exact, law)
            if difference != 0:
                out.append((part, exact, law, difference))
        return out


@dataclass(frozen=True)
class RefusedLaw:
    """A law not set beside this model, and why (its source describes another kind of model)."""

    name: str
    reason: str


def _difference(exact: sp.Expr, law: sp.Expr) -> sp.Expr:
    return sp.factor_terms(sp.expand(exact - law))


# -- the exact count, split into the laws' parts ------------------------------------------------------

def _part_of(tree: Block) -> dict[str, str]:
    """Each block's part: its attention module's projections, the output head's logits, a norm, an embedding
    table; everything else in the layers feed-forward (the router with it)."""
    parts: dict[str, str] = {}
    for path, block, _ in costed(tree).walk():
        inherited = parts.get(path.rsplit(".", 1)[0])
        if block.title == "output_projection":
            parts[path] = "logits"
        elif block.kind == "norm":
            parts[path] = "norms"
        elif block.kind == "embedding":
            parts[path] = "embeddings"
        elif any(isinstance(item, Attention) for item in block.computes):
            parts[path] = "attention projections"
        else:
            parts[path] = inherited or "feed-forward"
    return parts


def exact_parts(tree: Block, terms, compares: str) -> dict[str, sp.Expr]:
    """The exact FLOPs per token of ``compares`` (forward, training, recompute), by part, from ``terms`` (the
    tree's FLOP terms, :func:`~.flops.flop_terms`)."""
    part_of = _part_of(tree)
    out: dict[str, sp.Expr] = {}
    for term in terms:
        part = "attention scores" if term.what == "attention" else part_of.get(term.path, "feed-forward")
        flops = {"forward": term.forward, "training": term.forward + term.backward,
                 "recompute": (2 if term.recomputed else 1) * term.forward + term.backward}[compares]
        out[part] = out.get(part, sp.Integer(0)) + flops
    return {part: sp.expand(flops / (BATCH * SEQ)) for part, flops in out.items()}


def parameter_parts(tree: Block, active: bool, shape: Shape) -> dict[str, sp.Expr]:
    """The parameters (or those one token uses, ``active``) by part; a token table tied to the output head is
    the head's weight, so it counts as logits."""
    part_of = _part_of(tree)
    out: dict[str, sp.Expr] = {}
    for path, leaf, copies, used in leaves(costed(tree)):
        part = part_of[path]
        if shape.tied and leaf.title == "token_embedding":
            part = "logits"
        out[part] = out.get(part, sp.Integer(0)) + (used if active else copies) * leaf.count
    return {part: sp.expand(n) for part, n in out.items()}


@dataclass(frozen=True)
class _Counted:
    """A tree with its FLOP terms: what a law's exact side is split from."""

    model: Block
    terms: tuple


# -- the laws -----------------------------------------------------------------------------------------

def _narayanan(shape: Shape, counted: _Counted) -> SourcedLaw:
    # eq. (3): per layer forward 24·B·s·h² + 4·B·s²·h (QKV 6, output 2, MLP 16; scores and weighted sum),
    # times 4 with full recomputation; the logits 2·B·s·h·V times 3 (not recomputed)
    l, h, s, v = shape.layers, shape.hidden, SEQ, shape.vocab
    parts = {"attention projections": 4 * l * 8 * h**2, "attention scores": 4 * l * 4 * s * h,
             "feed-forward": 4 * l * 16 * h**2, "logits": 3 * 2 * h * v}
    assumes = [*_mha_departures(shape), *_gpt_ffn_departures(shape),
               (shape.heads * shape.head_dim - h, "the heads' total width is h; this model's is A·D")]
    return _law("narayanan_training", "Narayanan et al. 2021, eq. (3)", "recompute", parts, counted, assumes)


def _megatron(shape: Shape, counted: _Counted) -> SourcedLaw:
    # transformer_flops: 3 (forward, wgrad, dgrad) × 2 (multiply-add) × each GEMM, per token
    h, s, l = shape.hidden, SEQ, shape.layers
    query, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim  # kv_channels × heads, × groups
    ffn_expansion = 3 if shape.gated else 2
    routed = shape.top_k if shape.moe else 1  # num_experts_routed_to; the dense path's ffn_hidden_size
    parts = {"attention projections": 6 * l * (h * (query + 2 * kv) + query * h),
             "attention scores": 6 * l * query * s / 2 * 2,  # causal mask: half of s; QKᵀ and (QKᵀ)V
             "feed-forward": 6 * l * h * shape.ffn * routed * ffn_expansion,
             "logits": 6 * h * shape.vocab}
    assumes = [always("padded_vocab_size taken as V (Megatron pads V to a multiple of 128·T; the model has V "
                      "rows)")]
    return _law("megatron_training", "NVIDIA/Megatron-LM megatron/training/training.py "
                "num_floating_point_operations @ 001b00c", "training", parts, counted, assumes)


def _nanogpt(shape: Shape, counted: _Counted) -> SourcedLaw:
    # estimate_mfu: 6·N + 12·L·H·Q·T per token, N = get_num_params() (every parameter but wpe), Q the head
    # width n_embd // n_head (nanoGPT asserts n_head divides n_embd, so the division is exact)
    n = parameter_parts(counted.model, active=False, shape=shape)
    n["embeddings"] = n.get("embeddings", sp.Integer(0)) - _positions(counted.model)
    parts = {part: 6 * count for part, count in n.items()}
    parts["attention scores"] = 12 * shape.layers * shape.heads * (shape.hidden / shape.heads) * SEQ
    assumes = [(shape.heads * shape.head_dim - shape.hidden,
                "a head's width is n_embd // n_head = H/A; this model's heads are D wide")]
    return _law("nanogpt_training", "karpathy/nanoGPT model.py GPT.estimate_mfu @ 04a1d69", "training", parts,
                counted, assumes)


def _torchtitan(shape: Shape, counted: _Counted) -> SourcedLaw:
    # get_nparams_and_active_nparams: routed experts × top_k / num_experts, embedding tables out unless they
    # are the output head's; quadratic_attention_flops_per_token per attention layer, full seq_len
    active = parameter_parts(counted.model, active=True, shape=shape)
    parts = {part: 6 * count for part, count in active.items() if part != "embeddings"}
    parts["attention scores"] = shape.layers * 6 * shape.heads * (2 * shape.head_dim) * SEQ
    return _law("torchtitan_training", "pytorch/torchtitan torchtitan/models/utils.py @ 01c01c8", "training",
                parts, counted, ())


def _maxtext(shape: Shape, counted: _Counted) -> SourcedLaw:
    # calculate_tflops_training_per_device, per token (its per_device_batch_size × max_target_length cancel)
    h, s, d = shape.hidden, SEQ, shape.head_dim
    activations = 2 if shape.gated else 1  # len(mlp_activations): ("silu", "linear") or ("gelu",)
    ffn = 2 * shape.ffn * h * activations + 2 * shape.ffn * h
    if shape.moe:  # the brute-force path: the gate over every expert, top-k experts' FFNs
        ffn = 2 * h * shape.experts + shape.top_k * ffn
    qkv = 2 * h * (shape.heads + 2 * shape.kv_heads) * d
    projection = 2 * h * shape.heads * d
    parts = {"attention projections": 3 * shape.layers * (qkv + projection), "feed-forward": 3 * shape.layers * ffn,
             "logits": 3 * 2 * h * shape.vocab, "attention scores": 3 * shape.layers * 4 * s * shape.heads * d}
    return _law("maxtext_training", "AI-Hypercomputer/maxtext MaxText/maxtext_utils.py "
                "calculate_tflops_training_per_device @ 0245b56", "training", parts, counted, ())


def _chinchilla(shape: Shape, counted: _Counted, training: bool) -> SourcedLaw:
    # Appendix F per sequence, divided by seq_len; key_size × num_heads = A·D; backward = 2 × forward
    h, s, l, width = shape.hidden, SEQ, shape.layers, shape.heads * shape.head_dim
    forward = {"embeddings": 2 * shape.vocab * h,
               "attention projections": l * (2 * 3 * h * width + 2 * width * h),
               "attention scores": l * (2 * s * width + 2 * s * width),
               "softmax": l * 3 * shape.heads * s,
               "feed-forward": l * 2 * (h * shape.ffn + h * shape.ffn),
               "logits": 2 * h * shape.vocab}
    times = 3 if training else 1
    parts = {part: times * flops for part, flops in forward.items()}
    assumes = [*_mha_departures(shape)] + ([always("a dense block of two matrices; this model's FFN is gated "
                                                   "(three)")] if shape.gated else [])
    name = "chinchilla_training" if training else "chinchilla_forward"
    return _law(name, "Hoffmann et al. 2022, Appendix F", "training" if training else "forward", parts, counted,
                assumes)


def always(note: str) -> tuple[sp.Expr, str]:
    """An assumption stated for every model."""
    return sp.Integer(1), note


def departures(law, values: dict) -> list[str]:
    """The notes of ``law``'s assumptions this model departs from at ``values``."""
    return [note for departure, note in law.assumes if sp.expand(sp.sympify(departure).xreplace(values)) != 0]


def _mha_departures(shape: Shape) -> list[tuple[sp.Expr, str]]:
    return [(shape.kv_heads - shape.heads,
             "keys and values as wide as the queries (multi-head); this model shares G key/value heads")]


def _gpt_ffn_departures(shape: Shape) -> list[tuple[sp.Expr, str]]:
    if shape.gated:
        return [always("a 4h MLP of two matrices; this model's FFN is gated (three matrices of width F)")]
    return [(shape.ffn - 4 * shape.hidden, "a 4h MLP; this model's FFN is not 4h wide")]


def _positions(tree: Block) -> sp.Expr:
    return sp.Add(*(copies * leaf.count for _, leaf, copies, _ in leaves(tree) if leaf.title == "learned_positions"))


def _law(name, source, compares, parts, counted: _Counted, assumes) -> SourcedLaw:
    return SourcedLaw(name, source, compares, {part: sp.expand(flops) for part, flops in parts.items()},
                      exact_parts(counted.model, counted.terms, compares), tuple(assumes))


#: the laws for dense decoders only (their sources have no experts)
DENSE_ONLY = ("narayanan_training", "nanogpt_training", "chinchilla_forward", "chinchilla_training")
LAW_NAMES = ("narayanan_training", "megatron_training", "nanogpt_training", "torchtitan_training",
             "maxtext_training", "chinchilla_forward", "chinchilla_training")


def published_laws(tree: Block, terms) -> tuple[SourcedLaw | RefusedLaw, ...]:
    """Every law of this module at ``tree``, or why it is not set beside it; ``terms`` are the tree's FLOP
    terms under the counter's conventions (:func:`~.flops.flop_terms`), kept with the tree once worked out."""
    if published_laws not in tree.facts:
        tree.facts[published_laws] = _published(tree, terms)
    return tree.facts[published_laws]


def _published(tree: Block, terms) -> tuple[SourcedLaw | RefusedLaw, ...]:
    try:
        shape = read_shape(tree)
    except NotDescribed as reason:
        return tuple(RefusedLaw(name, str(reason)) for name in LAW_NAMES)
    build = {"narayanan_training": _narayanan, "megatron_training": _megatron, "nanogpt_training": _nanogpt,
             "torchtitan_training": _torchtitan, "maxtext_training": _maxtext,
             "chinchilla_forward": lambda sh, t: _chinchilla(sh, t, False),
             "chinchilla_training": lambda sh, t: _chinchilla(sh, t, True)}
    counted = _Counted(tree, tuple(terms))
    return tuple(RefusedLaw(name, "a mixture of experts (the source's formula is for dense models)")
                 if shape.moe and name in DENSE_ONLY else build[name](shape, counted) for name in LAW_NAMES)
