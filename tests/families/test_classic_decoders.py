"""GPT-NeoX, GPT-J, OPT, BLOOM, Falcon and Phi against transformers on the meta device.

Every parameter tensor is compared by path (layers folded as ``*``), plus the
total and the trainable count: the presets and the shipped config.json
fixtures (read by transformers' own ``AutoConfig``) with every head, the
config.json mapping, and random configurations.  Published totals are their
own tests, the numbers written out with their sources.
"""

import os

import pytest
import sympy as sp
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symparams import SymparamsError, model
from symparams.analysis.proof import RHO
from symparams.core.symbols import A, E, G, H, L, P, V, r
from symparams.documents.environment import catalog
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from symparams.families.registry import family
from tests.reference import FIXTURES
from tests.reference.classic_decoders import MODULES, config, reference
from tests.reference.hf import assert_matches, totals

pytestmark = pytest.mark.crosscheck

FAMILIES = tuple(MODULES)

#: the config.json fixtures of these families, by hub id
CHECKPOINTS = ("EleutherAI/pythia-160m", "EleutherAI/gpt-neox-20b", "EleutherAI/gpt-j-6b", "facebook/opt-125m",
               "facebook/opt-350m", "facebook/opt-1.3b", "bigscience/bloom-560m", "tiiuae/falcon-7b",
               "tiiuae/falcon-40b", "microsoft/phi-1_5", "microsoft/phi-2")

#: every head any of these families has
HEADS = (None, "causal-lm", "sequence-classification", "token-classification", "question-answering")


def check(m, cfg=None):
    module, strip = reference(m, cfg)
    assert_matches(m, module, strip)


def fixture(name):
    return str(FIXTURES / name / "config.json")


# -- the families and their heads ----------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_reads_its_model_type_and_has_every_head_transformers_builds(name):
    fam = family(name)
    assert fam.config_types == (name,)
    classes = MODULES[name].CLASSES
    assert set(fam.heads) == set(classes) - {None}
    for cls, _ in classes.values():  # every class the table names is one transformers has
        assert hasattr(transformers, cls), cls
    prefix = {"gpt_neox": "GPTNeoX", "gptj": "GPTJ", "opt": "OPT", "bloom": "Bloom", "falcon": "Falcon", "phi": "Phi"}
    built = {n for n in dir(transformers) if n.startswith(prefix[name] + "For")}
    assert built == {cls for cls, _ in classes.values()} - {classes[None][0]}


def _tree_variants(name):
    """The tree of every head, under the defaults and with every switch flipped once."""
    fam = family(name)
    for head in (None, *fam.heads):
        yield head, fam.resolve({}, head)
        for sw in fam.switches:
            for value in (sw.choices or (True, False)):
                yield head, fam.resolve({sw.name: value}, head)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_block_has_a_title_in_both_catalogs(name):
    en, zh = catalog("en")["blocks"], catalog("zh")["blocks"]
    fam = family(name)
    for head, switches in _tree_variants(name):
        tree = fam.build(switches, head)
        for _, block, _ in tree.walk():
            if block is not tree:
                assert block.title_key in en and block.title_key in zh, (name, head, block.name, block.title_key)


# -- presets and fixtures, every head --------------------------------------------------------

def _preset_variants():
    for p in all_presets().values():
        if p.family in FAMILIES:
            for head in (None, *family(p.family).heads):
                yield p.name, head


@pytest.mark.parametrize("name,head", list(_preset_variants()))
def test_presets_match_transformers_with_every_head(name, head):
    check(model(name, head=head))


@pytest.mark.parametrize("hub_id", CHECKPOINTS)
@pytest.mark.parametrize("head", HEADS)
def test_fixtures_match_the_model_transformers_reads_from_the_same_config(hub_id, head):
    path = fixture(hub_id)
    if head is not None and head not in from_config(path).family.heads:
        with pytest.raises(SymparamsError, match="unknown head"):
            from_config(path, head=head)
        return
    m = from_config(path, head=head)
    check(m, transformers.AutoConfig.from_pretrained(os.path.dirname(path)))


def test_fixture_values_are_the_published_configurations():
    m = from_config(fixture("EleutherAI/pythia-160m"))
    assert m.values == {V: 50304, H: 768, L: 12, A: 12, r: 4}
    assert m.switches == {"tie": False, "attention_bias": True}
    m = from_config(fixture("facebook/opt-350m"))
    assert m.values == {V: 50272, P: 2048, H: 1024, L: 24, A: 16, r: 4, E: 512}
    assert m.switches == {"project": True, "final_norm": False, "bias": True, "tie": True}
    m = from_config(fixture("facebook/opt-125m"))
    assert E not in m.values and m.switches["project"] is False and m.switches["final_norm"] is True
    m = from_config(fixture("tiiuae/falcon-7b"))
    assert m.values == {V: 65024, H: 4544, L: 32, A: 71, r: 4}
    assert (m.switches["new_decoder_architecture"], m.switches["multi_query"], m.switches["num_ln_in_parallel_attn"]) \
        == (False, True, "1")
    m = from_config(fixture("tiiuae/falcon-40b"))
    assert m.values == {V: 65024, H: 8192, L: 60, A: 128, G: 8, r: 4}
    assert m.switches["new_decoder_architecture"] and m.switches["num_ln_in_parallel_attn"] == "2"
    m = from_config(fixture("microsoft/phi-2"))  # num_key_value_heads = num_attention_heads: no G
    assert m.values == {V: 51200, H: 2560, L: 32, A: 32, r: 4} and m.switches["gqa"] is False
    assert from_config(fixture("bigscience/bloom-560m")).values == {V: 250880, H: 1024, L: 24, A: 16}
    assert from_config(fixture("EleutherAI/gpt-j-6b")).values == {V: 50400, H: 4096, L: 28, A: 16, r: 4}


# -- published totals, each its own test -----------------------------------------------------

def test_pythia_160m_total_with_the_lm_head_is_162_322_944():
    # Pythia paper (Biderman et al. 2023), Table 1, and the EleutherAI/pythia-160m model card: 162,322,944
    m = from_config(fixture("EleutherAI/pythia-160m"), head="causal-lm")
    assert m.count == model("pythia-160m", head="causal-lm").count == 162_322_944
    assert totals(reference(m)[0]) == (162_322_944, 162_322_944)
    # the untied embed_out is a second V·H table: the base model is that much smaller
    assert model("pythia-160m").count == 162_322_944 - 50304 * 768


def test_pythia_1b_total_with_the_lm_head_is_1_011_781_632():
    # Pythia paper (Biderman et al. 2023), Table 1: 1,011,781,632
    assert model("pythia-1b", head="causal-lm").count == 1_011_781_632


def test_gpt_neox_20b_total_with_the_lm_head_is_20_554_567_680():
    # EleutherAI/gpt-neox-20b model card and Black et al. 2022: 20,554,567,680
    m = from_config(fixture("EleutherAI/gpt-neox-20b"), head="causal-lm")
    assert m.count == model("gpt-neox-20b", head="causal-lm").count == 20_554_567_680
    assert totals(reference(m)[0])[0] == 20_554_567_680


def test_gpt_j_6b_total_is_the_model_cards_sizes_counted_by_hand():
    # The EleutherAI/gpt-j-6b card gives n_layers 28, d_model 4096, d_ff 16384, 50400 vocabulary rows (the
    # embedding matrix), and n_parameters 6,053,381,344.  Its sizes counted by hand: wte, per layer ln_1,
    # q/k/v/out without biases, fc_in and fc_out with biases, ln_f, and lm_head with a bias.
    by_hand = (50400 * 4096 + 28 * (2 * 4096 + 4 * 4096**2 + 4096 * 16384 + 16384 + 16384 * 4096 + 4096)
               + 2 * 4096 + 4096 * 50400 + 50400)
    assert by_hand == 6_050_882_784
    m = from_config(fixture("EleutherAI/gpt-j-6b"), head="causal-lm")
    assert m.count == model("gpt-j-6b", head="causal-lm").count == by_hand
    assert totals(reference(m)[0])[0] == by_hand
    # The card's n_parameters (counted on the mesh-transformer-jax checkpoint) is 2,498,560 more than the
    # model its own sizes describe and GPTJForCausalLM builds; symparams counts what transformers builds.
    assert 6_053_381_344 - m.count == 2_498_560


def test_opt_1_3b_total_is_1_315_758_080():
    # facebook/opt-1.3b as loaded from the Hub (OPTForCausalLM, lm_head tied): 1,315,758,080
    for head in (None, "causal-lm"):
        assert from_config(fixture("facebook/opt-1.3b"), head=head).count == 1_315_758_080
    assert model("opt-1.3b").count == 1_315_758_080


def test_opt_350m_total_is_331_196_416():
    # facebook/opt-350m: 331,196,416 parameters in its checkpoint's tensors (projections E = 512, no final norm)
    m = from_config(fixture("facebook/opt-350m"), head="causal-lm")
    assert m.count == model("opt-350m").count == 331_196_416
    assert totals(reference(m)[0])[0] == 331_196_416


def test_bloom_560m_total_is_559_214_592():
    # bigscience/bloom-560m model card: 559,214,592 parameters
    m = from_config(fixture("bigscience/bloom-560m"))
    assert m.count == model("bloom-560m", head="causal-lm").count == 559_214_592
    assert totals(reference(m)[0])[0] == 559_214_592


def test_bloom_7b1_total_is_7_069_016_064():
    # bigscience/bloom-7b1 model card: 7,069,016,064 parameters
    assert model("bloom-7b1").count == model("bloom-7b1", head="causal-lm").count == 7_069_016_064


def test_phi_2_total_with_the_lm_head_is_2_779_683_840():
    # microsoft/phi-2 on the Hugging Face Hub (PhiForCausalLM): 2,779,683,840 parameters
    m = from_config(fixture("microsoft/phi-2"), head="causal-lm")
    assert m.count == model("phi-2", head="causal-lm").count == 2_779_683_840
    assert totals(reference(m)[0])[0] == 2_779_683_840


def test_phi_1_5_total_with_the_lm_head_is_1_418_270_720():
    # microsoft/phi-1_5 loaded as PhiForCausalLM, model.num_parameters(): 1,418,270,720
    assert from_config(fixture("microsoft/phi-1_5"), head="causal-lm").count == 1_418_270_720


def test_falcon_7b_total_counted_by_hand():
    # tiiuae/falcon-7b's sizes (V 65024, H 4544, 32 layers, 71 heads of 64, one key/value head, no biases,
    # one LayerNorm per block, lm_head tied): word_embeddings, per block input_layernorm,
    # query_key_value H·(H + 2·64), dense H², the MLP 2·H·4H, then ln_f
    by_hand = 65024 * 4544 + 32 * (2 * 4544 + 4544 * (4544 + 2 * 64) + 4544**2 + 2 * 4544 * 4 * 4544) + 2 * 4544
    assert from_config(fixture("tiiuae/falcon-7b"), head="causal-lm").count == by_hand == 6_921_720_704


def test_falcon_40b_total_counted_by_hand():
    # tiiuae/falcon-40b's sizes (H 8192, 60 layers, 128 heads of 64, 8 key/value heads, ln_attn and ln_mlp)
    by_hand = 65024 * 8192 + 60 * (4 * 8192 + 8192 * (128 + 2 * 8) * 64 + 8192**2 + 2 * 8192 * 4 * 8192) + 2 * 8192
    assert from_config(fixture("tiiuae/falcon-40b"), head="causal-lm").count == by_hand == 41_303_293_952


# -- config.json mapping details ----------------------------------------------------------------

DEFAULTS = {"gpt_neox": "GPTNeoXConfig", "gptj": "GPTJConfig", "opt": "OPTConfig", "bloom": "BloomConfig",
            "falcon": "FalconConfig", "phi": "PhiConfig"}


@pytest.mark.parametrize("name", FAMILIES)
def test_missing_keys_take_the_transformers_config_class_defaults(name):
    m = model({"model_type": name}, head="causal-lm")
    check(m, getattr(transformers, DEFAULTS[name])())


@pytest.mark.parametrize("data,other", [
    ({"model_type": "gptj", "hidden_size": 96, "num_attention_heads": 8, "num_hidden_layers": 1, "rotary_dim": 4},
     {"n_embd": 64}),
    ({"model_type": "bloom", "n_embed": 96, "num_attention_heads": 8, "num_hidden_layers": 1}, {"n_layer": 3}),
    ({"model_type": "falcon", "n_embed": 128, "num_attention_heads": 4, "num_hidden_layers": 1},
     {"hidden_size": 64}),
])
def test_aliases_are_read_as_transformers_reads_them(data, other):
    m = model(data, head="causal-lm")
    check(m, transformers.AutoConfig.for_model(**data))
    with pytest.raises(SymparamsError, match="keys .* name one field of .* with different values; keep one$"):
        model({**data, **other})  # transformers would silently take one of the two


def test_opt_without_a_projection_and_with_a_removed_final_norm():
    base = {"model_type": "opt", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1,
            "ffn_dim": 100, "vocab_size": 300, "max_position_embeddings": 40}
    for extra in ({"word_embed_proj_dim": None}, {"word_embed_proj_dim": 64}, {"_remove_final_layer_norm": True},
                  {"do_layer_norm_before": False, "word_embed_proj_dim": 32}, {"enable_bias": False}):
        data = {**base, **extra}
        m = model(data, head="causal-lm")
        check(m, transformers.AutoConfig.for_model(**data))
    assert model({**base, "_remove_final_layer_norm": True}).switches["final_norm"] is False


def test_opt_projection_needs_e_unlike_h():
    with pytest.raises(SymparamsError, match="E=768 equals H=768"):
        model("opt-125m", project=True, E=768)


@pytest.mark.parametrize("extra", [
    {"multi_query": False},
    {"multi_query": False, "num_kv_heads": 2},                       # the old architecture ignores num_kv_heads
    {"parallel_attn": False},
    {"parallel_attn": False, "new_decoder_architecture": True, "num_kv_heads": 2},
    {"num_ln_in_parallel_attn": 2},
    {"new_decoder_architecture": True},                              # num_kv_heads missing: A of them
    {"new_decoder_architecture": True, "num_kv_heads": 1, "num_ln_in_parallel_attn": 1},
    {"bias": True, "tie_word_embeddings": False, "ffn_hidden_size": 100},
    {"alibi": True},
])
def test_falcon_variants_match_transformers(extra):
    data = {"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 8, "num_hidden_layers": 2,
            "vocab_size": 300, **extra}
    m = model(data, head="causal-lm")
    check(m, transformers.AutoConfig.for_model(**data))


def test_falcon_new_architecture_without_num_kv_heads_has_g_equal_to_a():
    m = model({"model_type": "falcon", "new_decoder_architecture": True, "num_attention_heads": 8,
               "hidden_size": 64})
    assert m.values[G] == m.values[A] == 8


@pytest.mark.parametrize("extra", [{"num_key_value_heads": 2}, {"qk_layernorm": True},
                                   {"tie_word_embeddings": True, "num_key_value_heads": 4}])
def test_phi_variants_match_transformers(extra):
    data = {"model_type": "phi", "hidden_size": 64, "num_attention_heads": 8, "num_hidden_layers": 2,
            "intermediate_size": 100, "vocab_size": 300, **extra}
    for head in HEADS[:-1]:
        m = model(data, head=head)
        check(m, transformers.AutoConfig.for_model(**data))


def test_gpt_neox_without_attention_bias():
    data = {"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1,
            "intermediate_size": 96, "vocab_size": 300, "attention_bias": False, "tie_word_embeddings": True}
    m = model(data, head="causal-lm")
    check(m, transformers.AutoConfig.for_model(**data))
    assert m.count == 300 * 64 + 2 * 64 + 4 * 64**2 + 2 * 64 + 2 * 64 * 96 + 96 + 64 + 2 * 64


def test_tied_lm_heads_keep_their_biases():
    # GPT-J and Phi: tie_word_embeddings ties lm_head.weight, the bias V stays
    for name in ("gpt-j-6b", "phi-2"):
        tied = model(name, head="causal-lm", tie=True)
        assert tied.count == model(name).count + tied.values[V]
        check(tied)


@pytest.mark.parametrize("data,key", [
    ({"model_type": "opt", "layer_norm_elementwise_affine": False}, "layer_norm_elementwise_affine"),
    ({"model_type": "opt", "enable_bias": "yes"}, "enable_bias"),
    ({"model_type": "falcon", "new_decoder_architecture": True, "num_kv_heads": 5}, "num_kv_heads"),
    ({"model_type": "falcon", "num_ln_in_parallel_attn": 3}, "num_ln_in_parallel_attn"),
    ({"model_type": "phi", "num_key_value_heads": 5}, "num_key_value_heads"),
    ({"model_type": "phi", "head_dim": 100}, "head_dim"),
    ({"model_type": "gpt_neox", "intermediate_size": 0}, "intermediate_size"),
    ({"model_type": "gpt_neox", "num_attention_heads": 5}, "A=5"),
    ({"model_type": "bloom", "n_head": 7}, "A=7"),
    ({"model_type": "gptj", "n_inner": "4096"}, "n_inner"),
])
def test_config_errors_are_one_line_naming_the_key(data, key):
    with pytest.raises(SymparamsError) as info:
        model(data)
    assert key in str(info.value) and "\n" not in str(info.value)


def test_phi_token_classification_without_a_bias_is_refused_under_that_head_only():
    data = {"model_type": "phi", "token_classification_bias": False}
    with pytest.raises(SymparamsError, match="token_classification_bias"):
        model(data, head="token-classification")
    assert model(data).count == model({"model_type": "phi"}).count


# -- what the head-count prover says ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["pythia-160m", "gpt-neox-20b", "gpt-j-6b", "opt-125m", "opt-350m",
                                  "bloom-560m", "phi-2", "phi-1_5"])
def test_multi_head_attention_is_invariant_in_the_head_count(name):
    p = model(name).prove()
    assert p.invariant and p.derivative == 0
    assert len(set(p.witness.values())) == 1 and model(name).count in p.witness.values()


def test_falcon_multi_query_depends_on_the_head_count():
    p = model("falcon-7b").prove()
    assert not p.invariant and p.fixed_ratio is None  # one key/value head: no G to hold in proportion
    assert p.dependence == 2 * H**2 * L / A
    (a0, n0), (a1, n1) = p.counterexample
    assert n0 - n1 == 2 * 4544**2 * 32 // a0 - 2 * 4544**2 * 32 // a1
    assert model("falcon-7b", multi_query=False).prove().invariant


def test_falcon_new_architecture_is_invariant_once_g_over_a_is_fixed():
    p = model("falcon-40b").prove()
    assert not p.invariant and p.dependence == 2 * G * H**2 * L / A
    assert p.fixed_ratio.invariant and p.fixed_ratio.values[RHO] == sp.Rational(1, 16)


def test_phi_with_query_key_layernorms_depends_on_the_head_count():
    p = model("phi-2", qk_layernorm=True).prove()
    assert not p.invariant and p.dependence == 4 * H * L / A
    p = model("phi-2", gqa=True, G=8).prove()
    assert not p.invariant and p.fixed_ratio.invariant


# -- property tests: random configurations, zero mismatches -------------------------------------------

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

SIZES = dict(V=st.integers(2, 3000), L=st.integers(1, 3), C=st.integers(1, 9))


def draw_common(data, heads, head_dim, with_ffn=True):
    hidden = heads * head_dim
    values = dict(V=data.draw(SIZES["V"]), H=hidden, L=data.draw(SIZES["L"]), A=heads)
    if with_ffn:
        values["r"] = sp.Rational(data.draw(st.integers(1, 4 * hidden)), hidden)
    return values


def labelled(head, values, data):
    if head in ("sequence-classification", "token-classification"):
        values["C"] = data.draw(SIZES["C"])
    return values


def draw_head(data, name):
    return data.draw(st.sampled_from((None, *family(name).heads)))


def switches_of(data, name, **fixed):
    out = {}
    for sw in family(name).switches:
        if sw.name not in fixed:
            out[sw.name] = data.draw(st.sampled_from(sw.choices or (True, False)))
    return {**out, **fixed}


@SETTINGS
@given(heads=st.integers(1, 8), head_dim=st.integers(1, 8).map(lambda d: 2 * d), data=st.data())
def test_gpt_neox_random_configurations_match_transformers(heads, head_dim, data):
    head = draw_head(data, "gpt_neox")
    values = labelled(head, draw_common(data, heads, head_dim), data)
    check(model("gpt_neox", head=head, **values, **switches_of(data, "gpt_neox")))


@SETTINGS
@given(heads=st.integers(1, 8), head_dim=st.integers(1, 8).map(lambda d: 2 * d), data=st.data())
def test_gptj_random_configurations_match_transformers(heads, head_dim, data):
    head = draw_head(data, "gptj")
    values = labelled(head, draw_common(data, heads, head_dim), data)
    check(model("gptj", head=head, **values, **switches_of(data, "gptj")))


@SETTINGS
@given(heads=st.integers(1, 8), head_dim=st.integers(1, 12), data=st.data())
def test_opt_random_configurations_match_transformers(heads, head_dim, data):
    head = draw_head(data, "opt")
    values = labelled(head, {**draw_common(data, heads, head_dim), "P": data.draw(st.integers(1, 256))}, data)
    switches = switches_of(data, "opt")
    if switches["project"]:
        embed = data.draw(st.integers(1, 64))
        values["E"] = embed if embed != values["H"] else embed + 1
    check(model("opt", head=head, **values, **switches))


@SETTINGS
@given(heads=st.integers(1, 8), head_dim=st.integers(1, 12), data=st.data())
def test_bloom_random_configurations_match_transformers(heads, head_dim, data):
    head = draw_head(data, "bloom")
    values = labelled(head, draw_common(data, heads, head_dim, with_ffn=False), data)
    check(model("bloom", head=head, **values, **switches_of(data, "bloom")))


@SETTINGS
@given(kv=st.integers(1, 4), groups=st.integers(1, 4), head_dim=st.integers(1, 8).map(lambda d: 2 * d),
       data=st.data())
def test_falcon_random_configurations_match_transformers(kv, groups, head_dim, data):
    head = draw_head(data, "falcon")
    values = labelled(head, draw_common(data, kv * groups, head_dim), data)
    switches = switches_of(data, "falcon")
    if switches["new_decoder_architecture"]:
        values["G"] = kv
    check(model("falcon", head=head, **values, **switches))


@SETTINGS
@given(kv=st.integers(1, 4), groups=st.integers(1, 4), head_dim=st.integers(1, 8).map(lambda d: 2 * d),
       data=st.data())
def test_phi_random_configurations_match_transformers(kv, groups, head_dim, data):
    head = draw_head(data, "phi")
    values = labelled(head, draw_common(data, kv * groups, head_dim), data)
    switches = switches_of(data, "phi")
    if switches["gqa"]:
        values["G"] = kv
    check(model("phi", head=head, **values, **switches))


def test_the_reference_config_is_what_symparams_reads_back():
    """The reference module writes a config that symparams itself reads as the same model."""
    for name in ("opt-350m", "falcon-40b", "phi-2", "gpt-j-6b"):
        m = model(name)
        data = {"model_type": m.family.name, **config(m).to_dict()}
        assert model(data).count == m.count, name
