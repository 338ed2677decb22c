"""The costs shipped in the inferred data, read back through flops, memory and kv_cache, against tiny real models.

For a sample of inferred types of every kind, a tiny random model is built
for real (CPU, eager attention, eager experts) at sizes no fit or check saw:
three times the small widths the generator's own check used (odd ones stay
odd; divisibility holds), as many layers.  It runs under PyTorch's
``FlopCounterMode`` forward and forward plus backward without a cache (as
every cross-check of the hand families does), and once with ``use_cache=True``
for the bytes its cache holds, every tensor of every layer; at two lengths, the
second past the sliding window where there is one.  symparams' figures for the
same config.json, read from the data alone, must equal them exactly.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
from pathlib import Path

import pytest
import torch
import transformers

from symparams.core.compute import untraced
from symparams.analysis.inference.tracing import shapes_only
from symparams.core.errors import SymparamsError
from symparams.families.inferred import entries
from symparams.families.inferred_data import DATA
from symparams.families.inferred import model as inferred_model
from tests.reference.flops import counted, real, token_ids

#: model_type → the class checked, by kind (every kind the issue names: dense, GQA, MoE, MLA, encoder-only,
#: encoder-decoder, sliding window, hybrid and state-space)
SAMPLE = {
    "arcee": "causal-lm",  # dense, grouped-query attention
    "apertus": "causal-lm",  # dense
    "glm4": "causal-lm",  # dense, grouped-query attention
    "nemotron": "causal-lm",  # dense, grouped-query attention
    "persimmon": "causal-lm",  # dense, fused QKV
    "gpt_bigcode": "causal-lm",  # multi-query, fused QKV of H + 2·⌊H/A⌋ outputs
    "gpt_neox": "causal-lm",  # dense, fused QKV, a head count no parameter follows (the costs' own field)
    "falcon": "causal-lm",  # multi-query, fused QKV, counted from 4 layers up
    "ctrl": "causal-lm",  # dense, sinusoidal positions
    "biogpt": "causal-lm",  # dense, learned positions
    "openai-gpt": "causal-lm",  # dense, Conv1D projections
    "olmo": "causal-lm",  # dense
    "olmo3": "causal-lm",  # sliding window on three layers in four, full attention on the fourth
    "smollm3": "causal-lm",  # dense, layers without RoPE
    "ministral": "causal-lm",  # sliding window
    "cohere2": "causal-lm",  # sliding window on three layers in four
    "granite_swa": "causal-lm",  # sliding window
    "vaultgemma": "causal-lm",  # sliding window pattern
    "olmoe": "causal-lm",  # mixture of experts
    "granitemoe": "causal-lm",  # mixture of experts
    "gpt_oss": "causal-lm",  # mixture of experts with biases, sliding window
    "sarvam_mla": "causal-lm",  # multi-head latent attention, mixture of experts
    "minicpm3": "causal-lm",  # multi-head latent attention, key/value heads equal to the heads dividing the width
    "megatron-bert": "masked-lm",  # encoder only
    "deberta": "masked-lm",  # encoder only, counted from 4 layers up
    "roformer": "masked-lm",  # encoder only, rotary
    "camembert": "masked-lm",  # encoder only
    "ernie": "masked-lm",  # encoder only, task embeddings
    "esm": "masked-lm",  # encoder only, rotary
    "data2vec-text": "masked-lm",  # encoder only
    "plbart": "seq2seq-lm",  # encoder-decoder
    "marian": "causal-lm",  # decoder only, tied to the decoder's vocabulary (another than the shared one here)
    "umt5": "seq2seq-lm",  # encoder-decoder, relative buckets per layer
    "mamba": "causal-lm",  # state space
    "falcon_mamba": "causal-lm",  # state space
    "rembert": "masked-lm",  # encoder only, a smaller input embedding
    "bart": "seq2seq-lm",  # encoder-decoder, heads of another count in each stack
    "gptj": "causal-lm",  # parallel attention and MLP, rotary on part of each head
    "phi": "causal-lm",  # half of each head rotated: fitted at the head widths where that half is even
    "stablelm": "causal-lm",  # a quarter of each head rotated, likewise
    "rwkv": "causal-lm",  # recurrent, no attention
    "falcon_h1": "causal-lm",  # hybrid: attention and a Mamba-2 mixer side by side in every layer
    "nemotron_h": "causal-lm",  # hybrid: Mamba-2, attention and MLP layers in a pattern
    "mpnet": "masked-lm",  # encoder only, 32 relative-position buckets whatever the config says
    "helium": "causal-lm",  # an H × H output projection after heads of A·D: the costs need A·D = H
    "esmc": "masked-lm",  # query and key norms H wide on A·D channels: A·D = H too
    "m2m_100": "seq2seq-lm",  # encoder-decoder, sinusoidal positions, LayerDrop by default (every layer counted)
    "prophetnet": "seq2seq-lm",  # relative positions projected twice per call: the main stream, the predicted ones
    "funnel": "masked-lm",  # encoder blocks each at the last one's length pooled to half, rounded up
    "convbert": "base",  # a convolution beside attention, over ⌊A/head_ratio⌋ heads (or 1): a computed width
}
#: how many times the generator's small widths the checked model's are
SCALE = 3
#: keys a config.json of a type gives beside its sizes (ESM's default leaves null what its checkpoints set)
GIVEN = {"esm": {"emb_layer_norm_before": False, "pad_token_id": 1, "mask_token_id": 2},
         # the costs count every layer; the real model in training mode would skip 5% of them at random
         "m2m_100": {"encoder_layerdrop": 0.0, "decoder_layerdrop": 0.0}}


def _config(model_type: str, cls: str) -> dict:
    """A config.json of three times the small widths the generator's check used, as many layers (a trace on the
    CPU costs time per layer)."""
    costs = entries(model_type)[cls]["costs"]
    config = {"model_type": model_type, **{k: v if "layer" in k or v < 3 else v * SCALE  # 1 dense layer stays 1
                                           for k, v in costs["check"]["values"].items()}, **GIVEN.get(model_type, {})}
    for left, _, right in (text.partition(" = ") for text in costs["relations"]):
        if right and "*" in left:  # a product the forward pass needs (Helium's A·D = H): solved for the right
            config[right] = math.prod(config[n] for n in left.split("*"))
        elif right and right not in config:  # a field no shape follows, equal to a size (MLA's key/value heads)
            config[right] = config[left]
    return config


def _lengths(m) -> tuple[int, int]:
    """Two lengths: 5, and 12 or past the longest sliding window."""
    windows = [kept for kept, _ in m.kv_cache("fp32")._sizes.windows]
    return 5, max([12, *(w + 3 for w in windows)])


def _real(model_type: str, cls: str, config: dict):
    entry = entries(model_type)[cls]
    built = transformers.AutoConfig.for_model(model_type, **{k: v for k, v in config.items() if k != "model_type"})
    return real(entry["model_class"], built)


def _inputs(module, seq: int, batch: int) -> dict:
    ids = token_ids(module.config.get_text_config().vocab_size, seq, batch)
    return {"input_ids": ids, **({"decoder_input_ids": ids} if module.config.is_encoder_decoder else {})}


def _held_bytes(module, inputs: dict) -> int:
    """Bytes of every tensor the cache of a ``use_cache=True`` forward holds, layer by layer (keys and values,
    a state-space layer's states, an encoder-decoder's cross-attention part)."""
    parameters = inspect.signature(module.forward).parameters.values()
    if not any(p.name == "use_cache" or p.kind == p.VAR_KEYWORD for p in parameters):
        return 0  # an encoder: no cache
    with torch.no_grad():
        cache = getattr(module(**inputs, use_cache=True), "past_key_values", None)
    if cache is None:
        return 0
    parts = [cache.self_attention_cache, cache.cross_attention_cache] if hasattr(cache, "cross_attention_cache") \
        else [cache]
    total = 0
    for part in parts:
        for layer in part.layers:
            for value in vars(layer).values():
                values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
                total += sum(t.numel() * t.element_size() for t in values
                             if isinstance(t, torch.Tensor) and t.dim() > 0)
    return total


def assert_costs_are_the_real_models(m, module, runs, inputs=None) -> None:
    """``m``'s count, forward and training FLOPs and cache bytes equal ``module``'s (a tiny real model under
    FlopCounterMode, its cache held after a ``use_cache=True`` pass) at each ``(seq, batch)`` of ``runs``;
    ``inputs(seq, batch)`` gives the inputs where the token ids are not :func:`_inputs`'s."""
    assert m.count == sum(p.numel() for p in module.parameters())
    for seq, batch in runs:
        given = inputs(seq, batch) if inputs else _inputs(module, seq, batch)
        flops = m.flops(seq, batch)
        assert (flops.forward, flops.training) == counted(module, given), (seq, batch)
        assert m.kv_cache("fp32", seq, batch).total == _held_bytes(module, given), (seq, batch)


@pytest.mark.parametrize("model_type", SAMPLE)
def test_shipped_costs_equal_a_tiny_real_model(model_type):
    cls = SAMPLE[model_type]
    config = _config(model_type, cls)
    m = inferred_model(config, head=cls)
    assert_costs_are_the_real_models(m, _real(model_type, cls, config), zip(_lengths(m), (2, 1)))


def test_every_shipped_cost_was_checked_against_a_tiny_real_model():
    """No class ships FLOPs or a cache that PyTorch's counter never confirmed on a real model of it (the meta traces
    they were fitted on share the modeling code's assumptions; a real forward does not)."""
    with open(DATA, encoding="utf-8") as fh:
        shipped = [e for e in json.load(fh)["formulas"] if (e.get("costs") or {}).get("exact")]
    unchecked = [(e["model_type"], e["class"], e["costs"].get("check", {}).get("reason")) for e in shipped
                 if not e["costs"].get("check", {}).get("passed")]
    assert len(shipped) > 350 and not unchecked


def test_every_exact_class_ships_exact_costs_or_the_one_line_reason_they_are_not():
    """docs/inferred.md shows a class's costs reason to users and the reader refuses its FLOPs with it: an exact
    count whose costs are missing, or refused without a reason, would say nothing of why."""
    with open(DATA, encoding="utf-8") as fh:
        exact = [e for e in json.load(fh)["formulas"] if e["exact"]]
    silent = [(e["model_type"], e["class"]) for e in exact
              if not (e.get("costs") or {}).get("exact") and not (e.get("costs") or {}).get("reason", "").strip()]
    multiline = [(e["model_type"], e["class"]) for e in exact if "\n" in (e.get("costs") or {}).get("reason", "")]
    assert len(exact) > 500 and not silent and not multiline


def test_every_sampled_type_has_exact_costs_checked_by_the_generator_too():
    for model_type, cls in SAMPLE.items():
        costs = entries(model_type)[cls]["costs"]
        assert costs["exact"] and costs["check"]["passed"], model_type


# -- what the data does not hold is refused, the weights' bytes stand ---------------------------------------

def _arcee(**changes):
    return inferred_model({**_config("arcee", "causal-lm"), **changes}, head="causal-lm")


def test_a_traced_model_refuses_the_conventions_its_counter_cannot_honour():
    with pytest.raises(SymparamsError, match="--causal and --elementwise are not inferred"):
        _arcee().flops(9, causal=True)


def test_the_state_space_activations_are_refused_with_their_reason_and_its_cache_holds_states():
    m = inferred_model(_config("mamba", "causal-lm"), head="causal-lm")
    with pytest.raises(SymparamsError, match="the activations are not known: layers keep a recurrent state"):
        m.memory("bf16", "adam", seq=64).total
    kv = m.kv_cache("bf16", seq=64)
    assert kv.per_token == 0 and kv.state > 0 and kv.total == kv.state


def test_a_class_without_costs_keeps_its_weights_bytes_and_refuses_the_rest(monkeypatch):
    entry, config = entries("arcee")["causal-lm"], _config("arcee", "causal-lm")
    monkeypatch.setitem(entries("arcee"), "causal-lm", {**entry, "costs": {"exact": False, "reason": "planted"}})
    from symparams.families import inferred

    inferred.family.cache_clear()
    try:
        m = inferred_model(config, head="causal-lm")
        memory = m.memory("bf16", "adam")
        assert (memory.weights, memory.gradients, memory.optimizer) == (2 * m.count, 2 * m.count, 12 * m.count)
        assert memory.to_dict()["kv_cache_per_token"] is None
        with pytest.raises(SymparamsError, match=r"the FLOPs are not known: .*\(planted\)"):
            m.flops(9)
        with pytest.raises(SymparamsError, match=r"the KV cache is not known: .*\(planted\)"):
            m.memory("bf16", "none", seq=9).total
    finally:
        inferred.family.cache_clear()


def test_a_config_outside_the_costs_conditions_keeps_its_count_and_refuses_its_costs():
    """Sarvam's forward pass was traced with its routing groups at the default (no shape follows them, and other
    values do not run with the sizes drawn): another value is refused, the count stands."""
    config = _config("sarvam_mla", "causal-lm")
    m = inferred_model({**config, "topk_group": 2}, head="causal-lm")
    assert m.count == inferred_model(config, head="causal-lm").count
    with pytest.raises(SymparamsError, match="outside the inferred costs' conditions: the inferred costs hold only "
                                             "for topk_group = 1"):
        m.flops(9)


def test_costs_that_need_two_fields_equal_refuse_a_config_where_they_differ():
    """DeepSeek-V3.2's attention repeats its keys heads // key_value_heads times after expanding them to every
    head: only equal counts run.  The count holds either way; the costs are refused, and with the key left out
    too, where the class's default (128 key/value heads) differs from the heads."""
    config = _config("deepseek_v32", "causal-lm")
    heads = config["num_attention_heads"]
    assert inferred_model(config, head="causal-lm").flops(9).forward > 0
    for changed in ({"num_key_value_heads": 2 * heads}, {"num_key_value_heads": None}):
        m = inferred_model({**config, **changed}, head="causal-lm")
        assert m.count == inferred_model(config, head="causal-lm").count
        with pytest.raises(SymparamsError, match="the inferred costs need num_attention_heads = num_key_value_heads"):
            m.flops(9)


def test_costs_that_need_a_product_of_two_fields_refuse_a_config_that_breaks_it():
    """Helium's output projection is H × H after A heads of D channels: transformers' forward runs only where
    A·D = H, so the costs state it; a head width that breaks it keeps its count and has its FLOPs refused."""
    config = _config("helium", "causal-lm")
    assert config["head_dim"] * config["num_attention_heads"] == config["hidden_size"]
    wider = {**config, "head_dim": 2 * config["head_dim"]}
    m = inferred_model(wider, head="causal-lm")
    assert m.count == sum(p.numel() for p in _real("helium", "causal-lm", wider).parameters())
    with pytest.raises(SymparamsError, match=r"the inferred costs need head_dim\*num_attention_heads = hidden_size "
                                             r"\(head_dim\*num_attention_heads is \d+, hidden_size is \d+\)"):
        m.flops(9)


#: a Bamba at sizes no fit or check used: 6 Mamba heads of 64 channels, twice the width of 192 (as its config
#: requires), a state of 5, no attention layer (the default), two layers
BAMBA = {"model_type": "bamba", "vocab_size": 11, "hidden_size": 192, "intermediate_size": 13, "num_hidden_layers": 2,
         "mamba_n_heads": 6, "mamba_d_head": 64, "mamba_expand": 2, "mamba_d_state": 5, "mamba_n_groups": 1}


def test_bamba_costs_equal_a_tiny_real_model_and_refuse_heads_off_the_proportion_they_were_traced_at():
    """Bamba's hidden width moves only with its Mamba heads (heads times their width is twice the width): the
    costs were traced where the heads stay a multiple of a 32nd of the width, as at its default (4,096 over 128).
    A config with fewer, wider heads builds and keeps its count; its costs are refused with that relation."""
    m = inferred_model(BAMBA, head="causal-lm")
    module = _real("bamba", "causal-lm", BAMBA)
    # transformers' own cache cannot answer its length with no attention layer (it raises): the mask is built as
    # for a cache that has seen nothing, which is what it holds before the pass
    with shapes_only():
        assert_costs_are_the_real_models(m, module, ((5, 2), (12, 1)))
    wider = {**BAMBA, "hidden_size": 128, "mamba_n_heads": 2, "mamba_d_head": 128}
    off = inferred_model(wider, head="causal-lm")
    assert off.count == sum(p.numel() for p in _real("bamba", "causal-lm", wider).parameters())
    with pytest.raises(SymparamsError, match=r"the inferred costs need hidden_size divides 32\*mamba_n_heads "
                                             r"\(hidden_size is 128, 32\*mamba_n_heads is 64\)"):
        off.flops(9)


#: a Gemma 4 text model at sizes no fit or check used: five sliding layers of heads 6 wide and two full ones of
#: its fixed global width, a window of 7 tokens
GEMMA4 = {"model_type": "gemma4_text", "vocab_size": 18, "hidden_size": 15, "intermediate_size": 13,
          "num_hidden_layers": 7, "head_dim": 6, "num_attention_heads": 6, "num_key_value_heads": 2,
          "hidden_size_per_layer_input": 4, "vocab_size_per_layer_input": 18, "sliding_window": 7,
          "layer_types": ["sliding_attention"] * 3 + ["full_attention"] + ["sliding_attention"] * 2
          + ["full_attention"]}


def test_gemma4_cache_is_held_once_where_its_layers_are_grouped_under_a_block_of_no_name():
    """Gemma 4's base model groups its layers by kind under a block that adds no name to its path, the root's:
    the cache's layers, attached at that path, were attached to both blocks and held twice (43,151,360 elements
    for transformers' 21,575,680 after 301 tokens of the default model).  Its FLOPs and cache are PyTorch's."""
    m = inferred_model(GEMMA4, head=None)
    assert_costs_are_the_real_models(m, _real("gemma4_text", "base", GEMMA4), ((5, 2), (12, 1)))


def test_costs_refuse_a_head_width_that_is_not_whole_where_transformers_does_not_run():
    """ConvBERT's heads are H/(2·kept) wide, kept = ⌊A/head_ratio⌋: its count builds at H = 54 and 6 heads kept,
    but its forward pass fails there (the heads' 48 channels meet an output layer of 54), and the costs, traced
    where the width is whole, would still give a figure at 4.5: refused, the count kept."""
    config = {**_config("convbert", "base"), "hidden_size": 54, "embedding_size": 54, "num_attention_heads": 12}
    module = _real("convbert", "base", config)
    m = inferred_model(config, head="base")
    assert m.count == sum(p.numel() for p in module.parameters())
    with pytest.raises(RuntimeError):
        module(**_inputs(module, 5, 1))
    with pytest.raises(SymparamsError, match=r"key width of encoder.layer.\*.attention.self, "
                                             r"H/\(2\*attention_heads_kept\), comes to 9/2 here, not a whole number"):
        m.flops(5)


#: a DeepSeek-V3 at sizes the generator's fit and check never used: latent ranks, rotary and plain parts of each
#: head and a value width all different, two routing groups, one dense layer before two of experts
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "vocab_size": 11, "hidden_size": 15, "intermediate_size": 13,
               "moe_intermediate_size": 7, "num_hidden_layers": 3, "first_k_dense_replace": 1,
               "num_attention_heads": 5, "num_key_value_heads": 5, "n_shared_experts": 2, "n_routed_experts": 6,
               "n_group": 2, "topk_group": 1, "num_experts_per_tok": 2, "kv_lora_rank": 7, "q_lora_rank": 9,
               "qk_rope_head_dim": 4, "qk_nope_head_dim": 5, "v_head_dim": 3, "head_dim": 4}


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_deepseek_v3_costs_equal_a_tiny_real_model(cls):
    """Multi-head latent attention: the score product's width is D_n + D_r, the weighted sum's D_v, the cache the
    latent R_kv + D_r, and the experts count only the k a token is routed to.  The rotary embedding reads
    head_dim, which must equal D_r: a file whose head_dim differs is refused, and so is one that leaves it out
    with D_r other than the class's default 64 (the costs read the class default; the config would compute D_r)."""
    head = None if cls == "base" else cls
    left_out = {k: v for k, v in DEEPSEEK_V3.items() if k != "head_dim"}
    for config in ({**DEEPSEEK_V3, "head_dim": 8}, left_out):
        with pytest.raises(SymparamsError, match="the inferred costs need head_dim = qk_rope_head_dim"):
            inferred_model(config, head=head).flops(5)
    m = inferred_model(DEEPSEEK_V3, head=head)
    assert_costs_are_the_real_models(m, _real("deepseek_v3", cls, DEEPSEEK_V3), ((5, 2), (12, 1)))


def test_funnel_costs_refuse_an_attention_they_were_not_traced_with():
    """Funnel's "factorized" attention multiplies its relative positions otherwise than the default
    "relative_shift" (PyTorch's counter: 831,232 forward FLOPs against 766,336 at H = 16, 2 heads of 8, 9 tokens,
    batch 2): the costs traced with the default hold only for it; the count holds either way."""
    config = {**_config("funnel", "masked-lm"), "tie_word_embeddings": True}  # given: a text key is changed
    assert inferred_model(config, head="masked-lm").flops(9).forward > 0
    factorized = inferred_model({**config, "attention_type": "factorized"}, head="masked-lm")
    assert factorized.count == inferred_model(config, head="masked-lm").count
    with pytest.raises(SymparamsError, match='hold only for attention_type = "relative_shift"'):
        factorized.flops(9)


def test_convbert_masked_lm_costs_equal_a_tiny_real_model_where_its_tied_count_holds_only_the_embedding_width():
    """ConvBERT's masked-lm needs embedding_size = hidden_size; with tied embeddings its count is written in E
    alone, while its costs were fitted where the two never differ and name H: the reader lets E stand for H, so
    the FLOPs are numbers, and they are the real model's."""
    config = _config("convbert", "masked-lm")
    assert config["embedding_size"] == config["hidden_size"] and config.get("tie_word_embeddings", True)
    m = inferred_model(config, head="masked-lm")
    assert_costs_are_the_real_models(m, _real("convbert", "masked-lm", config), zip(_lengths(m), (2, 1)))


def _table_cells():
    """scripts/inferred_table.py's cells of a class (a script, not part of the package)."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "inferred_table.py"
    spec = importlib.util.spec_from_file_location("inferred_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.cost_cells


@pytest.mark.parametrize("model_type, cls", [("roformer", "masked-lm"), ("convbert", "base"), ("arcee", "causal-lm")])
def test_the_coverage_tables_memory_cell_says_what_memory_does_of_the_activations(model_type, cls):
    """RoFormer and ConvBERT count by their embedding width E, no H, and the activations formula reads H: `memory`
    refuses their activations, and docs/inferred.md says so with the same reason; Arcee's count has H, and both
    give them."""
    cell = _table_cells()(entries(model_type)[cls])[2]
    m = inferred_model(_config(model_type, cls), head=None if cls == "base" else cls)
    reason = untraced(m.tree).get("activations")
    assert cell.endswith(", activations" if reason is None else f", no activations: {reason}"), cell



def _nested(model_type: str, cls: str) -> dict:
    """:func:`_config` for a type whose sizes are in sub-configs (``encoder.hidden_size``): a config.json with
    them nested, three times the generator's small widths, as many layers."""
    config: dict = {"model_type": model_type}
    for key, value in entries(model_type)[cls]["costs"]["check"]["values"].items():
        *parts, name = key.split(".")
        place = config
        for part in parts:
            place = place.setdefault(part, {})
        place[name] = value if "layer" in name or value < 3 else value * SCALE
    return config


@pytest.mark.parametrize("model_type", ["t5gemma", "granite_speech"])
def test_costs_verified_with_several_layer_counts_equal_a_tiny_real_model(model_type):
    """T5Gemma's two stacks and Granite Speech's encoder, projector and language model each have a layer count:
    their costs were verified on configurations whose layer counts were drawn again until a trace held them."""
    config = _nested(model_type, "base")
    m = inferred_model(config)
    assert_costs_are_the_real_models(m, _real(model_type, "base", config), zip(_lengths(m), (2, 1)))


#: a Llama 4 text model at sizes the generator never used: 6 layers, every 3rd one full attention (no rotary),
#: the others attending in chunks of 7 tokens; experts on every other layer
LLAMA4_TEXT = {"model_type": "llama4_text", "vocab_size": 13, "hidden_size": 24, "intermediate_size": 10,
               "intermediate_size_mlp": 14, "num_hidden_layers": 6, "num_attention_heads": 6,
               "num_key_value_heads": 2, "head_dim": 4, "num_local_experts": 3, "num_experts_per_tok": 1,
               "interleave_moe_layer_step": 2, "attention_chunk_size": 7, "no_rope_layer_interval": 3}


@pytest.mark.parametrize("written", ["left out", "as transformers writes it"])
def test_llama4_chunked_layers_cache_their_chunk_as_transformers_holds_it(written):
    """Llama 4's chunked layers keep the last ``attention_chunk_size − 1`` tokens, as a sliding window does
    (transformers gives both the same cache layer); its full layers, one in ``no_rope_layer_interval``, keep
    every token.  The costs held the chunked layers as sliding ones, and refused every config.json that lists
    them by name, their default's too; the list given or left out, they equal transformers' at 5 tokens and at
    12, past the chunk."""
    config = dict(LLAMA4_TEXT)
    if written != "left out":
        config["layer_types"] = transformers.Llama4TextConfig(**config).layer_types
        assert config["layer_types"].count("chunked_attention") == 4
    m = inferred_model(config, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("llama4_text", "causal-lm", LLAMA4_TEXT), ((5, 2), (12, 1)))


#: a Qwen3-Next at sizes the generator never used: 3 gated-delta-net layers and one of full attention, an expert
#: block on every layer (decoder_sparse_step 1, its class's default and its released checkpoints')
QWEN3_NEXT = {"model_type": "qwen3_next", "vocab_size": 13, "hidden_size": 16, "intermediate_size": 10,
              "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 6,
              "linear_conv_kernel_dim": 3, "linear_key_head_dim": 4, "linear_value_head_dim": 6,
              "linear_num_key_heads": 2, "linear_num_value_heads": 4, "moe_intermediate_size": 6,
              "shared_expert_intermediate_size": 5, "num_experts": 4, "num_experts_per_tok": 2,
              "layer_types": ["linear_attention"] * 3 + ["full_attention"]}


def test_qwen3_next_costs_hold_at_its_own_sparse_step_and_refuse_another():
    """The parameter discovery lifts ``decoder_sparse_step`` from 1 to 2 (dense layers beside the sparse ones);
    the costs cannot move it (every other value builds another structure) and held it where the discovery had
    it, 2, refusing the default config.  They are traced at the class's own 1, equal transformers' there, and
    refuse 2 in one line."""
    m = inferred_model(QWEN3_NEXT, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("qwen3_next", "causal-lm", QWEN3_NEXT), ((5, 2), (12, 1)))
    with pytest.raises(SymparamsError, match="the inferred costs hold only for decoder_sparse_step = 1"):
        inferred_model({**QWEN3_NEXT, "decoder_sparse_step": 2}, head="causal-lm").flops(5)


#: a ZAYA at sizes the generator never used: an odd head width over an even number of key/value heads, where its
#: value projections' G·D//2 outputs are not G·⌊D/2⌋ (5, not 4)
ZAYA = {"model_type": "zaya", "vocab_size": 13, "hidden_size": 12, "num_hidden_layers": 4, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 5, "moe_intermediate_size": 7, "num_experts": 3,
        "router_hidden_size": 6, "cca_time0": 2, "cca_time1": 2}


@pytest.mark.parametrize("written", ["left out", "as transformers writes it"])
def test_zaya_costs_equal_a_tiny_real_model_at_an_odd_head_width(written):
    """The costs' value width was fitted where D is even, as one term of the parameters' ``⌊G·D/2⌋``; the whole
    dimension is taken now.  A config.json that lists its layers' kind (``hybrid``, every one) was refused, the
    data holding no rule for how many there are: they are ``num_hidden_layers``."""
    config = {**ZAYA, **({"layer_types": ["hybrid"] * 4} if written != "left out" else {})}
    m = inferred_model(config, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("zaya", "causal-lm", ZAYA), ((5, 2), (12, 1)))


def test_recurrent_gemma_costs_equal_a_tiny_real_model_at_an_odd_mlp_width():
    """RecurrentGemma's MLP is ``intermediate_size // 2`` wide: at an odd intermediate size, 9, it is 4."""
    config = {"model_type": "recurrent_gemma", "vocab_size": 13, "hidden_size": 12, "intermediate_size": 9,
              "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 3,
              "lru_width": 8, "conv1d_width": 3, "attention_window_size": 7}
    m = inferred_model(config, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("recurrent_gemma", "causal-lm", config), ((5, 2), (12, 1)))


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
def test_xlnet_costs_equal_a_tiny_real_model(cls):
    """XLNet's relative attention, its two-stream positions and segment biases.  Its attention weights are made
    by a constructor that ignores the meta device, and the wide verification sizes did not fit in memory: the
    costs were refused, verified on one configuration of eight."""
    config = {"model_type": "xlnet", "vocab_size": 13, "d_model": 30, "n_head": 5, "d_head": 6, "d_inner": 7,
              "n_layer": 2}
    head = None if cls == "base" else cls
    assert_costs_are_the_real_models(inferred_model(config, head=head), _real("xlnet", cls, config),
                                     ((5, 2), (12, 1)))


def test_mobilebert_costs_equal_a_tiny_real_model_with_several_layers_of_several_feed_forward_blocks():
    """MobileBERT runs ``num_feedforward_networks − 1`` stacked feed-forward blocks in every layer: L·(N − 1) of
    them.  Fitted on traces that moved one of the two at a time, the runs were a sum, L + N − 2 (up to constants),
    right only where one of them is 1: at 3 layers of 3 blocks it is the product that holds."""
    config = {"model_type": "mobilebert", "vocab_size": 13, "embedding_size": 10, "hidden_size": 24,
              "intermediate_size": 11, "intra_bottleneck_size": 8, "true_hidden_size": 8, "num_attention_heads": 4,
              "num_hidden_layers": 3, "num_feedforward_networks": 3, "max_position_embeddings": 20}
    m = inferred_model(config, head="masked-lm")
    assert_costs_are_the_real_models(m, _real("mobilebert", "masked-lm", config), ((5, 2), (12, 1)))


def test_jamba_cache_is_held_in_each_of_its_attention_layers_and_its_states_in_the_others():
    """Jamba's attention every ``attn_layer_period``-th layer from the ``attn_layer_offset``-th: two of eight here.
    The costs held its keys and values in one attention layer, as the fit's few-layer traces had, and the long
    check found 5,695,488 cache elements for transformers' 7,053,312; the count's attention instances hold."""
    config = {"model_type": "jamba", "vocab_size": 13, "hidden_size": 16, "intermediate_size": 7,
              "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2, "num_experts": 3,
              "num_experts_per_tok": 2, "attn_layer_period": 4, "attn_layer_offset": 1, "expert_layer_period": 2,
              "expert_layer_offset": 1, "mamba_d_state": 5, "mamba_d_conv": 3, "mamba_expand": 2,
              "mamba_dt_rank": 3, "use_mamba_kernels": False}
    m = inferred_model(config, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("jamba", "causal-lm", config), ((5, 2), (12, 1)))


def test_kimi_linear_costs_equal_a_tiny_real_model_with_three_full_attention_layers():
    """Kimi Linear's full attention is on every fourth layer from the fifth (⌈L/4⌉ − 1 of them), a linear
    attention with its recurrent state on the others; a dense MLP on the first, experts after.  The few-layer
    traces fitted the full layers' experts as ⌊(L + 1)/5⌋ and the linear layers' states as L less that, wrong
    at 13 layers (2 full, for 3) and at the default's 27; the count's instances, and the stack's layers less
    them, hold."""
    config = {"model_type": "kimi_linear", "vocab_size": 13, "pad_token_id": 0, "hidden_size": 12,
              "intermediate_size": 7, "moe_intermediate_size": 5, "num_hidden_layers": 13,
              "num_attention_heads": 3, "num_key_value_heads": 3, "kv_lora_rank": 5, "qk_nope_head_dim": 3,
              "qk_rope_head_dim": 4, "v_head_dim": 5, "linear_conv_kernel_dim": 3, "linear_head_dim": 4,
              "linear_num_heads": 3,
              "num_experts": 4, "num_experts_per_token": 2, "num_shared_experts": 1}
    m = inferred_model(config, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("kimi_linear", "causal-lm", config), ((5, 2), (12, 1)))


#: an ERNIE 4.5 MoE at sizes the generator never used: experts on every second layer from the second to the fifth of
#: six (layers 1 and 3), a dense MLP on the other four
ERNIE = {"model_type": "ernie4_5_moe", "vocab_size": 13, "hidden_size": 16, "intermediate_size": 7,
         "moe_intermediate_size": 5, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2,
         "moe_num_experts": 3, "moe_k": 2, "moe_num_shared_experts": 1, "moe_layer_start_index": 1,
         "moe_layer_end_index": 4, "moe_layer_interval": 2}


def test_ernie_costs_equal_a_tiny_real_model_with_experts_on_some_layers():
    """ERNIE 4.5's expert layers are those from ``moe_layer_start_index`` to ``moe_layer_end_index`` whose
    ``(i + 1)`` the interval divides; the dense MLPs run on the others, ``L + ⌊start/interval⌋ −
    ⌊(end + 1)/interval⌋`` of them.  The layer traces drew the last expert layer past the layers (where the count's
    formula does not hold), and the first one while the costs hold it: no fit was found.  The first expert layer
    is held at its class's default, 1 (other values build other structures at the few layers the costs move it
    at), and another is refused; fewer than 2 layers were never traced (one has no expert layer)."""
    m = inferred_model(ERNIE, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("ernie4_5_moe", "causal-lm", ERNIE), ((5, 2), (12, 1)))
    with pytest.raises(SymparamsError, match="the inferred costs hold only for moe_layer_start_index = 1"):
        inferred_model({**ERNIE, "moe_layer_start_index": 3}, head="causal-lm").flops(5)


#: a Flint at sizes the generator never used: full attention on layers 0, 1, 5, 9 and 10 of 11 (the first two,
#: every fourth from the second, the last), a window of 8 tokens on the other six
FLINT = {"model_type": "flint", "vocab_size": 13, "hidden_size": 12, "intermediate_size": 7,
         "moe_intermediate_size": 5, "shared_expert_intermediate_size": 6, "num_hidden_layers": 11,
         "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4, "num_experts": 3,
         "num_experts_per_tok": 2, "sliding_window": 8}


def test_flint_cache_holds_its_window_on_its_sliding_layers_and_refuses_fewer_layers_than_traced():
    """Flint's sliding layers are ``L − 2 − ⌊(L + 1)/4⌋``: fitted in the layer count alone (with the sparse step's
    floors beside it, the basis had outgrown the layer counts traced).  The traces kept 4 layers or more (with 2
    there is no expert layer, another structure; the count refuses fewer than 3): fewer are refused, never
    traced."""
    m = inferred_model(FLINT, head="causal-lm")
    assert_costs_are_the_real_models(m, _real("flint", "causal-lm", FLINT), ((5, 2), (12, 1)))
    with pytest.raises(SymparamsError, match="the inferred costs hold only for num_hidden_layers ≥ 4"):
        inferred_model({**FLINT, "num_hidden_layers": 3}, head="causal-lm").flops(5)


def test_a_class_whose_forward_fails_with_its_cache_has_flops_and_refuses_its_cache():
    """BlenderbotForCausalLM sizes its cache by ``num_hidden_layers``, the encoder's layer count, and runs the
    decoder's: with more decoder layers (the default's 24 for 2) a forward with ``use_cache=True`` fails in
    transformers.  Its FLOPs, traced without a cache, are PyTorch's; its cache is refused in one line."""
    config = {"model_type": "blenderbot", "vocab_size": 13, "d_model": 16, "decoder_attention_heads": 4,
              "decoder_ffn_dim": 11, "decoder_layers": 3, "encoder_layers": 2, "max_position_embeddings": 20}
    module = _real("blenderbot", "causal-lm", config)
    m = inferred_model(config, head="causal-lm")
    assert m.count == sum(p.numel() for p in module.parameters())
    for seq, batch in ((5, 2), (12, 1)):
        flops = m.flops(seq, batch)
        assert (flops.forward, flops.training) == counted(module, _inputs(module, seq, batch))
    with pytest.raises(IndexError), torch.no_grad():
        module(**_inputs(module, 5, 1), use_cache=True)
    with pytest.raises(SymparamsError, match=r"the KV cache is not known: with use_cache=True the forward fails "
                                             r"\(IndexError: list index out of range\) at the sizes traced"):
        m.kv_cache("fp16", 5, 1).total
