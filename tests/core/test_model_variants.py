"""A model changed by ``subs`` keeps what it was not asked to change: checked against transformers' build of
the changed model (the mutation run found ``subs`` dropping the switches and the name unnoticed)."""

import pytest

from symparams import model

pytestmark = pytest.mark.crosscheck


def test_subs_keeps_an_untied_head_and_the_name():
    import transformers

    from tests.reference.hf import build, totals

    m = model("gpt2", head="causal-lm", tie=False).subs(L=2)
    # GPT2Config's defaults are gpt2's sizes; two layers and an lm_head of its own
    theirs = build("GPT2LMHeadModel", transformers.GPT2Config(n_layer=2, tie_word_embeddings=False))
    assert (m.count, m.trainable) == totals(theirs)
    assert (m.name, m.head, m.switches["tie"]) == ("gpt2", "causal-lm", False)
