"""mBART, Pegasus, M2M-100 / NLLB, and the causal-LM heads of BART and Marian, against transformers on the meta
device.

Every model is compared tensor by tensor (layers folded as ``*``), in total and in trainable count, with the
transformers class its family's ``CLASSES`` table names: every preset with every head, every fixture with
every head, and random configurations — the decoder's layers, heads and FFN its own or the encoder's — read
from config.json dicts (the same dict builds both).
"""

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import divisors

from symparams import SymparamsError, model
from symparams.core.symbols import A, A_d, L_d, P, r_d
from symparams.documents.environment import catalog
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from symparams.families.registry import family
from tests.reference import FIXTURES
from tests.reference.more_families import check, reference

pytestmark = pytest.mark.crosscheck

NEW = ("mbart", "pegasus", "m2m_100")
FIXTURE_FAMILIES = {"facebook/mbart-large-cc25": "mbart", "google/pegasus-large": "pegasus",
                    "facebook/m2m100_418M": "m2m_100", "facebook/nllb-200-distilled-600M": "m2m_100"}


def fixture(name):
    return json.loads((FIXTURES / name / "config.json").read_text())


def heads_of(name):
    return [None, *family(name).heads]


def small(model_type, **extra):
    data = dict(model_type=model_type, vocab_size=100, d_model=8, encoder_layers=1, decoder_layers=1,
                encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16,
                max_position_embeddings=10, pad_token_id=1)
    return {**data, **extra}


# -- every preset, every head -------------------------------------------------------------------------------

@pytest.mark.parametrize("preset,head", [(p.name, h) for p in all_presets().values() if p.family in NEW
                                         for h in heads_of(p.family)])
def test_preset_with_every_head_matches_transformers(preset, head):
    check(model(preset, head=head))


@pytest.mark.parametrize("preset", [p.name for p in all_presets().values() if p.family in ("bart", "marian")])
def test_bart_and_marian_presets_with_the_causal_lm_head_match_transformers(preset):
    check(model(preset, head="causal-lm"))


# -- fixtures ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,head", [(n, h) for n, fam in FIXTURE_FAMILIES.items() for h in heads_of(fam)])
def test_fixture_with_every_head_matches_transformers(name, head):
    m = from_config(str(FIXTURES / name / "config.json"), head)
    assert m.family.name == FIXTURE_FAMILIES[name]
    check(m, fixture(name))


@pytest.mark.parametrize("model_type", ["mbart", "pegasus", "m2m_100"])
def test_missing_keys_take_the_transformers_config_class_defaults(model_type):
    data = {"model_type": model_type}
    for head in heads_of(model_type):
        check(model(data, head=head), data)


# -- published totals, each derived here by hand ----------------------------------------------------------

def encoder_layer(h, ffn):
    """Self-attention 4·(h² + h), FFN h·ffn + ffn + ffn·h + h, two LayerNorms 4h."""
    return 4 * (h * h + h) + h * ffn + ffn + ffn * h + h + 4 * h


def decoder_layer(h, ffn):
    """An encoder layer and cross-attention with its LayerNorm."""
    return encoder_layer(h, ffn) + 4 * (h * h + h) + 2 * h


def test_mbart_large_cc25_is_611m():
    # The hub lists 611M parameters for facebook/mbart-large-cc25 (Liu et al. 2020 write "~680M", a figure no
    # count of MBartModel gives). Shared 250027·1024; per stack positions (1024 + 2)·1024,
    # layernorm_embedding and the final layer_norm 2·2·1024; 12 + 12 layers.
    by_hand = 250027 * 1024 + 2 * (1026 * 1024 + 4 * 1024) + 12 * encoder_layer(1024, 4096) \
        + 12 * decoder_layer(1024, 4096)
    assert by_hand == 610_851_840
    assert model("mbart-large-cc25").count == by_hand
    assert from_config(str(FIXTURES / "facebook/mbart-large-cc25/config.json")).count == by_hand
    assert round(by_hand / 1e6) == 611


def test_mbart_large_50_differs_from_cc25_by_its_vocabulary():
    # facebook/mbart-large-50: the hub lists 611M; 250054 tokens against cc25's 250027
    assert model("mbart-large-50").count - model("mbart-large-cc25").count == (250054 - 250027) * 1024
    assert round(model("mbart-large-50").count / 1e6) == 611


def test_pegasus_large_trains_568m():
    # Zhang et al. 2020 (PEGASUS), Table 1 / Section 6: PEGASUS-large has 568M parameters; transformers also
    # registers the two frozen sinusoidal tables, 2·1024·1024, which the paper's count leaves out.
    trainable = 96103 * 1024 + 2 * 2 * 1024 + 16 * encoder_layer(1024, 4096) + 16 * decoder_layer(1024, 4096)
    frozen = 2 * 1024 * 1024
    m = model("pegasus-large")
    assert (m.count, m.trainable) == (trainable + frozen, trainable) == (570_797_056, 568_699_904)
    assert trainable // 10**6 == 568  # 568.7M


def test_m2m100_418m_holds_484m():
    # facebook/m2m100_418M: the name says 418M (Fan et al. 2020); the hub lists 484M for the checkpoint,
    # which is what M2M100Model holds: shared 128112·1024, final layer_norms 2·2·1024, 12 + 12 layers,
    # and no position parameters (the sinusoidal table is a buffer).
    by_hand = 128112 * 1024 + 4 * 1024 + 12 * encoder_layer(1024, 4096) + 12 * decoder_layer(1024, 4096)
    assert model("m2m100-418m").count == by_hand == 483_905_536
    assert round(by_hand / 1e6) == 484


def test_nllb_200_distilled_600m_holds_615m():
    # facebook/nllb-200-distilled-600M: "600M" in the name (NLLB team 2022); the hub lists 615M:
    # the m2m100_418M sizes with 256206 tokens
    by_hand = 256206 * 1024 + 4 * 1024 + 12 * encoder_layer(1024, 4096) + 12 * decoder_layer(1024, 4096)
    assert model("nllb-200-distilled-600m").count == by_hand == 615_073_792
    assert from_config(str(FIXTURES / "facebook/nllb-200-distilled-600M/config.json")).count == by_hand
    assert round(by_hand / 1e6) == 615


# -- structure --------------------------------------------------------------------------------------------

def test_pegasus_positions_are_frozen_parameters_as_transformers_registers_them():
    module, _ = reference(small("pegasus"))
    params = dict(module.named_parameters())
    for stack in ("encoder", "decoder"):
        table = params[f"{stack}.embed_positions.weight"]
        assert table.shape == (10, 8) and table.requires_grad is False
    m = check(model(small("pegasus")), small("pegasus"))
    assert m.count - m.trainable == 2 * 10 * 8


def test_m2m100_positions_are_buffers_not_parameters():
    module, _ = reference(small("m2m_100"))
    assert not any("embed_positions" in n for n, _ in module.named_parameters())
    assert "encoder.embed_positions.weights" in dict(module.named_buffers())
    m = model(small("m2m_100"))
    assert P not in m.tree.symbols and m.count == m.trainable
    assert m.count == check(model(small("m2m_100", max_position_embeddings=500)), small("m2m_100")).count


def test_mbart_has_a_final_layer_norm_per_stack_more_than_bart():
    data = small("mbart")
    assert check(model(data), data).count - model({**data, "model_type": "bart"}).count == 2 * 2 * 8


@pytest.mark.parametrize("model_type", ["bart", "mbart", "pegasus", "marian"])
@pytest.mark.parametrize("tie", [True, False])
def test_causal_lm_is_the_decoder_alone_with_its_own_table(model_type, tie):
    data = small(model_type, tie_word_embeddings=tie, decoder_layers=2)
    m = check(model(data, head="causal-lm"), data)
    assert m.components["shared"] == m.components["encoder"] == 0
    # tied: the base model's decoder borrows `shared`, the causal LM has its own table and the head adds
    # nothing; untied: both decoders hold their table and the causal LM adds its head, H·V
    assert m.count == model(data).components["decoder"] + 100 * 8


@pytest.mark.parametrize("share,tie", [(True, False), (False, True), (False, False)])
def test_marian_causal_lm_decoder_table_has_the_decoder_vocabulary(share, tie):
    data = small("marian", decoder_vocab_size=77, share_encoder_decoder_embeddings=share, tie_word_embeddings=tie)
    m = check(model(data, head="causal-lm"), data)
    assert m.evaluate(m.block("decoder.embed_tokens").count) == 77 * 8
    assert m.evaluate(m.block("head.lm_head").count) == (0 if tie else 8 * 100)  # lm_head: H·V, or tied


def test_marian_causal_lm_of_a_shared_vocabulary_with_another_decoder_vocabulary_is_refused():
    data = small("marian", decoder_vocab_size=77)  # shared and tied, yet 77 decoder rows
    reference(data, "causal-lm")  # transformers builds a 77-row decoder table ...
    with pytest.raises(SymparamsError, match="key decoder_vocab_size=77 differs from vocab_size=100") as err:
        model(data, head="causal-lm")  # ... symparams, which counts the shared V there, refuses
    assert "\n" not in str(err.value)
    assert check(model(small("marian"), head="causal-lm")).count == model(small("marian"), head="causal-lm").count


@pytest.mark.parametrize("model_type", ["bart", "mbart", "pegasus", "m2m_100", "marian"])
def test_decoder_sizes_of_their_own(model_type):
    data = small(model_type, decoder_layers=3, decoder_attention_heads=4, decoder_ffn_dim=24)
    m = check(model(data), data)
    assert (m.values[L_d], m.values[A_d], m.values[r_d]) == (3, 4, 3)
    assert m.switches["split_layers"] and m.switches["split_heads"] and m.switches["split_ffn"]
    p = m.prove()
    assert p.invariant  # A and A_d both cancel
    assert A_d in m.symbols and A_d not in m.closed_form.free_symbols


# -- the prover ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mbart-large-cc25", "mbart-large-50", "pegasus-large", "m2m100-418m",
                                  "nllb-200-distilled-600m", "mbart", "pegasus", "m2m_100"])
def test_invariant_in_the_head_count(name):
    p = model(name).prove()
    assert p.invariant and p.derivative == 0 and A not in p.closed_form.free_symbols
    assert [s for s in p.steps if s.key == "per_head"]
    if not model(name).free:
        assert set(p.witness.values()) == {model(name).count}


# -- documents: every block has a title in both catalogs ----------------------------------------------------

@pytest.mark.parametrize("name", ["bart", "marian", *NEW])
def test_every_block_title_is_in_both_catalogs(name):
    en, zh = catalog("en")["blocks"], catalog("zh")["blocks"]
    fam = family(name)
    flags = [sw for sw in fam.switches if isinstance(sw.default, bool)]
    for head in heads_of(name):
        for combo in itertools.product([False, True], repeat=len(flags)):
            tree = fam.build(fam.resolve({sw.name: v for sw, v in zip(flags, combo)}, head), head)
            for _, block, _ in tree.walk():
                if block is not tree:
                    key = block.title_key
                    assert (key in en and key in zh) or (f"{name}/{key}" in en and f"{name}/{key}" in zh), (head, key)


# -- refused, with the key named ------------------------------------------------------------------------------

@pytest.mark.parametrize("data,message", [
    (small("m2m_100", d_model=2, encoder_attention_heads=1, decoder_attention_heads=1), "key d_model=2"),
    ({**small("m2m_100", hidden_size=3, encoder_attention_heads=1, decoder_attention_heads=1), "d_model": None},
     "key hidden_size=3"),
    (small("m2m_100", pad_token_id=12), r"pad_token_id=12 is outside max_position_embeddings \+ 2=12"),
    (small("m2m_100", pad_token_id=100, vocab_size=100), "pad_token_id=100 is outside vocab_size=100"),
    (small("pegasus", pad_token_id=100), "pad_token_id=100 is outside vocab_size=100"),
    (small("mbart", decoder_attention_heads=3), "H=8 is not divisible by A_d=3"),
    (small("mbart", decoder_ffn_dim=0), "key decoder_ffn_dim must be at least 1"),
])
def test_what_cannot_be_built_is_refused_in_one_line(data, message):
    with pytest.raises(SymparamsError, match=message) as err:
        model(data)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("extra", [dict(d_model=2), dict(d_model=3), dict(pad_token_id=12)])
def test_transformers_cannot_build_those_m2m100_configs_either(extra):
    data = small("m2m_100", encoder_attention_heads=1, decoder_attention_heads=1, **extra)
    with pytest.raises((ZeroDivisionError, IndexError)):
        reference(data)


def test_scale_embedding_adds_nothing():
    for model_type in NEW:
        assert model(small(model_type, scale_embedding=True)).count == model(small(model_type)).count


# -- property tests: random configurations, zero mismatches ---------------------------------------------------

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def stacks(draw, model_type):
    """A config dict with random sizes; the decoder's layers, heads and FFN its own or the encoder's."""
    heads = draw(st.integers(1, 6))
    hidden = heads * draw(st.integers(1, 12))
    if model_type == "m2m_100" and hidden in (2, 3):  # transformers cannot build them (refused above)
        hidden = 4 * heads
    ffn = draw(st.integers(1, 3 * hidden))
    layers = draw(st.integers(1, 3))
    data = dict(model_type=model_type, vocab_size=draw(st.integers(2, 2000)), encoder_layers=layers,
                decoder_layers=draw(st.one_of(st.just(layers), st.integers(1, 3))),
                decoder_attention_heads=draw(st.one_of(st.just(heads), st.sampled_from(divisors(hidden)[:6]))),
                encoder_ffn_dim=ffn, decoder_ffn_dim=draw(st.one_of(st.just(ffn), st.integers(1, 3 * hidden))),
                max_position_embeddings=draw(st.integers(1, 600)), tie_word_embeddings=draw(st.booleans()),
                scale_embedding=draw(st.booleans()))
    data["hidden_size" if draw(st.booleans()) else "d_model"] = hidden
    data["num_attention_heads" if draw(st.booleans()) else "encoder_attention_heads"] = heads
    pad = draw(st.one_of(st.none(), st.integers(0, min(data["vocab_size"], data["max_position_embeddings"] + 2) - 1)))
    data["pad_token_id"] = pad
    if draw(st.booleans()):
        data["num_labels"] = draw(st.integers(1, 9))
    return data


@pytest.mark.parametrize("model_type", NEW)
@SETTINGS
@given(choice=st.data())
def test_random_configurations_match_transformers(model_type, choice):
    data = choice.draw(stacks(model_type), label="config")
    head = choice.draw(st.sampled_from(heads_of(model_type)), label="head")
    check(model(data, head=head), data)
