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


def _llama_2_7b():
    from symparams.families.lookup import from_config
    from tests.reference import FIXTURES

    return from_config(str(FIXTURES / "meta-llama" / "Llama-2-7b-hf" / "config.json"))


def _llama_for_causal_lm_total():
    import transformers

    from tests.reference import FIXTURES
    from tests.reference.hf import build, totals

    config = transformers.AutoConfig.from_pretrained(str(FIXTURES / "meta-llama" / "Llama-2-7b-hf"))
    return totals(build("LlamaForCausalLM", config))[0]


def test_as_released_a_decoder_is_its_checkpoint_with_the_lm_head():
    # Llama 2 7B's published size is LlamaForCausalLM's, the base model's plus lm_head
    assert model("llama-2-7b").as_released().count == _llama_for_causal_lm_total()


def test_with_switches_keeps_the_class_the_checkpoint_was_saved_as():
    # config.json's architectures: LlamaForCausalLM, so the saved model is the causal LM whatever switch is set
    m = _llama_2_7b().with_switches(attention_bias=False)
    assert m.saved_model().count == _llama_for_causal_lm_total()
    assert m.name == _llama_2_7b().name


def test_with_head_keeps_the_class_the_checkpoint_was_saved_as():
    m = _llama_2_7b().with_head("sequence-classification").with_head(None)
    assert m.saved_model().count == _llama_for_causal_lm_total()
