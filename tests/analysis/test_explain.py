"""``explain``: the ledger that reconciles a published count with the exact one.

Every expected ledger is written by hand from the architecture (the sizes of
each table and layer, as arithmetic), never copied from our output.
"""

import json

import pytest

from symparams import SymparamsError, model
from symparams.analysis.explain import OPTIONAL, explain, parse_claim
from symparams.families.presets import all_presets


def ledger_rows(ledger):
    return [(t.name, t.count, t.included) for t in ledger.terms]


def check_sums(ledger):
    """The included terms add up to the explained count; the remainder is the claim minus it."""
    assert sum(t.count for t in ledger.terms if t.included) == ledger.count
    assert ledger.remainder == ledger.claim - ledger.count
    assert sum(t.count for t in ledger.terms if t.name in (*OPTIONAL, "other weights")) == ledger.exact


# -- BERT ------------------------------------------------------------------------------------

def bert_terms(V, H, P, S, L, r):
    """BERT's ledger terms (with the pooler): the tables, the pooler, biases, norms, the weights of L layers."""
    return {
        "token embeddings": V * H,
        "position embeddings": P * H,
        "token type embeddings": S * H,
        "pooler": H * H + H,
        # per layer: q, k, v, o (H each), the FFN's up (r·H) and down (H)
        "biases": L * (4 * H + r * H + H),
        # the embeddings' LayerNorm, two per layer, each a scale and a shift
        "norms": 2 * H + L * 2 * 2 * H,
        # per layer: four H×H attention matrices and two H×rH FFN matrices: 12·H² at r = 4
        "other weights": L * (4 * H * H + 2 * r * H * H),
    }


def test_bert_base_110m_is_rounding():
    V, H, P, S, L = 30522, 768, 512, 2, 12
    terms = bert_terms(V, H, P, S, L, 4)
    exact = sum(terms.values())
    assert exact == 109_482_240
    ledger = explain(model("bert-base"), "110M")
    assert (ledger.exact, ledger.claim, ledger.count) == (exact, 110_000_000, exact)
    assert ledger.explained and not ledger.equal and ledger.remainder == 110_000_000 - exact == 517_760
    assert ledger.digits == 2 and ledger.unit == "10^6" and not ledger.binary and ledger.departures == ()
    # padded vocabularies: 30,522 → 30,528 (a multiple of 64), 30,592 (of 128), H values per row
    padded = [("vocabulary padded to a multiple of 64", (30528 - V) * H, False),
              ("vocabulary padded to a multiple of 128", (30592 - V) * H, False)]
    assert ledger_rows(ledger) == [(name, n, True) for name, n in terms.items()] + padded
    assert ledger.reason == "rounding: 109,482,240 is 110M to 2 significant digits"
    check_sums(ledger)


def test_bert_large_340m_is_rounding():
    V, H, P, S, L = 30522, 1024, 512, 2, 24
    terms = bert_terms(V, H, P, S, L, 4)
    exact = sum(terms.values())
    assert exact == 335_141_888
    ledger = explain(model("bert-large"), "340M")
    assert ledger.explained and ledger.exact == exact and ledger.count == exact
    assert ledger.remainder == 340_000_000 - exact and ledger.departures == () and ledger.digits == 2
    assert [row for row in ledger_rows(ledger) if row[0] in terms] == [(n, c, True) for n, c in terms.items()]
    assert ledger.reason == "rounding: 335,141,888 is 340M to 2 significant digits"
    check_sums(ledger)


def test_bert_base_with_the_vocabulary_padded_to_128_rows_is_exact():
    exact = 109_482_240
    ledger = explain(model("bert-base"), exact + (30592 - 30522) * 768)
    assert ledger.explained and ledger.equal and ledger.departures == ("vocabulary padded to a multiple of 128",)


# -- GPT-2 -------------------------------------------------------------------------------------

V2, P2, H2, L2 = 50257, 1024, 768, 12
GPT2 = {
    "token embeddings": V2 * H2,
    "position embeddings": P2 * H2,
    # per block: q, k, v (H each), the projection (H), the MLP's up (4H) and down (H)
    "biases": L2 * (3 * H2 + H2 + 4 * H2 + H2),
    # two LayerNorms per block and the final one, each a scale and a shift
    "norms": L2 * 2 * 2 * H2 + 2 * H2,
    "other weights": 12 * L2 * H2 * H2,
}


def test_gpt2_117m_is_not_explained():
    exact = sum(GPT2.values())
    assert exact == 124_439_808
    ledger = explain(model("gpt2"), "117M")
    assert not ledger.explained and ledger.exact == exact and ledger.digits == 3
    # nothing the exact count holds comes near 7.4M except the token table (38.6M): the nearest count leaves
    # out the position table, the biases and the norms, and still reads 124M
    nearest = exact - GPT2["position embeddings"] - GPT2["biases"] - GPT2["norms"]
    assert nearest == 123_532_032 and ledger.count == nearest
    assert ledger.departures == ("position embeddings", "biases", "norms")
    assert ledger.remainder == 117_000_000 - nearest == -6_532_032
    padded = (50304 - V2) * H2  # 50,304 is a multiple of 64 and of 128
    assert ledger_rows(ledger) == [
        ("token embeddings", V2 * H2, True), ("position embeddings", P2 * H2, False),
        ("biases", GPT2["biases"], False), ("norms", GPT2["norms"], False),
        ("other weights", GPT2["other weights"], True),
        ("vocabulary padded to a multiple of 64 or 128", padded, False)]  # one row: the two paddings agree
    assert ledger.reason.startswith("not explained: the nearest count, 123,532,032 (without position embeddings, "
                                    "biases and norms), is 124M to 3 significant digits, not 117M")
    check_sums(ledger)


def test_gpt2_117m_is_the_count_with_gpt1s_vocabulary():
    # what 117M leaves out is vocabulary: with GPT-1's 40,478 BPE tokens the same network rounds to it
    exact = sum(GPT2.values()) - (V2 - 40478) * H2
    ledger = model("gpt2", V=40478).explain("117M")
    assert ledger.explained and ledger.exact == ledger.count == exact == 116_929_536


def test_gpt2_in_binary_units_is_119m():
    # 124,439,808 / 2^20 = 118.67...: a tool dividing by 1,048,576 prints 119M
    exact = sum(GPT2.values())
    assert 118 * 2**20 < exact < 119 * 2**20
    ledger = explain(model("gpt2"), "119M")
    assert ledger.explained and ledger.binary and ledger.unit == "2^20" and ledger.count == exact
    assert ledger.departures == ()
    assert "in binary units (1M = 2^20)" in ledger.reason


def test_gpt2_state_dict_counts_the_tied_head_again():
    exact = sum(GPT2.values())
    ledger = explain(model("gpt2", head="causal-lm"), exact + V2 * H2)
    assert ledger.explained and ledger.equal and ledger.departures == ("tied head counted again",)
    assert ("tied head counted again", V2 * H2, True) in ledger_rows(ledger)


def test_kaplan_non_embedding_count_of_gpt2_is_exact():
    kaplan = 12 * L2 * H2**2
    assert kaplan == 84_934_656
    ledger = explain(model("gpt2"), kaplan)
    assert ledger.explained and ledger.equal and ledger.count == kaplan and ledger.remainder == 0
    assert ledger.departures == ("token embeddings", "position embeddings", "biases", "norms")
    assert ledger.digits is None and ledger.unit == "1"
    assert ledger.reason == ("exact: without token embeddings, position embeddings, biases and norms, "
                             "84,934,656 is the claim")
    check_sums(ledger)


# -- LLaMA -------------------------------------------------------------------------------------

def llama_terms(V, H, L, F, kv):
    """LLaMA with its causal-lm head (untied); ``kv`` the width of K and V (G·H/A)."""
    return {
        "token embeddings": V * H,
        "output head": H * V,
        "norms": L * 2 * H + H,  # two RMSNorm scales per layer and the final one
        "other weights": L * (2 * H * H + 2 * H * kv + 3 * H * F),  # q, o; k, v; gate, up, down
    }


def test_llama_2_7b_7b_is_rounding():
    terms = llama_terms(32000, 4096, 32, 11008, 4096)
    exact = sum(terms.values())
    assert exact == 6_738_415_616
    ledger = explain(model("llama-2-7b", head="causal-lm"), "7B")
    assert ledger.explained and ledger.count == ledger.exact == exact and ledger.departures == ()
    assert ledger.digits == 1 and ledger.unit == "10^9" and ledger.remainder == 7 * 10**9 - exact
    # 32,000 is a multiple of 128: no padding term
    assert ledger_rows(ledger) == [(n, c, True) for n, c in terms.items()]
    assert ledger.reason == "rounding: 6,738,415,616 is 7B to 1 significant digit"
    assert explain(model("llama-2-7b", head="causal-lm"), "6.74B").explained
    check_sums(ledger)


def test_llama_3_8b_8b_with_and_without_its_head():
    terms = llama_terms(128256, 4096, 32, 14336, 8 * 128)
    exact = sum(terms.values())
    assert exact == 8_030_261_248
    ledger = explain(model("llama-3-8b", head="causal-lm"), "8B")
    assert ledger.explained and ledger.count == exact and ledger.remainder == 8 * 10**9 - exact == -30_261_248
    assert ledger_rows(ledger) == [(n, c, True) for n, c in terms.items()]
    base = exact - terms["output head"]
    assert base == 7_504_924_672
    ledger = explain(model("llama-3-8b"), "8B")
    assert ledger.explained and ledger.count == ledger.exact == base and ledger.departures == ()
    assert "output head" not in [t.name for t in ledger.terms]
    check_sums(ledger)


# -- the Transformer ---------------------------------------------------------------------------

def test_transformer_article_total_is_its_weights_only_accounting():
    V, H, P, L = 32000, 512, 512, 6
    terms = {"token embeddings": V * H, "position embeddings": P * H,
             # encoder layer: 4 attention matrices and the FFN's 2·(H × 4H); decoder layer: 8 attention matrices
             "other weights": L * (4 + 8) * H * H + L * (8 + 8) * H * H}
    exact = sum(terms.values())
    assert exact == 60_686_336
    ledger = explain(model("transformer-base-article"), "60,686,336")
    assert ledger.explained and ledger.equal and ledger.departures == () and ledger.remainder == 0
    assert ledger_rows(ledger) == [(n, c, True) for n, c in terms.items()] + [("tied head counted again", V * H,
                                                                               False)]
    assert ledger.reason == "exact: 60,686,336 is the claim"
    # the paper's 65M is not this accounting: the nearest is the count itself, 61M
    paper = explain(model("transformer-base-article"), "65M")
    assert not paper.explained and paper.count == exact and paper.remainder == 65_000_000 - exact == 4_313_664


def test_transformer_base_65m_is_not_explained():
    V, H, P, L = 37000, 512, 512, 6
    frozen = 2 * P * H  # the sinusoidal tables Marian registers, one per stack
    biases = L * (4 * H + 4 * H + H) + L * (8 * H + 4 * H + H)
    norms = L * 2 * 2 * H + L * 3 * 2 * H
    weights = L * (4 + 8) * H * H + L * (8 + 8) * H * H
    exact = V * H + frozen + biases + norms + weights
    assert exact == 63_606_784
    ledger = explain(model("transformer-base"), "65M")
    # the nearest reads the vocabulary padded to 37,120 rows (a multiple of 128): still 64M
    padded = (37120 - V) * H
    assert not ledger.explained and ledger.count == exact + padded == 63_668_224
    assert ledger.departures == ("vocabulary padded to a multiple of 128",)
    assert ledger.remainder == 65_000_000 - exact - padded
    assert ("frozen tables", frozen, True) in ledger_rows(ledger)
    check_sums(ledger)
    # the trainable count leaves out the frozen tables, exactly
    trainable = explain(model("transformer-base"), exact - frozen)
    assert trainable.equal and trainable.departures == ("frozen tables",)


# -- claims ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value, digits, unit", [
    ("110M", 110_000_000, 2, "10^6"), ("6.74B", 6_740_000_000, 3, "10^9"), ("1.3e9", 1_300_000_000, 2, "10^9"),
    ("340M", 340_000_000, 2, "10^6"), ("117M", 117_000_000, 3, "10^6"), ("60,686,336", 60_686_336, None, "1"),
    ("60686336", 60_686_336, None, "1"), (60686336, 60_686_336, None, "1"), ("110.M", 110_000_000, 3, "10^6"),
    ("0.50B", 500_000_000, 2, "10^9"), ("7 billion", 7 * 10**9, 1, "10^9"), ("8b", 8 * 10**9, 1, "10^9"),
    ("1.30e9", 1_300_000_000, 3, "10^9"), (6.74e9, 6_740_000_000, 3, "10^9"), ("1_000", 1000, None, "1"),
])
def test_claims_keep_their_precision(text, value, digits, unit):
    claim = parse_claim(text)
    assert (claim.value, claim.digits, claim.unit_name(False)) == (value, digits, unit)


@pytest.mark.parametrize("bad", ["abc", "0", "-5", "1e999999", "", "1.5", "12XB", "1e9M", "1,2", None, True,
                                 float("inf"), "0.0M"])
def test_bad_claims_are_refused_in_one_line(bad):
    with pytest.raises(SymparamsError) as info:
        explain(model("bert-base"), bad)
    message = str(info.value)
    assert "\n" not in message and "claimed count" in message


def test_1_3e9_rounds_opt_1_3b():
    V, P, H, L = 50272, 2048, 2048, 24
    # learned positions have 2 extra rows; per layer 12·H² weights, 9·H biases, two LayerNorms; a final one
    exact = V * H + (P + 2) * H + L * (12 * H * H + 9 * H + 4 * H) + 2 * H
    ledger = explain(model("opt-1.3b"), "1.3e9")
    assert ledger.explained and ledger.exact == exact == 1_315_758_080 and ledger.digits == 2


# -- every preset ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(all_presets()))
def test_every_preset_explains_its_own_count(name):
    m = model(name)
    for variant in {m, m.with_head(m.lm_head)}:
        ledger = variant.explain(variant.as_released().count)  # a generative base: its released checkpoint
        assert ledger.explained and ledger.equal and ledger.departures == () and ledger.remainder == 0
        check_sums(ledger)
        data = json.loads(json.dumps(ledger.to_dict()))
        assert {"exact", "claim", "explained", "terms", "remainder"} <= set(data)
        assert all(set(t) == {"name", "count", "included"} for t in data["terms"])
        assert variant.explain(variant.as_released().trainable).equal


def test_the_ledger_prints_as_a_table():
    text = str(model("bert-base").explain("110M"))
    lines = text.splitlines()
    assert lines[0] == "bert-base: claim 110M (2 significant digits) against the exact count 109,482,240"
    assert lines[1].split() == ["term", "count", "counted"]
    assert "token embeddings" in lines[2] and lines[2].split()[-2:] == ["23,440,896", "yes"]
    assert lines[-1] == "rounding: 109,482,240 is 110M to 2 significant digits"
    assert any(line.split() == ["remainder", "517,760"] for line in lines)


def test_a_model_without_values_is_refused():
    with pytest.raises(SymparamsError, match="no value for"):
        model("bert").explain("110M")


def test_gpt2_117m_is_the_count_openai_withdrew():
    ledger = explain(model("gpt2"), "117M")
    # openai/gpt-2's README: small was referred to as 117M, medium as 345M, from an error in their counts
    assert "small was called 117M and medium 345M" in ledger.history
    assert "124,439,808" in ledger.history and "354,823,168" in ledger.history
    assert ledger.to_dict()["history"] == ledger.history
    assert explain(model("gpt2-medium"), "345M").history == ledger.history
    assert explain(model("gpt2"), "124M").history == "" and "history" not in explain(model("gpt2"), "124M").to_dict()


@pytest.mark.parametrize("name,claim,checkpoint,reason", [
    # the released checkpoints' counts, as transformers builds LlamaForCausalLM, MistralForCausalLM and
    # Qwen2ForCausalLM from their config.json files (the model cards' sizes: 8.03B, 7.24B, 7.61B)
    ("llama-3-8b", "8.03B", 8_030_261_248, "rounding: 8,030,261,248 is 8.03B to 3 significant digits"),
    ("llama-3-8b", "8B", 8_030_261_248, "rounding: 8,030,261,248 is 8B to 1 significant digit"),
    ("mistral-7b", "7.24B", 7_241_732_096, "rounding: 7,241,732,096 is 7.24B to 3 significant digits"),
    # Qwen's card cuts its size: 7,615,616,512 rounds to 7.62B
    ("qwen2.5-7b", "7.61B", 7_615_616_512,
     "truncation: 7,615,616,512 is 7.61B cut (not rounded) to 3 significant digits; rounded, it is 7.62B"),
])
def test_a_generative_model_is_explained_against_its_released_checkpoint(name, claim, checkpoint, reason):
    ledger = model(name).explain(claim)
    assert (ledger.head, ledger.exact, ledger.count) == ("causal-lm", checkpoint, checkpoint)
    assert ledger.explained and ledger.reason == reason
    assert ledger.truncated == reason.startswith("truncation") == ledger.to_dict()["truncated"]
    assert "against the exact count " + f"{checkpoint:,} with the causal-lm head" in str(ledger)


def test_an_encoder_is_explained_as_it_is_and_a_cut_count_never_rearranged():
    assert model("bert-base").explain("110M").head is None  # BERT's 110M is BertModel's 109,482,240
    # 117M is no cut of GPT-2's 124,439,808, and a cut is never combined with leaving parts out or binary units
    assert not model("gpt2").explain("117M").explained
