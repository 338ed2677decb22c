"""What the classic decoders (GPT-NeoX, GPT-J, OPT, BLOOM, Falcon, Phi) share.

Each is a token table, a stack of L decoder layers and a final norm, with the
heads transformers puts on a decoder-only model.  Their attention is written
per head so the head-count proof can read it: separate projections
(``q_proj``, ``k_proj``, ``v_proj``) or one fused ``query_key_value`` in the
Megatron style, whose Q, K and V parts add up to the one tensor transformers
holds.  The MLP is two linear maps.

>>> from symparams.core.symbols import A
>>> qkv = fused_qkv(1, bias=False)  # multi-query: one key/value head
>>> [(b.name, b.as_written) for b in qkv.children]
[('query', A*(H*(H/A))), ('key', H*(H/A)), ('value', H*(H/A))]
>>> qkv.count
H**2 + 2*H**2/A
>>> lm_head(H, bias=True, tied_to="embeddings.wte").count  # a tied weight keeps its own bias
V
"""

from __future__ import annotations

from ..core.blocks import group, linear, parameter, per_head_linear
from ..core.compute import Attention
from ..core.family import Switch
from ..core.symbols import A, C, H, V

#: the head width of every family here: H/A
WIDTH = H / A

#: the heads a decoder may have, in the order ``symparams list`` shows them
HEAD_ORDER = ("causal-lm", "sequence-classification", "token-classification", "question-answering")


def tie_switch(default: bool) -> Switch:
    """``tie``: the causal-LM head's weight is the token table (``tie_word_embeddings``)."""
    return Switch("tie", default, en="causal-lm head tied to the token embedding (tie_word_embeddings)",
                  zh="语言模型头与词嵌入共享权重（tie_word_embeddings）")


def heads_of(classes) -> tuple[str, ...]:
    """The heads of a ``CLASSES`` table (``None``, the base model, left out)."""
    return tuple(h for h in HEAD_ORDER if h in classes)


def qkv_parts(names, kv_heads, *, bias, ref=None):
    """Q with A heads, K and V with ``kv_heads`` heads, each H/A wide, written per head."""
    heads = (A, kv_heads, kv_heads)
    titles = ("query", "key", "value")
    return [per_head_linear(n, H, k, WIDTH, bias=bias, ref=ref, title=t) for n, k, t in zip(names, heads, titles)]


def fused_qkv(kv_heads, *, bias, title="qkv_projections"):
    """``query_key_value``: one Linear H → (A + 2·kv_heads)·H/A, written as its Q, K and V parts.

    The parts have ``ref=""``, so their weights and biases add up to
    ``query_key_value.weight`` and ``.bias``, the one tensor of each.
    """
    return group("query_key_value", qkv_parts(("query", "key", "value"), kv_heads, bias=bias, ref=""), title=title)


def causal_attention(kv_heads=A) -> Attention:
    """A decoder's eager self-attention: A query heads of width H/A, each scoring every key (key/value heads
    shared by several query heads are broadcast to A), and ``kv_heads`` heads of keys and values cached per
    token."""
    return Attention(A, WIDTH, WIDTH, cache=2 * kv_heads * WIDTH, causal=True)


def mlp(inner, names=("dense_h_to_4h", "dense_4h_to_h"), *, bias=True, ref=None):
    """The two-matrix MLP: H → inner → H."""
    up, down = names
    return group("mlp", [linear(up, H, inner, bias=bias, title="ffn_up"),
                         linear(down, inner, H, bias=bias, title="ffn_down")], ref=ref, title="ffn")


def lm_head(n_in, *, bias, tied_to):
    """``lm_head``: n_in → V.  Tied, its weight is the token table; a bias (GPT-J, Phi) stays its own."""
    if tied_to is None or not bias:
        return linear("lm_head", n_in, V, bias=bias, tied_to=tied_to, title="output_projection")
    return group("lm_head", [linear("weight", n_in, V, bias=False, tied_to=tied_to, ref="", title="output_projection"),
                             parameter("bias", V, title="decoder_bias")], title="output_projection")


def task_head(head, *, tied_to, n_in=H, lm_bias=False, token="classifier", token_bias=True):
    """The head block transformers' ``*For...`` class adds (``None`` for the base model).

    ``tied_to`` is the token table's path when the LM head is tied, else None.
    """
    if head == "causal-lm":
        return lm_head(n_in, bias=lm_bias, tied_to=tied_to)
    if head == "sequence-classification":
        return linear("score", n_in, C, bias=False, title="classifier")
    if head == "token-classification":
        return linear(token, n_in, C, bias=token_bias, title="classifier")
    if head == "question-answering":
        return linear("qa_outputs", n_in, 2, title="qa_outputs")
    return None


def decoder_model(name, inputs, layers, outputs, task, *, ref=""):
    """The tree: ``embeddings`` (inputs), ``decoder`` (layers, then outputs), the task head.

    ``ref`` is the base model's own module holding them (OPT's ``decoder``), "" when none.
    """
    return group(name, [
        group("embeddings", inputs, ref=ref, title="input"),
        group("decoder", [layers, *outputs], ref=ref, title="decoder"),
        group("head", [task], ref="", title="task_head") if task is not None else None,
    ], ref="")
