"""The head-count proof of an inferred type's traced FLOPs, read under the premise, against PyTorch's counter.

OLMo's traced formula writes a head's width as ``floor(H/A)``.  Under the
premise (A divides H; G = A where the config leaves out the key/value heads)
the proof says the FLOPs depend on A through G/A only.  Each verdict is
checked on tiny real OLMo models at two head counts under FlopCounterMode.
"""

from __future__ import annotations

import sympy as sp
import transformers

from symparams.families.inferred import model as inferred_model
from tests.reference.flops import counted, real, token_ids

SIZES = {"model_type": "olmo", "hidden_size": 48, "intermediate_size": 80, "num_hidden_layers": 2,
         "vocab_size": 97}
SEQ = 7


def _counted(config: dict) -> int:
    """Forward FLOPs of a tiny real OLMo of ``config`` (eager attention) on one sequence of :data:`SEQ` tokens."""
    built = transformers.AutoConfig.for_model("olmo", **{k: v for k, v in config.items() if k != "model_type"})
    module = real("OlmoForCausalLM", built)
    return counted(module, {"input_ids": token_ids(built.vocab_size, SEQ, 1)})[0]


def test_with_key_value_heads_given_the_flops_depend_on_a_only_through_g_over_a():
    m = inferred_model({**SIZES, "num_attention_heads": 4, "num_key_value_heads": 4}, head="causal-lm")
    f = m.flops(SEQ)
    assert f.premise == ("A divides H",)
    assert not f.heads_derivative.has(sp.Derivative)
    quantities, derivative = f.held
    assert quantities == ("G/A",) and derivative == 0
    # G/A held at 1: the same FLOPs at A = 4 and A = 8 (and symparams' figure is the counter's at both)
    four = _counted({**SIZES, "num_attention_heads": 4, "num_key_value_heads": 4})
    eight = _counted({**SIZES, "num_attention_heads": 8, "num_key_value_heads": 8})
    assert four == eight == f.forward
    # G held at 4 instead: A = 4 and A = 8 differ, by what ∂F/∂A says of the fewer key/value columns
    fewer = _counted({**SIZES, "num_attention_heads": 8, "num_key_value_heads": 4})
    assert fewer < four
    g4 = inferred_model({**SIZES, "num_attention_heads": 8, "num_key_value_heads": 4}, head="causal-lm")
    assert g4.flops(SEQ).forward == fewer


def test_with_key_value_heads_left_out_g_follows_a_and_the_flops_do_not_depend_on_it():
    m = inferred_model({**SIZES, "num_attention_heads": 4}, head="causal-lm")
    f = m.flops(SEQ)
    assert f.premise == ("G = A", "A divides H")
    assert f.heads_derivative == 0 and f.held is None
    assert _counted({**SIZES, "num_attention_heads": 4}) == _counted({**SIZES, "num_attention_heads": 8}) \
        == f.forward


def test_a_hand_written_family_reads_its_own_formula_without_a_premise():
    from symparams import model

    assert model("llama-3-8b").flops(16).premise == ()
