"""The cache held after s tokens (symparams.analysis.cache) and the budget questions over it, by hand.

Each released model's window is read off its config.json (tests/fixtures) and
transformers' rule for it (``DynamicSlidingWindowLayer`` keeps the last
``sliding_window − 1`` tokens); the bytes one layer leaves per token are
``2·G·D`` elements, 2 bytes each in bf16.  The tiny real models that check
the rule itself are in test_cache_windows.py.
"""

import json

import pytest
import sympy as sp

from symparams import SymparamsError, model
from symparams.analysis.capacity import largest_batch, longest_context
from symparams.core.compute import BATCH, SEQ, Attention
from symparams.core.symbols import A, D, G, H, L


def per_layer(G, D):
    """bf16 bytes one token leaves in one layer: K and V, G heads of width D."""
    return 2 * G * D * 2


#: preset → (layers that slide, layers that do not, tokens a sliding layer keeps, bf16 bytes per token per layer)
RELEASED = {
    "mistral-7b": (32, 0, 4095, per_layer(8, 128)),  # sliding_window 4096 on every layer
    "phi-3-mini": (32, 0, 2046, per_layer(32, 96)),  # sliding_window 2047
    "starcoder2-3b": (30, 0, 4095, per_layer(2, 128)),  # sliding_window 4096
    "starcoder2-7b": (32, 0, 4095, per_layer(4, 128)),
    "gemma-2-2b": (13, 13, 4095, per_layer(4, 256)),  # layers 0, 2, ..., 24 of 26 slide
    "gemma-2-9b": (21, 21, 4095, per_layer(8, 256)),
    "gemma-2-27b": (23, 23, 4095, per_layer(16, 128)),
    "gemma-3-1b": (22, 4, 511, per_layer(1, 256)),  # sliding_window 512; layers 5, 11, 17, 23 are global
    "llama-3-8b": (0, 32, None, per_layer(8, 128)),
    "qwen2.5-7b": (0, 28, None, per_layer(4, 128)),  # use_sliding_window false
    "mixtral-8x7b": (0, 32, None, per_layer(8, 128)),  # sliding_window null
}


@pytest.mark.parametrize("name", list(RELEASED))
@pytest.mark.parametrize("seq", [1, 511, 2046, 4095, 4096, 32768])
def test_released_models_hold_their_windows(name, seq):
    sliding, full, kept, layer = RELEASED[name]
    kv = model(name).kv_cache("bf16", seq=seq, batch=3)
    assert kv.per_token == (sliding + full) * layer
    assert kv.total == 3 * layer * (full * seq + sliding * min(seq, kept or seq))
    assert kv.windows == (((kept, sliding * layer),) if sliding else ())


def test_each_preset_window_is_its_checkpoints():
    from symparams.families.lookup import from_config
    from tests.reference import FIXTURES

    for path, name in [("mistralai/Mistral-7B-v0.1", "mistral-7b"), ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"),
                       ("bigcode/starcoder2-3b", "starcoder2-3b"), ("google/gemma-2-9b", "gemma-2-9b"),
                       ("google/gemma-3-1b-pt", "gemma-3-1b"), ("Qwen/Qwen2.5-7B", "qwen2.5-7b"),
                       ("Qwen/Qwen1.5-MoE-A2.7B", "qwen1.5-moe-a2.7b"), ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
                       ("mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b")]:
        read = from_config(f"{FIXTURES}/{path}/config.json")
        assert read.kv_cache("bf16", seq=10**5).total == model(name).kv_cache("bf16", seq=10**5).total, name


def test_the_held_formula_is_the_held_bytes():
    m = model("gemma-3-1b")
    formula = m.kv_cache("bf16").formulas["total"]
    assert formula.has(sp.Min)
    for seq in (1, 510, 511, 512, 5000):
        at = m.evaluate(formula).xreplace({SEQ: seq, BATCH: 2})
        assert at == m.kv_cache("bf16", seq=seq, batch=2).total == 2 * 1024 * (4 * seq + 22 * min(seq, 511))


def test_symbolic_windows_follow_the_layer_count():
    # Gemma 3's rule: a global layer every 6, so floor(L/6) keep every token, the rest 511
    formula = model("gemma3_text", sliding_window=512).kv_cache("bf16").formulas["total"]
    assert sp.simplify(formula - 4 * D * G * BATCH * (SEQ * sp.floor(L / 6) + (L - sp.floor(L / 6))
                                                       * sp.Min(SEQ, 511))) == 0
    assert model("mistral").kv_cache("bf16").formulas["total"] == 4 * G * H * L * BATCH * sp.Min(SEQ, 4095) / A


def test_a_window_can_be_switched_off_or_changed():
    m = model("mistral-7b")
    assert m.with_switches(sliding_window="none").kv_cache("bf16", seq=8192).total == 131072 * 8192
    assert m.with_switches(sliding_window=1).kv_cache("bf16", seq=8192).total == 131072 * 8192  # keeps all
    assert m.with_switches(sliding_window=1025).kv_cache("bf16", seq=8192).total == 131072 * 1024
    assert m.with_switches(sliding_window=1025).count == m.count


@pytest.mark.parametrize("raw", [0, -3, "many", True, 2.5, "4096.0"])
def test_a_bad_window_is_one_line(raw):
    with pytest.raises(SymparamsError) as info:
        model("mistral-7b", sliding_window=raw)
    assert "sliding_window" in str(info.value) and "\n" not in str(info.value)


def test_a_windowed_declaration_needs_its_window():
    with pytest.raises(ValueError):
        Attention(A, D, D, cache=2 * G * D, windowed=L)


# -- memory and its JSON ---------------------------------------------------------------------------

def test_memory_reports_the_held_cache_beside_the_rate():
    data = model("gemma-2-9b").memory("bf16", "none", seq=8192, batch=2).to_dict()
    layer = per_layer(8, 256)
    assert data["kv_cache_per_token"] == 42 * layer
    assert data["kv_cache"] == 2 * layer * (21 * 8192 + 21 * 4095)
    assert data["kv_cache_windows"] == [{"tokens": 4095, "per_token": 21 * layer}]
    assert data["total"] == data["weights"] + data["kv_cache"]
    assert "Min(4095, s)" in data["formulas"]["kv_cache"]
    assert any("last 4,095 tokens" in line for line in data["conventions"])
    assert json.loads(json.dumps(data)) == data


def test_training_holds_no_cache_windowed_or_not():
    assert model("mistral-7b").memory("bf16", "adam", seq=8192).kv_cache == 0


# -- the budget questions ---------------------------------------------------------------------------

def test_longest_context_of_a_model_with_full_layers_left():
    # Gemma 2 9B serving in bf16: 2N bytes of weights, then each token past the window adds the 21 full layers
    m = model("gemma-2-9b")
    layer, weights = per_layer(8, 256), 2 * m.count
    at_window = weights + layer * 42 * 4095
    budget = 24 * 10**9
    expected = (budget - weights - layer * 21 * 4095) // (layer * 21)
    assert expected > 4095 and longest_context(m, budget, optimizer="none") == expected
    # below a full window both kinds of layer grow with every token
    assert longest_context(m, at_window - 1, optimizer="none") == 4094


def test_the_longest_context_of_a_model_whose_every_layer_slides_has_no_answer_past_its_window():
    m = model("mistral-7b")
    weights, per_token = 2 * m.count, 131072
    assert longest_context(m, weights + per_token * 100, optimizer="none") == 100
    assert longest_context(m, weights + per_token * 4095 - 1, optimizer="none") == 4094
    with pytest.raises(SymparamsError) as info:
        longest_context(m, weights + per_token * 4095, optimizer="none")
    assert "4,095" in str(info.value) and "\n" not in str(info.value)
    # training keeps activations, which grow with every token
    assert longest_context(m, 10**12) > 0


def test_largest_batch_with_windows():
    m = model("mistral-7b")
    weights, held = 2 * m.count, 131072 * 4095
    assert largest_batch(m, weights + 7 * held, optimizer="none", seq=32768) == 7
    assert largest_batch(m, weights + 7 * held - 1, optimizer="none", seq=32768) == 6


def test_a_cache_the_inferred_data_could_not_fit_is_refused_with_its_reason_never_counted():
    """A traced model whose cache kind does not grow by a fixed number of elements per token (the data's
    ``Untraced("cache", ...)``) has no KV cache figure: ``memory`` and ``kv_cache`` refuse with the reason,
    where counting the traced items that remain would print a cache of 0.  (No shipped entry has such a cache
    today, so only a model built for the purpose shows it.)"""
    from symparams.core.blocks import Block, linear
    from symparams.core.compute import Traced, Untraced
    from symparams.core.family import Family
    from symparams.core.model import Model

    why = "the cross cache does not grow by a fixed number of elements per token"

    def build(switches, head):
        layer = linear("proj", H, H)
        return Block("toy", children=(layer,), ref="", kind="group",
                     computes=(Traced(2 * BATCH * SEQ * H * H, 4 * BATCH * SEQ * H * H), Untraced("cache", why)))

    toy = Model(Family("toy", {"en": "toy", "zh": "toy"}, build), {"H": 8})
    assert toy.flops(4).forward == 2 * 4 * 8 * 8  # the FLOPs the data holds still answer
    for ask in (lambda: toy.kv_cache(seq=4).total, lambda: toy.memory(optimizer="none", seq=4).kv_cache):
        with pytest.raises(SymparamsError, match="KV cache is not known: " + why):
            ask()
