"""The Model: symbols, values, constraints, counts, components, variants."""

import pytest
import sympy as sp

from symparams import Model, SymparamsError, model
from symparams.core.symbols import A, H, L, P, S, V, r
from symparams.families.presets import all_presets
from symparams.families.registry import all_families, family
from tests.reference.variants import one_preset_per_variant, with_every_head

# bert-base by hand: 30522·768 + 512·768 + 2·768 + 2·768 (embeddings),
# 12 · (4·(768² + 768) + 2·2·768 + 768·3072 + 3072 + 3072·768 + 768) (encoder), 768² + 768 (pooler)
EMB = (30522 + 512 + 2) * 768 + 2 * 768
ENC = 12 * (4 * (768 * 768 + 768) + 4 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 768)
POOL = 768 * 768 + 768
BERT_BASE = EMB + ENC + POOL
# bert-large: 24·(12·1024² + 13·1024) + (30522 + 512 + 2 + 2)·1024 + 1024² + 1024
BERT_LARGE = 24 * (12 * 1024**2 + 13 * 1024) + (30522 + 512 + 2 + 2) * 1024 + 1024**2 + 1024


def every_variant():
    for name, head in with_every_head(one_preset_per_variant()):
        yield model(name, head=head)
    yield model("transformer-base", positions="none", tie=False)


VARIANTS = list(every_variant())


@pytest.mark.crosscheck
def test_the_hand_counts_are_what_transformers_builds():
    import transformers

    from tests.reference.hf import build, totals

    base = build("BertModel", transformers.BertConfig())  # its defaults are bert-base-uncased's sizes
    large = build("BertModel", transformers.BertConfig(hidden_size=1024, num_hidden_layers=24,
                                                         num_attention_heads=16, intermediate_size=4096))
    parts = [sum(p.numel() for p in part.parameters()) for part in (base.embeddings, base.encoder, base.pooler)]
    assert parts == [EMB, ENC, POOL]
    assert (totals(base)[0], totals(large)[0]) == (BERT_BASE, BERT_LARGE) == (109_482_240, 335_141_888)


@pytest.mark.parametrize("m", VARIANTS, ids=repr)
def test_every_block_written_form_equals_its_count(m):
    for path, block, _ in m.tree.walk():
        if block.tied_to is None:
            assert sp.expand(block.as_written.doit()) == block.count, path


@pytest.mark.parametrize("m", VARIANTS, ids=repr)
def test_components_add_up_to_the_total_and_shares_to_one(m):
    assert sum(m.components.values()) == m.count
    assert sum(s for _, _, s in m.breakdown()) == 1


@pytest.mark.parametrize("m", VARIANTS, ids=repr)
def test_numeric_counts_equal_the_symbolic_totals_at_the_values(m):
    assert m.count == m.evaluate(m.tree.total)
    assert m.trainable == m.evaluate(m.tree.trainable_total)
    assert m.components == {name: m.evaluate(m.block(name).total) if name in {c.name for c in m.tree.children}
                            else 0 for name in m.components}
    for _, path, block, value, _ in m.rows(depth=3):
        assert value == m.evaluate(block.count * dict((p.split(".", 1)[-1], c) for p, _, c in m.tree.walk())[path])


def test_model_takes_a_family_object_and_refuses_a_name():
    m = Model(family("bert"), {"V": 30522, "P": 512, "S": 2, "H": 768, "L": 12, "A": 12, "r": 4})
    assert m.count == BERT_BASE and m.name == "bert"
    with pytest.raises(SymparamsError, match=r"Model\(\) takes a Family, not str") as err:
        Model("bert")
    assert "\n" not in str(err.value)


def test_bert_closed_form():
    N = model("bert").total
    assert sp.expand(N - (H**2 * (2 * L * (r + 2) + 1) + H * (L * (r + 9) + P + S + V + 3))) == 0


def test_symbolic_model_keeps_free_symbols_and_refuses_a_count():
    m = model("bert", V=30522, P=512, S=2)
    assert m.free == [H, L, A, r]  # A is written in the tree, though it cancels
    assert m.total.free_symbols == {H, L, r}
    with pytest.raises(SymparamsError, match="no value for H, L, A, r"):
        m.count


def test_count_names_the_free_symbols_and_the_total_keeps_them():
    m = model("bert", V=30522, P=512, S=2, r=4)
    with pytest.raises(SymparamsError, match="no value for H, L, A"):
        m.count
    assert sp.expand(m.total - (H**2 * (12 * L + 1) + H * (13 * L + 31039))) == 0


def test_subs_returns_a_new_model_and_leaves_the_old_one():
    m = model("bert-base")
    big = m.subs(L=24, H=1024, A=16)
    assert big is not m and m.values[H] == 768
    assert (m.count, big.count) == (BERT_BASE, BERT_LARGE)


def test_breakdown_is_a_table_that_iterates_as_rows():
    b = model("bert-base").breakdown()
    assert list(b) == [("embeddings", EMB, sp.Rational(EMB, BERT_BASE)), ("encoder", ENC, sp.Rational(ENC, BERT_BASE)),
                       ("pooler", POOL, sp.Rational(POOL, BERT_BASE))]
    assert len(b) == 3 and b[1][0] == "encoder" and b.total == BERT_BASE
    component, count, share = b[0]
    assert (component, count) == ("embeddings", EMB)


def test_symbolic_breakdown_has_formulas_and_no_shares():
    b = model("bert").breakdown()
    assert [s for _, _, s in b] == [None, None, None]
    assert sp.expand(b[0][1] - (H * (V + P + S) + 2 * H)) == 0


def test_ratio_r_is_exact():
    m = model("bert-base", r="11008/4096", H=4096, A=32)
    assert m.values[r] == sp.Rational(43, 16)
    inter = m.evaluate(m.block("encoder.layer.intermediate.dense").count)
    assert inter == 4096 * 11008 + 11008


@pytest.mark.parametrize("key,value,message", [
    ("A", 7, "H=768 is not divisible by A=7"),
    ("H", 0, "H must be a positive whole number"),
    ("H", -768, "H must be a positive whole number"),
    ("L", "1.5", "L must be a positive whole number"),
    ("L", 1.0, "L must be a positive whole number"),
    ("V", "٣", "V must be a positive whole number"),
    ("r", "x", "r must be a positive rational"),
    ("r", "-4", "r must be positive"),
    ("r", "1/0", "r must be a positive rational"),
    ("r", "1/7", "r·H=768/7 is not a whole number"),
    ("Q", 1, "unknown key 'Q'"),
    ("pooler", "maybe", "switch pooler takes true or false"),
])
def test_bad_values_are_one_line_errors(key, value, message):
    with pytest.raises(SymparamsError, match=message.replace("(", r"\(").replace("|", r"\|")) as err:
        model("bert-base", **{key: value})
    assert "\n" not in str(err.value)


def test_sinusoidal_positions_are_counted_but_frozen():
    m = model("transformer-base")
    assert m.count - m.trainable == 2 * 512 * 512


def test_evaluate_takes_expressions_and_symbol_names_never_code(tmp_path):
    m = model("bert-base")
    assert m.evaluate("H") == 768 and m.evaluate(m.tree.total) == 109_482_240 and m.evaluate(3) == 3
    marker = tmp_path / "ran"
    with pytest.raises(SymparamsError, match="a SymPy expression or a symbol's name"):
        m.evaluate(f"__import__('pathlib').Path({str(marker)!r}).touch()")
    with pytest.raises(SymparamsError, match="a SymPy expression or a symbol's name"):
        m.evaluate("H*2")
    assert not marker.exists()


@pytest.mark.parametrize("call,needle", [
    (lambda m: m.block(None), "a component's path is text"),
    (lambda m: list(m.rows(depth="x")), "depth must be a whole number"),
    (lambda m: list(m.rows(depth=0)), "depth must be a whole number"),
    (lambda m: m.evaluate(1.5), "not float"),
])
def test_wrong_arguments_are_symparams_errors(call, needle):
    with pytest.raises(SymparamsError, match=needle):
        call(model("bert-base"))


@pytest.mark.parametrize("name,switches", [("transformer-base", {"positions": "none"}), ("electra-small", {"project": False}),
                                          ("llama-2-70b", {"gqa": False})])
def test_with_switches_drops_a_presets_value_the_variant_does_not_use(name, switches):
    assert model(name).with_switches(**switches).count == model(name, **switches).count


def test_a_value_given_by_hand_is_never_dropped_silently():
    from symparams.families.registry import family

    m = Model(family("transformer"), {"V": 37000, "P": 512, "H": 512, "L": 6, "A": 8, "r": 4})
    with pytest.raises(SymparamsError, match="symbol P is not used"):
        m.with_switches(positions="none")


# -- another head ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [p.name for p in all_presets().values() if family(p.family).heads])
def test_with_head_is_the_model_built_with_that_head(name):
    # model(name, head=...) is checked against transformers per family and head (tests/families/)
    base = model(name)
    for head in base.family.heads:
        other = base.with_head(head)
        used = {s: v for s, v in base.values.items() if s in other.symbols}  # causal-lm of distilbart: no encoder L
        assert other.head == head and used.items() <= other.values.items()  # C: a classifier's labels
        assert other.count == model(name, head=head).count, head
    assert base.with_head(base.lm_head).with_head(None).count == base.count


def test_the_lm_head_of_each_family_is_the_one_it_was_trained_with():
    lm_heads = {name: Model(fam).lm_head for name, fam in all_families().items()}
    encoders = {"bert", "albert", "distilbert", "electra", "roberta", "deberta_v2", "mpnet", "modernbert"}
    seq2seq = {"bart", "marian", "t5", "mbart", "pegasus", "m2m_100"}
    assert {name for name, head in lm_heads.items() if head == "masked-lm"} == encoders
    assert {name for name, head in lm_heads.items() if head == "seq2seq-lm"} == seq2seq
    assert {name for name, head in lm_heads.items() if head is None} == {"transformer"}
    assert all(head == "causal-lm" for name, head in lm_heads.items() if name not in encoders | seq2seq | {"transformer"})


def test_a_switch_the_head_decides_is_decided_anew_unless_given():
    # BertForMaskedLM builds no pooler: 109,482,240 less the pooler's 768·768 + 768, plus the LM transform
    # (768·768 + 768), its LayerNorm (2·768) and the decoder's bias (30522); the weight is tied
    assert model("bert-base").with_head("masked-lm").count == 109_482_240 - 590_592 + 590_592 + 2 * 768 + 30_522
    assert model("bert-base", pooler=True).with_head("masked-lm").count == 109_482_240 + 590_592 + 2 * 768 + 30_522


def test_the_json_summary_of_a_base_model_gives_the_total_with_its_lm_head():
    # Llama-3-8B's published 8,030,261,248 includes its untied 128,256 x 4,096 LM head
    assert model("llama-3-8b").to_dict()["with_lm_head"] == {"head": "causal-lm", "total": 8_030_261_248}
    assert "with_lm_head" not in model("llama-3-8b", head="causal-lm").to_dict()
    assert "with_lm_head" not in model("transformer-base").to_dict()
