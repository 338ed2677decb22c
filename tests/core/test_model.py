"""The Block tree and the Model: written forms, symbols, values, constraints."""

import pytest
import sympy as sp

import symparams
from symparams import SymparamsError, model
from symparams.architectures import FAMILIES
from symparams.blocks import group, per_head_linear
from symparams.family import parse_value
from symparams.presets import PRESETS
from symparams.symbols import A, H, L, P, S, V, r


def every_variant():
    for preset in PRESETS.values():
        fam = FAMILIES[preset.family]
        for head in (None, *fam.heads):
            yield model(preset.name, head=head)
    yield model("transformer-base", positions="none", tie=False)


@pytest.mark.parametrize("m", list(every_variant()), ids=repr)
def test_every_block_written_form_equals_its_count(m):
    for path, block, _ in m.tree.walk():
        if block.tied_to is None:
            assert sp.expand(block.as_written.doit()) == block.count, path


@pytest.mark.parametrize("m", list(every_variant()), ids=repr)
def test_components_add_up_to_the_total(m):
    assert sum(m.components.values()) == m.count
    assert sum(s for _, _, s in m.breakdown()) == 1


def test_per_head_form_keeps_a_visible_until_evaluated():
    q = per_head_linear("query", H, A, H / A)
    assert A in q.as_written.free_symbols
    assert A not in q.count.free_symbols
    assert q.count == H**2 + H


def test_repeat_multiplies_and_walk_reports_copies():
    layer = group("layer", [per_head_linear("q", H, A, H / A)], repeat=L)
    assert layer.total == sp.expand(L * (H**2 + H))
    assert [(p, c) for p, _, c in layer.walk()] == [("layer", L), ("layer.q", L)]


def test_bert_closed_form():
    N = model("bert").total
    assert sp.expand(N - (H**2 * (2 * L * (r + 2) + 1) + H * (L * (r + 9) + P + S + V + 3))) == 0


def test_symbolic_model_keeps_free_symbols_and_refuses_a_count():
    m = model("bert", V=30522, P=512, S=2)
    assert m.free == [H, L, A, r]
    assert m.total.free_symbols == {H, L, r}
    with pytest.raises(SymparamsError, match="no value for H, L, A, r"):
        m.count


def test_subs_returns_a_new_model():
    m = model("bert-base")
    big = m.subs(L=24, H=1024, A=16)
    assert (m.count, big.count) == (109_482_240, 335_141_888)


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


def test_parse_value_never_evaluates_text():
    with pytest.raises(SymparamsError):
        parse_value("H", "__import__('os').system('true')")
    with pytest.raises(SymparamsError):
        parse_value("r", "2**10")


def test_unknown_model_and_head():
    with pytest.raises(SymparamsError, match="unknown model 'gpt-9'"):
        model("gpt-9")
    with pytest.raises(SymparamsError, match="unknown head 'causal-lm' for bert"):
        model("bert-base", head="causal-lm")


def test_sinusoidal_positions_are_counted_but_frozen():
    m = model("transformer-base")
    assert m.count - m.trainable == 2 * 512 * 512


def test_public_surface_is_exactly_all():
    public = {n for n in dir(symparams) if not n.startswith("_")}
    modules = {n for n in public if isinstance(getattr(symparams, n), type(symparams))}
    assert public - modules == set(symparams.__all__)


@pytest.mark.parametrize("m", list(every_variant()), ids=repr)
def test_numeric_counts_equal_the_symbolic_totals_at_the_values(m):
    assert m.count == m.evaluate(m.tree.total)
    assert m.trainable == m.evaluate(m.tree.trainable_total)
    assert m.components == {name: m.evaluate(m.block(name).total) if name in {c.name for c in m.tree.children}
                            else 0 for name in m.components}
    for _, path, block, value, _ in m.rows(depth=3):
        assert value == m.evaluate(block.count * dict((p.split(".", 1)[-1], c) for p, _, c in m.tree.walk())[path])
