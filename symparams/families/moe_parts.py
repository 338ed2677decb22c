"""Mixture-of-experts parts, as transformers 5 builds them (Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek).

A sparse MoE layer holds a router ``gate`` (one weight row per routed
expert, no bias: ``N_e·H``) and ``experts``: N_e SwiGLU experts of width
F_e stored as two fused 3-D tensors, ``gate_up_proj`` ``[N_e, 2·F_e, H]``
and ``down_proj`` ``[N_e, H, F_e]``.  Each expert's slice is a linear map
(transformers applies it with ``F.linear``), so its shape is written
``(in, out)`` as a linear layer's is: ``[H, 2·F_e]`` and ``[F_e, H]``.  The experts group repeats N_e times
and a token uses k_e of the copies (``used``), so the active count keeps k_e
experts per layer.  Shared experts (Qwen2-MoE, DeepSeek) are a plain SwiGLU
MLP every token passes through.

>>> from symparams.core.symbols import H, F_e, k_e
>>> e = experts()
>>> e.total, e.active_total
(3*F_e*H*N_e, 3*F_e*H*k_e)
"""

from __future__ import annotations

from ..core.blocks import Block, embedding, group, linear, product_as_written, rms_norm, tensor
from ..core.errors import SymparamsError
from ..core.family import Constraint, Switch
from ..core.symbols import F_e, H, L, L_f, N_e, V, k_e

#: a token cannot be sent to more experts than there are
TOP_K = Constraint(N_e - k_e + 1, "k_e={k_e} is more than N_e={N_e} (a token is routed to k_e of the N_e experts)")

DENSE_LAYERS = Switch("dense_layers", False,
                      en="L_f layers have a plain MLP of width F instead of experts (the other L - L_f have experts)",
                      zh="有 L_f 层用宽度为 F 的普通前馈网络代替专家（其余 L - L_f 层有专家）")

#: with dense layers, at least one layer keeps its experts
SOME_MOE_LAYER = Constraint(L - L_f, "L_f={L_f} dense layers of L={L} leave no mixture-of-experts layer")


def router() -> Block:
    """``gate``: the router's weight ``[N_e, H]``, one score per routed expert (no bias)."""
    return linear("gate", H, N_e, bias=False, title="router")


def experts() -> Block:
    """``experts``: N_e SwiGLU experts in two fused tensors; a token uses k_e of them.  Each slice is
    written ``(in, out)``, the turn of the ``[out, in]`` PyTorch stores, as a linear layer's weight is."""
    return group("experts", [
        tensor("gate_up_proj", H, product_as_written(2, F_e), title="expert_gate_up"),
        tensor("down_proj", F_e, H, title="expert_down"),
    ], repeat=N_e, used=k_e, title="routed_experts")


def swiglu(name, width, *, bias=False, title="swiglu") -> Block:
    """A SwiGLU MLP of intermediate size ``width`` (gate, up: H → width; down: width → H)."""
    return group(name, [
        linear("gate_proj", H, width, bias=bias, title="ffn_gate"),
        linear("up_proj", H, width, bias=bias, title="ffn_up"),
        linear("down_proj", width, H, bias=bias, title="ffn_down"),
    ], title=title)


def decoder_layer(name, attention, mlp, repeat, title) -> Block:
    """A pre-norm decoder layer (RMSNorm → attention → RMSNorm → MLP), ``repeat`` of them at ``layers.*``."""
    return group(name, [rms_norm("input_layernorm", H), attention, rms_norm("post_attention_layernorm", H), mlp],
                 repeat=repeat, ref="layers.*", title=title)


def layers(attention, moe_mlp, dense_mlp=None, *, dense=False) -> list[Block]:
    """The decoder's layers: with ``dense``, L_f layers with a plain MLP (transformers builds them first or
    where the config says; folded as ``layers.*`` the order does not matter) and L - L_f with experts;
    else L layers with experts.  ``attention(runs)`` and the MLPs are functions, called once per kind of
    layer (``runs``: how many layers of that kind, for a sliding window's count)."""
    moe_layers = L - L_f if dense else L
    moe = decoder_layer("layers", attention(moe_layers), moe_mlp(), moe_layers, "moe_decoder_layer")
    if not dense:
        return [moe]
    return [decoder_layer("dense_layers", attention(L_f), dense_mlp(), L_f, "dense_decoder_layer"), moe]


def decoder_model(name, layer_blocks, task) -> Block:
    """Token embedding, the decoder's layers and final RMSNorm, and the task head, as transformers nests
    them (the base model's modules at the top level)."""
    return group(name, [
        group("embeddings", [embedding("embed_tokens", V, H, title="token_embedding")], ref="", title="token_input"),
        group("decoder", [*layer_blocks, rms_norm("norm", H, title="final_norm")], ref="",
              title="decoder" if len(layer_blocks) == 1 else "mixed_decoder"),  # layers of more than one kind
        group("head", [task], ref="", title="task_head") if task is not None else None,
    ], ref="")


def qwen_sparse_layers(cfg, family: str, total_layers: int, *, experts: int, top_k: int) -> tuple[dict, bool]:
    """N_e, k_e and, when some layers are dense, L_f of a Qwen MoE config, and whether there are dense layers.

    ``Qwen2MoeDecoderLayer`` (and Qwen3's) gives a layer a plain MLP when its index is in ``mlp_only_layers``
    or ``(index + 1)`` is not a multiple of ``decoder_sparse_step``; a config with no layer of experts left
    (``num_experts`` 0, or every layer dense) is refused.
    """
    if cfg.int("num_experts", default=experts, minimum=0) == 0:
        raise SymparamsError(f"{cfg.source}: key num_experts=0 (no experts: every layer a plain MLP) is not "
                             f"modelled by symparams' {family} family")
    step = cfg.int("decoder_sparse_step", default=1)
    only = cfg.get("mlp_only_layers") or []
    if not isinstance(only, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in only):
        raise SymparamsError(f"{cfg.source}: key mlp_only_layers must be a list of layer indices")
    dense = sum(1 for i in range(total_layers) if i in only or (i + 1) % step)
    if dense == total_layers:
        raise SymparamsError(f"{cfg.source}: keys mlp_only_layers / decoder_sparse_step leave no layer with "
                             f"experts, which symparams' {family} family does not model")
    values = experts_from_config(cfg, experts_key=("num_experts",), experts=experts, top_k=top_k)
    if dense:
        values["L_f"] = dense
    return values, dense > 0


def experts_from_config(cfg, *, experts_key: tuple[str, ...], experts: int, top_k: int | None) -> dict:
    """N_e and k_e from a config: ``experts_key`` the keys of the expert count (the first present),
    ``experts`` and ``top_k`` the config class's defaults; a top-k above the expert count is refused."""
    count = cfg.int(*experts_key, default=experts)
    used = cfg.int("num_experts_per_tok", default=top_k)
    if used is None:
        raise SymparamsError(f"{cfg.source}: missing key num_experts_per_tok (the config class has no default: "
                             f"without a top-k there is no active count)")
    if used > count:
        raise SymparamsError(f"{cfg.source}: key num_experts_per_tok ({used}) is more than the {count} experts")
    return {"N_e": count, "k_e": used}
