"""Tracing a pass product by product, and fitting what it shows: PyTorch's own counter is the reference."""

from __future__ import annotations

import pytest
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

from symparams.analysis.inference import tracing
from symparams.analysis.inference.fitting import fit
from symparams.analysis.inference.observing import observe
from symparams.analysis.inference.tracing import Product, Trace, Untraceable
from tests.reference.flops import counted, real, token_ids

TINY_LLAMA = dict(vocab_size=53, hidden_size=24, intermediate_size=40, num_hidden_layers=2, num_attention_heads=3,
                  num_key_value_heads=1, head_dim=8)


@pytest.fixture(scope="session")
def llama():
    """A tiny Llama on the CPU (random weights) and the same on the meta device."""
    config = transformers.LlamaConfig(**TINY_LLAMA)
    cpu = real("LlamaForCausalLM", transformers.LlamaConfig(**TINY_LLAMA))
    return cpu, tracing.build(transformers.LlamaForCausalLM, config)


def test_traced_products_add_up_to_the_counters_forward_and_training(llama):
    cpu, _ = llama
    forward, training = counted(cpu, {"input_ids": token_ids(53, 11, 2)})
    traced = tracing.trace(cpu, 11, 2, device="cpu")
    assert (traced.forward, traced.forward + traced.backward) == (forward, training)


def test_a_trace_on_the_meta_device_is_the_trace_on_the_cpu(llama):
    cpu, meta = llama
    on_cpu, on_meta = tracing.trace(cpu, 9, 3, device="cpu"), tracing.trace(meta, 9, 3)
    assert [(p.module, p.factors, p.forward, p.backward) for p in on_meta.products] == \
        [(p.module, p.factors, p.forward, p.backward) for p in on_cpu.products]
    assert [(t.attribute, t.shape) for t in on_meta.cache] == [(t.attribute, t.shape) for t in on_cpu.cache]


def test_each_backward_product_is_matched_to_its_forward_product(llama):
    _, meta = llama
    traced = tracing.trace(meta, 7, 2)
    assert traced.extra_backward == {}
    # both factors of every product need a gradient (the embedding trains): its backward is twice its forward
    assert all(p.backward == 2 * p.forward for p in traced.products)
    q = next(p for p in traced.products if p.module == "model.layers.*.self_attn.q_proj")
    assert (q.factors, q.weight) == ((14, 24, 24), True)
    scores = [p for p in traced.products if p.module == "model.layers.*.self_attn"][:2]
    assert [p.factors for p in scores] == [(6, 7, 8, 7), (6, 7, 7, 8)]  # b·A, s, D, s; b·A, s, s, D


def test_the_cache_is_read_tensor_by_tensor(llama):
    _, meta = llama
    traced = tracing.trace(meta, 5, 2)
    assert sorted((t.layer, t.attribute, t.shape) for t in traced.cache) == \
        [(i, a, (2, 1, 5, 8)) for i in (0, 1) for a in ("keys", "values")]


def test_a_state_space_cache_holds_its_states():
    config = transformers.MambaConfig(vocab_size=40, hidden_size=16, state_size=5, num_hidden_layers=2, expand=2,
                                      conv_kernel=3, time_step_rank=4)
    model = tracing.build(transformers.MambaForCausalLM, config)
    traced = tracing.trace(model, 6, 2)
    assert sorted({(t.attribute, t.shape) for t in traced.cache}) == \
        [("conv_states.0", (2, 32, 3)), ("recurrent_states.0", (2, 32, 5))]


def test_a_hybrid_stack_of_state_space_layers_only_gives_its_cache():
    """Bamba's default is every layer Mamba: transformers asks the cache the length its attention mask starts at,
    and raises where no layer is attention's; traced, the length is 0 and the states are read as Mamba's are."""
    config = transformers.BambaConfig(vocab_size=40, hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=1, mamba_n_heads=4, mamba_d_head=8,
                                      mamba_n_groups=1, mamba_d_state=5, mamba_d_conv=3, mamba_expand=2)
    model = tracing.build(transformers.BambaForCausalLM, config)
    with pytest.raises(ValueError, match="only contain LinearAttention"):  # why the patch exists
        model(input_ids=torch.zeros((2, 6), dtype=torch.long, device="meta"), use_cache=True)
    traced = tracing.trace(model, 6, 2)
    # conv states: the inner width 2·16 plus the B and C groups' 2·1·5, over the kernel; SSM: 4 heads of 8 × 5
    assert sorted({(t.attribute, t.shape) for t in traced.cache}) == \
        [("conv_states.0", (2, 42, 3)), ("recurrent_states.0", (2, 4, 8, 5))]
    assert transformers.cache_utils.Cache.get_seq_length is not None and \
        transformers.cache_utils.Cache.get_seq_length.__name__ == "get_seq_length"  # restored after the trace


def test_a_loop_of_equal_products_is_one_key_and_copies_that_differ_are_refused():
    loop = [Product("m", "bmm", (2, 3, 4, 1), 48, call=1) for _ in range(5)] + [Product("m", "mm", (2, 3, 4), 48,
                                                                                        call=1)]
    found = observe(Trace(5, 1, loop, traced_backward=False))
    assert {t: v for t, v in found.targets.items() if t[0] == "count"} == \
        {("count", ("m", 0, "bmm")): 5, ("count", ("m", 1, "mm")): 1}
    uneven = [Product("m", "mm", (2, 3, 4), 48, call=1), Product("m", "mm", (2, 3, 5), 60, call=2)]
    with pytest.raises(Untraceable, match="differ between its copies"):
        observe(Trace(5, 1, uneven, traced_backward=False))


def test_calls_of_a_module_within_one_call_of_its_parent_are_keyed_apart_by_calls():
    # a projection run on the tokens, then on 1 global token, in each of two layers (parent calls 10 and 20)
    def layer(parent: int, first: int) -> list[Product]:
        return [Product("q", "mm", (14, 8, 8), 2 * 14 * 64, call=first, outer=parent),
                Product("q", "mm", (2, 8, 8), 2 * 2 * 64, call=first + 1, outer=parent)]

    trace = Trace(7, 2, layer(10, 11) + layer(20, 21), traced_backward=False)
    with pytest.raises(Untraceable, match="differ between its copies"):
        observe(trace)
    found = observe(trace, by_calls=True).targets
    tokens, global_tokens = ("q", 0, "mm"), ("q", 1, "mm")
    assert (found["count", tokens], found["count", global_tokens]) == (2, 2)
    assert (found["factor", tokens, 0], found["factor", global_tokens, 0]) == (14, 2)


def test_layerdrop_is_off_in_a_trace_so_every_layer_runs():
    # M2M-100's default LayerDrop (0.05 per stack) skips layers at random in training mode; 60 layers of 0.5 would
    # all run in a trace with a chance of 2**-60
    config = transformers.M2M100Config(vocab_size=40, d_model=8, encoder_layers=30, decoder_layers=30,
                                       encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16,
                                       decoder_ffn_dim=16, encoder_layerdrop=0.5, decoder_layerdrop=0.5)
    traced = tracing.trace(tracing.build(transformers.M2M100Model, config), 5, 1, cache=False, backward=False)
    q = [p for p in traced.products if p.module.endswith("self_attn.q_proj")]
    assert len(q) == 60


def test_a_fit_can_ask_for_terms_independent_on_the_points():
    # a never moves: its column is three times the constant's, and a level holding both fits with either
    points = [{"a": 3, "b": b, "c": c} for b in range(1, 6) for c in range(1, 6)]
    values = [2 * p["a"] + p["b"] + p["c"] for p in points]
    assert fit(points, values, ["a", "b", "c"], max_level=1) is not None
    assert fit(points, values, ["a", "b", "c"], max_level=1, independent=True) is None


def test_batched_experts_count_as_the_eager_loop():
    """Why the traces build experts as batched matmuls (the eager loop's dispatch has no meta kernel): a token
    times exactly its top-k experts, as the eager loop multiplies it."""
    config = dict(vocab_size=40, hidden_size=12, intermediate_size=6, num_hidden_layers=1, num_attention_heads=3,
                  num_key_value_heads=3, num_local_experts=4, num_experts_per_tok=2)
    ids = token_ids(40, 9, 2)
    totals = {}
    for experts in ("eager", "batched_mm"):
        torch.manual_seed(0)
        model = transformers.MixtralForCausalLM._from_config(transformers.MixtralConfig(**config),
                                                             attn_implementation="eager",
                                                             experts_implementation=experts)
        with FlopCounterMode(display=False) as counter:
            model(input_ids=ids, use_cache=False)
        totals[experts] = counter.get_total_flops()
    assert totals["batched_mm"] == totals["eager"]


def test_a_forward_pass_that_rebuilds_its_attention_is_refused():
    # BigBird's default block-sparse attention turns itself into full attention on a short input: a trace at 7
    # tokens would give full attention's costs, which longer inputs do not run
    config = transformers.BigBirdConfig(vocab_size=70, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                                        num_hidden_layers=2)
    with pytest.raises(Untraceable, match="rebuilt encoder.layer.*.attention.self from BigBirdBlockSparseAttention"):
        tracing.trace(tracing.build(transformers.BigBirdModel, config), 7, 2, cache=False)
    config.attention_type = "original_full"  # full attention at every length: traced
    assert tracing.trace(tracing.build(transformers.BigBirdModel, config), 7, 2, cache=False).products


class _Reads:
    """A model whose forward reads ``features`` or token ids (nothing is run: only its signature is asked)."""

    def __init__(self, forward):
        self.forward = forward
        self.config = transformers.PretrainedConfig(vocab_size=11)


def test_a_forward_that_reads_features_in_place_of_ids_is_refused_by_name():
    def whisper(input_features=None, decoder_input_ids=None, **kwargs): ...

    def perceiver(inputs, attention_mask=None): ...

    for forward, name in ((whisper, "input_features"), (perceiver, "inputs")):
        with pytest.raises(Untraceable, match=f"reads {name}, not token ids"):
            tracing.inputs(_Reads(forward), 7, 2)

    # ids beside features or embeddings (a speech decoder, every text model): fed ids as before
    def both(input_ids=None, input_features=None, inputs_embeds=None): ...

    given = tracing.inputs(_Reads(both), 7, 2)
    assert given["input_ids"].shape == (2, 7)


class _CachelessDecoder(torch.nn.Module):
    """Runs without a cache; with ``use_cache=True`` it fails from deep in its cache (as BlenderBot's causal LM
    does, its cache sized by the encoder's layers)."""

    def __init__(self):
        super().__init__()
        self.config = transformers.PretrainedConfig(vocab_size=11)
        self.embed = torch.nn.Embedding(11, 4)

    def forward(self, input_ids=None, use_cache=False):
        if use_cache:
            [][0]
        return {"logits": self.embed(input_ids)}


def test_a_forward_that_fails_only_with_a_cache_says_so():
    model = _CachelessDecoder()
    assert tracing.trace(model, 5, 2, device="cpu", cache=False).forward == 0  # no product, but it runs
    with pytest.raises(tracing.CachedPassFailed, match=r"with use_cache=True the forward fails \(IndexError"):
        tracing.trace(model, 5, 2, device="cpu")


class _Assistant(torch.nn.Module):
    """Takes token ids but fails without another model's states (Gemma 4's assistant), or fails on its own."""

    def __init__(self, message: str):
        super().__init__()
        self.config = transformers.PretrainedConfig(vocab_size=11)
        self.message = message

    def forward(self, input_ids=None, inputs_embeds=None, shared_kv_states=None):
        raise ValueError(self.message)


def test_a_forward_that_fails_for_an_input_ids_do_not_give_is_refused_by_name():
    with pytest.raises(Untraceable, match=r"^its forward needs shared_kv_states \(the key/value states of the "
                                          r"model it assists\) beside token ids"):
        tracing.trace(_Assistant("inputs_embeds and shared_kv_states cannot be None."), 5, 2, device="cpu")
    # a failure naming no such input is one configuration's: raised as it is, for the caller to skip
    with pytest.raises(ValueError, match="^size mismatch$"):
        tracing.trace(_Assistant("size mismatch"), 5, 2, device="cpu")
    # an input the forward does not take, though the message names it, is no reason of its own
    with pytest.raises(ValueError, match="input_features"):
        tracing.trace(_Assistant("no input_features here"), 5, 2, device="cpu")


@pytest.mark.crosscheck
def test_voxtral_realtime_which_needs_audio_features_beside_ids_is_refused_by_that_name():
    """A real model (its default config, built on the meta device): its forward takes token ids and fails without
    audio features, a failure no configuration escapes."""
    config = transformers.AutoConfig.for_model("voxtral_realtime")
    model = tracing.build(transformers.VoxtralRealtimeForConditionalGeneration, config)
    with pytest.raises(Untraceable, match=r"^its forward needs input_features \(audio features\) beside token ids"):
        tracing.trace(model, 5, 1, cache=False, backward=False)


def test_token_ids_index_the_smallest_vocabulary_a_config_names():
    """Gemma 4 looks its per-layer embeddings up by the token ids: ids drawn over the main vocabulary of 100 would
    pass the 12 rows of the per-layer table (an IndexError on the CPU)."""
    from types import SimpleNamespace

    config = SimpleNamespace(vocab_size=100, vocab_size_per_layer_input=12, get_text_config=lambda: config)
    def forward(input_ids=None):  # what inputs() reads of a model: its config and the forward's parameters
        return input_ids

    ids = tracing.inputs(SimpleNamespace(config=config, forward=forward), 64, 4, device="cpu")["input_ids"]
    assert int(ids.max()) < 12 and int(ids.max()) >= 3
    assert tracing.smallest_vocabulary(SimpleNamespace(hidden_size=8)) == 4


def test_a_model_that_refuses_the_cache_flag_in_its_encoder_is_cached_by_its_configs_flag():
    """Switch Transformers hands ``use_cache=True`` to its encoder too, which raises; its config's flag caches the
    decoder alone, as generation does: its cache holds the decoder's keys and values, one layer each."""
    config = transformers.SwitchTransformersConfig(vocab_size=19, d_model=8, d_kv=4, d_ff=12, num_layers=1,
                                                   num_decoder_layers=2, num_heads=2, num_experts=2)
    model = real("SwitchTransformersForConditionalGeneration", config)
    ids = token_ids(19, 5, 2)
    given = {"input_ids": ids, "decoder_input_ids": ids}
    with pytest.raises(ValueError, match="(?s)can only be set to `True` if .* is used as a decoder"):
        model(**given, use_cache=True)
    held = tracing.cache_tensors(tracing.cached_forward(model, given).past_key_values)
    assert sorted({(t.part, tuple(t.shape)) for t in held}) == [("cross", (2, 2, 5, 4)), ("self", (2, 2, 5, 4))]
    assert len(held) == 2 * 2 * 2  # keys and values of each decoder layer, self and cross


def test_a_cached_pass_that_fails_with_and_without_the_flag_is_refused_in_one_line():
    model = real("LlamaForCausalLM", transformers.LlamaConfig(**TINY_LLAMA))
    with pytest.raises(tracing.CachedPassFailed, match=r"^with use_cache=True the forward fails \(IndexError"):
        tracing.cached_forward(model, {"input_ids": token_ids(53, 5, 2) + 100})


def test_a_cache_of_states_by_layer_index_is_read_layer_by_layer():
    """xLSTM keeps no cache layers but a dict of each block's three states (matrix memory, normaliser, maximum):
    each is read as its layer's, with the shapes transformers holds.  (Its cache is made with heads of
    ``hidden_size / num_heads`` channels whatever ``qk_dim_factor`` says, so only a factor of 1 runs cached.)"""
    config = transformers.xLSTMConfig(vocab_size=19, hidden_size=64, embedding_dim=64, num_heads=4,
                                      qk_dim_factor=1.0, num_hidden_layers=2, num_blocks=2)
    model = real("xLSTMForCausalLM", config)
    held = tracing.cache_tensors(tracing.cached_forward(model, {"input_ids": token_ids(19, 5, 2)}).past_key_values)
    heads, qk, v = config.num_heads, config.qk_head_dim, config.v_head_dim
    assert [(t.layer, t.attribute, t.shape) for t in held] == [
        (layer, f"rnn_state.{i}", shape) for layer in (0, 1)
        for i, shape in enumerate(((2, heads, qk, v), (2, heads, qk), (2, heads, 1)))]
