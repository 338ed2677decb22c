"""The cache as transformers holds it: sliding-window layers against ``use_cache=True`` forwards of tiny models.

Every family whose transformers model has sliding layers (Mistral, Mixtral,
Phi-3, StarCoder 2, Qwen 2, Qwen 3, Qwen2-MoE, Qwen3-MoE, Gemma 2, Gemma 3)
gets a tiny config.json with a window of W = 5 tokens, read by symparams as
a user's file and built by transformers from the same keys (CPU, eager
attention and experts, random fp32 weights).  After a forward pass over s
tokens the cache transformers returns holds, summed over every key and
value tensor, exactly ``KVCache(fp32, s, b).total`` bytes: at s below the
window's W − 1 = 4 kept tokens, at it, at W and past it, and after one more
token decoded on top of that cache.  The same config as transformers writes
it back (``to_dict()``: ``layer_types`` spelled out, Qwen's window set to
null when it is off) must read to the same cache.

The layer patterns are chosen so that each family's rule matters: Qwen 2's
sliding layers start at ``max_window_layers``, Qwen2-MoE's are the even
ones below it, Gemma 2 alternates, Gemma 3 puts a global layer every
``sliding_window_pattern``.
"""

from __future__ import annotations

import pytest
import torch
import transformers

from symparams import SymparamsError, model
from symparams.families.registry import family
from tests.reference import flops as ref

pytestmark = pytest.mark.crosscheck

W = 5  # every window: a sliding layer keeps its last W - 1 = 4 tokens
BATCH = 2
SIZES = dict(vocab_size=97, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
             pad_token_id=0, bos_token_id=1, eos_token_id=2)
MOE = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16)

#: case → config.json (model_type and keys beyond SIZES), and how many of its layers slide (read off the
#: config class's rule by hand)
CASES = {
    "mistral": (dict(model_type="mistral", num_hidden_layers=2, sliding_window=W), 2),
    "mixtral": (dict(model_type="mixtral", num_hidden_layers=2, sliding_window=W, num_local_experts=4,
                     num_experts_per_tok=2), 2),
    "phi3": (dict(model_type="phi3", num_hidden_layers=2, sliding_window=W), 2),
    "starcoder2": (dict(model_type="starcoder2", num_hidden_layers=2, sliding_window=W), 2),
    # layers 1 and 2 of 3 slide (from max_window_layers = 1 on)
    "qwen2": (dict(model_type="qwen2", num_hidden_layers=3, use_sliding_window=True, sliding_window=W,
                   max_window_layers=1), 2),
    # layer 2 of 3
    "qwen3": (dict(model_type="qwen3", num_hidden_layers=3, head_dim=8, use_sliding_window=True,
                   sliding_window=W, max_window_layers=2), 1),
    # the even layers below 3: 0 and 2 of 4
    "qwen2_moe": (dict(model_type="qwen2_moe", num_hidden_layers=4, use_sliding_window=True, sliding_window=W,
                       max_window_layers=3, shared_expert_intermediate_size=24, **MOE), 2),
    "qwen3_moe": (dict(model_type="qwen3_moe", num_hidden_layers=2, head_dim=8, use_sliding_window=True,
                       sliding_window=W, **MOE), 2),
    # layers 0 and 2 of 3
    "gemma2": (dict(model_type="gemma2", num_hidden_layers=3, head_dim=8, sliding_window=W), 2),
    # all but layers 2 and 5 of 7
    "gemma3_text": (dict(model_type="gemma3_text", num_hidden_layers=7, head_dim=8, sliding_window=W,
                         sliding_window_pattern=3), 5),
    # bidirectional attention halves the window: 8 // 2 + 1 = 5
    "gemma3_text-bidirectional": (dict(model_type="gemma3_text", num_hidden_layers=2, head_dim=8,
                                       sliding_window=8, use_bidirectional_attention=True), 2),
}

#: s below the W - 1 kept tokens, at them, at the window and past it
LENGTHS = (3, W - 1, W, 2 * W - 1)


def config_of(data: dict):
    keys = {k: v for k, v in {**SIZES, **data}.items() if k != "model_type"}
    return transformers.AutoConfig.for_model(data["model_type"], **keys)


@pytest.fixture(scope="session", params=list(CASES))
def case(request):
    """(name, config.json, sliding layers, the tiny causal LM transformers builds from it)."""
    data, sliding = CASES[request.param]
    data = {**SIZES, **data}
    cls = family(data["model_type"]).name
    module = ref.real(_causal_lm(cls), config_of(data))
    module.eval()
    return request.param, data, sliding, module


def _causal_lm(name: str) -> str:
    from symparams.families import gemma, mistral, mixtral, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, starcoder2

    classes = {"mistral": mistral.CLASSES, "mixtral": mixtral.CLASSES, "phi3": phi3.CLASSES,
               "starcoder2": starcoder2.CLASSES, "qwen2": qwen2.CLASSES, "qwen3": qwen3.CLASSES,
               "qwen2_moe": qwen2_moe.CLASSES, "qwen3_moe": qwen3_moe.CLASSES, "gemma2": gemma.CLASSES_2,
               "gemma3_text": gemma.CLASSES_3}
    return classes[name]["causal-lm"][0]


def held(module, seq: int, decode: bool = False) -> int:
    """Bytes the cache holds after a forward over ``seq`` tokens (``decode``: and one more token after it)."""
    ids = ref.token_ids(97, seq, BATCH)
    with torch.no_grad():
        out = module(input_ids=ids, use_cache=True)
        if decode:
            out = module(input_ids=ref.token_ids(97, 1, BATCH, seed=2), cache=out.cache, use_cache=True)
    return ref.tensor_bytes(out.cache)


def test_every_family_with_sliding_layers_is_checked():
    from symparams.families.registry import all_families

    windowed = {name for name, fam in all_families().items() if any(sw.name == "sliding_window"
                                                                     for sw in fam.switches)}
    assert windowed == {data["model_type"] for data, _ in CASES.values()}


def test_the_held_cache_is_what_transformers_holds(case):
    name, data, sliding, module = case
    m = model(data, head="causal-lm")
    for seq in LENGTHS:
        assert m.kv_cache("fp32", seq=seq, batch=BATCH).total == held(module, seq), (name, seq)
    # one token decoded after a prefill of 2W - 1: the window slides on
    assert m.kv_cache("fp32", seq=2 * W, batch=BATCH).total == held(module, 2 * W - 1, decode=True)


def test_the_sliding_layers_are_the_config_classes(case):
    # written by hand: each of the `sliding` layers keeps W - 1 tokens past the window, the others all of them
    name, data, sliding, module = case
    m = model(data)
    layers, per_layer = data["num_hidden_layers"], 2 * 2 * data.get("head_dim", 8) * 4  # K, V · G · D · fp32
    seq = 3 * W
    assert m.kv_cache("fp32", seq=seq).total == per_layer * ((layers - sliding) * seq + sliding * (W - 1))
    assert m.kv_cache("fp32", seq=seq).windows == ((W - 1, sliding * per_layer),)


def test_the_config_as_transformers_writes_it_reads_the_same(case):
    # to_dict(): layer_types spelled out (Gemma, Qwen 2/3, Qwen2-MoE), Qwen's unused window nulled
    name, data, _, _ = case
    written = config_of(data).to_dict()
    for seq in LENGTHS:
        assert (model(written).kv_cache("fp32", seq=seq).total
                == model(data).kv_cache("fp32", seq=seq).total), (name, seq)


# -- configs without a window, or with one transformers' cache treats otherwise -----------------------

UNBOUNDED = {
    "mistral-null": dict(model_type="mistral", num_hidden_layers=2, sliding_window=None),  # Mistral 7B v0.2 on
    "mistral-window-1": dict(model_type="mistral", num_hidden_layers=2, sliding_window=1),  # [-0:] keeps all
    "qwen2-off": dict(model_type="qwen2", num_hidden_layers=2, use_sliding_window=False, sliding_window=W),
    "qwen2_moe-off": dict(model_type="qwen2_moe", num_hidden_layers=2, use_sliding_window=False, sliding_window=W,
                          shared_expert_intermediate_size=24, **MOE),
    "qwen2-from-past-the-end": dict(model_type="qwen2", num_hidden_layers=2, use_sliding_window=True,
                                    sliding_window=W, max_window_layers=2),
}


@pytest.mark.parametrize("name", list(UNBOUNDED))
def test_configs_whose_cache_keeps_every_token(name):
    data = {**SIZES, **UNBOUNDED[name]}
    module = ref.real(_causal_lm(family(data["model_type"]).name), config_of(data))
    m = model(data, head="causal-lm")
    assert m.kv_cache("fp32").windows == ()
    for seq in (W - 1, 2 * W):
        assert m.kv_cache("fp32", seq=seq, batch=BATCH).total == held(module, seq)
        assert m.kv_cache("fp32", seq=seq, batch=BATCH).total == seq * BATCH * m.kv_cache("fp32").per_token


def test_a_given_layer_pattern_is_read_by_the_rule_that_makes_it():
    # Gemma 2 builds whatever layer_types the config gives: every third layer global is Gemma 3's rule at k = 3
    data = {**SIZES, "model_type": "gemma2", "num_hidden_layers": 6, "head_dim": 8, "sliding_window": W,
            "layer_types": ["sliding_attention", "sliding_attention", "full_attention"] * 2}
    m = model(data, head="causal-lm")
    assert m.switches["sliding_window_pattern"] == 3
    module = ref.real("Gemma2ForCausalLM", config_of(data))
    assert m.kv_cache("fp32", seq=2 * W, batch=BATCH).total == held(module, 2 * W)


@pytest.mark.parametrize("data,key", [
    # a pattern no rule of the family makes
    (dict(model_type="gemma2", num_hidden_layers=3, layer_types=["full_attention", "sliding_attention",
                                                                 "sliding_attention"]), "layer_types"),
    (dict(model_type="mistral", num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"]),
     "layer_types"),
    (dict(model_type="qwen2", num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"],
          use_sliding_window=True), "layer_types"),
    # sliding layers without a window: transformers cannot build their cache
    (dict(model_type="qwen2", num_hidden_layers=2, layer_types=["sliding_attention"] * 2), "sliding_window"),
    (dict(model_type="gemma2", num_hidden_layers=2, sliding_window=None), "sliding_window"),
    # layer types symparams does not model, and a list of the wrong length
    (dict(model_type="gemma2", num_hidden_layers=2, layer_types=["linear_attention"] * 2), "layer_types"),
    (dict(model_type="gemma2", num_hidden_layers=2, layer_types=["full_attention"]), "layer_types"),
    # a family whose model never slides: transformers' cache would, while its attention sees every token
    (dict(model_type="llama", num_hidden_layers=2, sliding_window=W), "sliding_window"),
    (dict(model_type="gemma", num_hidden_layers=2, attention_chunk_size=W), "attention_chunk_size"),
    # Qwen2-MoE's even layers among dense layers
    (dict(model_type="qwen2_moe", num_hidden_layers=4, use_sliding_window=True, sliding_window=W,
          mlp_only_layers=[1], **MOE), "max_window_layers"),
])
def test_a_pattern_the_family_cannot_express_is_refused_by_name(data, key):
    with pytest.raises(SymparamsError) as info:
        model({**SIZES, **data}).kv_cache("fp32", seq=W)
    assert key in str(info.value) and "\n" not in str(info.value)


def test_transformers_builds_the_stray_window_the_llama_family_refuses():
    # why the refusal: LlamaConfig keeps the stray key, and its DynamicCache slides
    data = {**SIZES, "model_type": "llama", "num_hidden_layers": 2, "sliding_window": W}
    module = ref.real("LlamaForCausalLM", config_of(data))
    assert held(module, 2 * W) == 2 * BATCH * (W - 1) * 2 * 2 * 8 * 4
