"""The KV cache as servers hold it (symparams.analysis.kv_serving), against transformers' caches and vLLM's
block arithmetic.

* fp8: transformers' ``QuantizedCache("fp8", config)`` (``Fp8QuantizedLayer``) runs on the CPU: after a
  ``use_cache=True`` forward of a tiny model and a decoded token, the fp8 keys and values and the fp32
  scales it holds are summed tensor by tensor.
* a cache in its own plain dtype: a bf16 model's ``DynamicCache`` against fp32 weights with ``kv_dtype="bf16"``.
* int4, int8: transformers' quanto and HQQ cache layers (optimum-quanto, hqq: test requirements) run on the
  CPU: every split of ``s`` tokens into a prefill and decoded tokens that fills the residual is summed tensor
  by tensor (packed data, scales, zero points, the residual).  The residual rule is also read off ``QuantizedLayer.update`` itself
  (driven with a quantizer that only records what it is given), and the layout written out below from the
  sources, for llama-3-8b's sizes.
* paged: vLLM's block arithmetic written out (``vllm/v1/kv_cache_interface.py``, ``page_size_bytes``;
  ``vllm/v1/core/kv_cache_utils.py``, ``available_memory // page_size // num_layers`` blocks and
  ``cdiv(num_tokens, block_size)`` blocks a request).
"""

from __future__ import annotations

import pytest
import torch
import transformers
from transformers.cache_utils import QuantizedCache, QuantizedLayer

from symparams import SymparamsError, model
from symparams.analysis.capacity import largest_batch, longest_context
from tests.reference import flops as ref

SIZES = dict(vocab_size=97, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
             num_hidden_layers=3, pad_token_id=0, bos_token_id=1, eos_token_id=2)
BATCH = 2
pytestmark = pytest.mark.crosscheck


def tiny(model_type: str, **extra):
    config = transformers.AutoConfig.for_model(model_type, **SIZES, **extra)
    module = ref.real({"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[model_type], config)
    return config, module.eval()


def forward(module, seq: int, cache=None, decode: bool = False):
    with torch.no_grad():
        out = module(input_ids=ref.token_ids(97, seq, BATCH), cache=cache, use_cache=True)
        if decode:
            out = module(input_ids=ref.token_ids(97, 1, BATCH, seed=2), cache=out.cache, use_cache=True)
    return out.cache


def fp8_bytes(cache) -> int:
    """Every tensor an fp8 cache holds: the fp8 keys and values, their fp32 scales, the (empty) plain ones."""
    total = 0
    for layer in cache.layers:
        for quantized, scale in (layer._quantized_keys, layer._quantized_values):
            assert quantized.dtype == torch.float8_e4m3fn and scale.dtype == torch.float32
            total += quantized.numel() * quantized.element_size() + scale.numel() * scale.element_size()
        total += layer.keys.numel() * layer.keys.element_size() + layer.values.numel() * layer.values.element_size()
    return total


@pytest.mark.parametrize("model_type", ["llama", "qwen2"])
@pytest.mark.parametrize("seq", [1, 7])
def test_an_fp8_cache_is_what_transformers_quantized_cache_holds(model_type, seq):
    # catches a wrong byte per element, scales counted per sequence or per token, or left out
    config, module = tiny(model_type)
    m = model({"model_type": model_type, **SIZES}, head="causal-lm")
    held = fp8_bytes(forward(module, seq, QuantizedCache("fp8", config)))
    assert m.kv_cache("fp32", seq=seq, batch=BATCH, kv_dtype="fp8").total == held
    decoded = fp8_bytes(forward(module, seq, QuantizedCache("fp8", config), decode=True))
    assert m.kv_cache("fp32", seq=seq + 1, batch=BATCH, kv_dtype="fp8").total == decoded


def test_a_cache_in_its_own_plain_dtype_is_a_bf16_models_cache():
    # fp32 weights, a bf16 cache: what a bf16 model's DynamicCache holds (2 bytes an element, not the weights' 4)
    _, module = tiny("llama")
    held = ref.tensor_bytes(forward(module.to(torch.bfloat16), 5))
    m = model({"model_type": "llama", **SIZES}, head="causal-lm")
    assert m.kv_cache("fp32", seq=5, batch=BATCH, kv_dtype="bf16").total == held
    assert m.kv_cache("fp32", seq=5, batch=BATCH).total == 2 * held


class _Recording(QuantizedLayer):
    """transformers' QuantizedLayer with a quantizer that keeps its input: how many tokens are quantized and how
    many stay in the residual is transformers' own update logic."""

    def _quantize(self, tensor, axis):
        return tensor

    def _dequantize(self, qtensor):
        return qtensor


def _split(prefill: int, decoded: int) -> tuple[int, int]:
    """(tokens quantized, tokens in the residual) after a prefill and ``decoded`` tokens, at the defaults."""
    layer = _Recording()
    states = lambda n: torch.zeros(1, 1, n, 2)  # noqa: E731
    layer.update(states(prefill), states(prefill))
    for _ in range(decoded):
        layer.update(states(1), states(1))
    return layer._quantized_keys.shape[-2], layer.keys.shape[-2] if layer.keys.dim() == 4 else 0


def test_the_residual_at_its_fullest_is_transformers_quantized_layers():
    # catches a residual of 128 rather than 127, or one counted before the first requantization
    assert QuantizedLayer.__init__.__defaults__ == (4, 0, 0, 64, 128)  # nbits, axes, q_group_size, residual_length
    for seq in (1, 2, 127, 128, 129, 300):
        splits = [_split(prefill, seq - prefill) for prefill in range(max(1, seq - 260), seq + 1)]
        assert all(q + r == seq for q, r in splits)
        assert max(r for _, r in splits) == min(seq, 128) - 1, seq


def quanto_bytes(tokens_quantized: int, residual: int, elements: int, bits: int) -> int:
    """A group-wise cache's bytes, ``elements`` per token over the keys and values of every layer, written out
    from the sources: the quantized elements at ``bits`` bits (quanto packs two 4-bit values in a uint8), a
    2-byte scale and a 2-byte zero point (quanto's ``shift``, HQQ's ``zero``, in the fp16/bf16 compute dtype)
    per group of 64 (``numel // group_size`` groups), and the residual's elements at 2 bytes."""
    quantized = tokens_quantized * elements
    return quantized * bits // 8 + quantized // 64 * (2 + 2) + residual * elements * 2


@pytest.mark.parametrize("kv, bits", [("int4", 4), ("int8", 8)])
def test_an_integer_cache_follows_the_quantized_layers_layout(kv, bits):
    m = model("llama-3-8b")
    elements = 2 * 32 * 8 * 128  # keys and values, 32 layers of 8 heads of 128
    for seq in (1, 100, 128, 129, 8192):
        residual = min(seq, 128) - 1
        expected = 3 * quanto_bytes(seq - residual, residual, elements, bits)
        assert m.kv_cache("bf16", seq=seq, batch=3, kv_dtype=kv).total == expected, seq


def test_paged_fit_is_vllms_block_arithmetic():
    m = model("llama-3-8b")
    budget = 80 * 10**9
    weights = 2 * m.count  # bf16
    # vLLM: FullAttentionSpec.page_size_bytes = 2 * block_size * num_kv_heads * head_size * dtype_size (fp8: 1)
    page = 2 * 16 * 8 * 128 * 1
    scales = 32 * 2 * 4  # _k_scale and _v_scale, fp32, per attention layer
    blocks = (budget - weights - scales) // page // 32  # num_gpu_blocks: available // page_size // num_layers
    args = dict(dtype="bf16", optimizer="none", kv_dtype="fp8", block_size=16)
    assert longest_context(m, budget, **args) == blocks * 16
    assert largest_batch(m, budget, seq=4000, **args) == blocks // -(-4000 // 16)  # cdiv(4000, 16) blocks each
    assert largest_batch(m, budget, seq=4001, **args) == blocks // -(-4001 // 16)


def test_paged_blocks_round_each_sequence_up():
    # catches rounding the batch's tokens rather than each sequence's
    kv = model("llama-3-8b").kv_cache("bf16", seq=17, batch=3, block_size=16)
    assert kv.total == 3 * 32 * 131072
    assert model("llama-3-8b").kv_cache("bf16", seq=17, batch=3, block_size=1).total == 3 * 17 * 131072


def test_the_paged_bytes_of_a_quantized_checkpoint_sit_beside_its_weights():
    m = model("llama-3-8b", head="causal-lm")
    mem = m.memory("q4_k", "none", seq=1000, batch=2, kv_dtype="fp8", block_size=16)
    assert mem.kv_cache == 2 * 63 * 16 * 65536 + 32 * 8
    assert mem.total == mem.weights + mem.kv_cache


def test_an_mla_cache_stays_its_latent():
    # vLLM's MLAAttentionSpec: one "head" of kv_lora_rank + qk_rope_head_dim = 512 + 64 per layer, 61 layers
    kv = model("deepseek-v3").kv_cache("bf16", seq=100, kv_dtype="fp8", block_size=16)
    assert kv.per_token == 61 * 576
    assert kv.total == 61 * 576 * 112 + 61 * 8


@pytest.mark.parametrize("name, options, needle", [
    ("gemma-2-9b", dict(kv_dtype="fp8"), "sliding-window"),
    ("mistral-7b", dict(block_size=16), "sliding-window"),
    ("t5-small", dict(kv_dtype="int8"), "cross-attention"),
    ("deepseek-v3", dict(kv_dtype="int4"), "groups of 64"),
    ("llama-3-8b", dict(kv_dtype="int4", block_size=16), "not paged"),
    ("llama-3-8b", dict(kv_dtype="nf4"), "KV cache dtype"),
    ("llama-3-8b", dict(block_size=0), "block size"),
])
def test_what_is_not_modelled_is_refused(name, options, needle):
    with pytest.raises(SymparamsError, match=needle):
        model(name).kv_cache("bf16", seq=8, **options).total


def test_training_refuses_a_servers_cache():
    with pytest.raises(SymparamsError, match="serve the model"):
        model("llama-3-8b").memory("bf16", "adam", seq=8, kv_dtype="fp8")


def test_the_formula_is_the_figure():
    import sympy as sp
    from symparams.core.compute import BATCH as b, SEQ as s

    m = model("llama-3-8b")
    for options in (dict(kv_dtype="int4"), dict(kv_dtype="fp8", block_size=16)):
        kv = m.kv_cache("bf16", **options)
        for seq in (1, 17, 200):
            at = m.evaluate(kv.formulas["total"]).xreplace({s: seq, b: 2})
            assert at == m.kv_cache("bf16", seq=seq, batch=2, **options).total
    assert model("llama").kv_cache("bf16", kv_dtype="fp8", block_size=16).formulas["total"].has(sp.ceiling)


def quantized_held(layers) -> int:
    """Every tensor transformers' quantized cache layers hold: each quantized tensor's packed data, scales and
    zero points (optimum-quanto's ``__tensor_flatten__`` down to plain tensors; HQQ's ``(data, meta)`` pair), and
    the unquantized residual."""
    def nbytes(held) -> int:
        if isinstance(held, tuple):  # HQQ: the packed data and its meta, whose tensors are the scale and zero
            data, meta = held
            return nbytes(data) + sum(nbytes(v) for v in meta.values() if isinstance(v, torch.Tensor))
        if hasattr(held, "__tensor_flatten__"):
            return sum(nbytes(getattr(held, name)) for name in held.__tensor_flatten__()[0])
        return held.numel() * held.element_size()

    return sum(nbytes(layer._quantized_keys) + nbytes(layer._quantized_values) + nbytes(layer.keys)
               + nbytes(layer.values) for layer in layers)


@pytest.mark.parametrize("backend, nbits, kv", [("Quanto", 4, "int4"), ("HQQ", 4, "int4"), ("HQQ", 8, "int8")])
def test_an_integer_cache_is_what_transformers_quantized_layers_hold(backend, nbits, kv):
    # catches a residual one token too long or short, data not packed 8/nbits to a byte, a group's scale or zero
    # point left out, or scales in fp32 rather than the compute dtype.  transformers' own layer
    # (QuantizedCache(backend) builds one per layer) is fed bf16 keys and values of one layer's shape, [b, G, t, D]
    # with G = 1 head of D = 64 (a forward pass of a model would give the same shapes, ten times slower)
    import transformers.cache_utils as cache_utils

    layer_class = getattr(cache_utils, f"{backend}QuantizedLayer")
    sizes = dict(SIZES, hidden_size=128, num_attention_heads=2, num_key_value_heads=1)
    m = model({"model_type": "llama", **sizes}, head="causal-lm")
    generator = torch.Generator().manual_seed(0)
    states = lambda t: torch.randn(BATCH, 1, t, 64, generator=generator).to(torch.bfloat16)  # noqa: E731
    seen: dict[int, list[int]] = {}
    for prefill in (1, 2, 3):  # residuals of s − 1 up to 127, then 127 at s = 129 and 130
        layer = layer_class(nbits=nbits)
        layer.update(states(prefill), states(prefill))
        seen.setdefault(prefill, []).append(quantized_held([layer]))
        for seq in range(prefill + 1, prefill + 128):
            layer.update(states(1), states(1))
            seen.setdefault(seq, []).append(quantized_held([layer]))
    for seq, held in seen.items():  # three layers, each as the one fed here
        assert 3 * max(held) == m.kv_cache("bf16", seq=seq, batch=BATCH, kv_dtype=kv).total, seq
