"""The Block tree: written forms, counts, repeats, the symbols a tree is written in, facts kept per tree."""

import sympy as sp

from symparams import model
from symparams.core.blocks import embedding, group, layer_norm, per_head_linear, product_as_written, sum_as_written, \
    tree_fact
from symparams.core.symbols import A, B, D, F, G, H, L, V


def test_per_head_form_keeps_a_visible_until_evaluated():
    q = per_head_linear("query", H, A, H / A)
    assert A in q.as_written.free_symbols
    assert A not in q.count.free_symbols
    assert q.count == H**2 + H


def test_repeat_multiplies_and_walk_reports_copies():
    layer = group("layer", [per_head_linear("q", H, A, H / A)], repeat=L)
    assert layer.total == sp.expand(L * (H**2 + H))
    assert [(p, c) for p, _, c in layer.walk()] == [("layer", L), ("layer.q", L)]


def test_product_as_written_keeps_the_order_and_drops_ones():
    e = product_as_written(L, 2, 1, H)
    assert e.args == (L, 2, H) and e.doit() == 2 * H * L
    assert product_as_written(1, 1) == 1 and product_as_written(H) == H


def test_sum_as_written_splices_nested_sums_and_drops_zeros():
    s = sum_as_written(sum_as_written(H, 2), 0, L)
    assert s.args == (H, 2, L) and s.doit() == H + L + 2
    assert sum_as_written(0, 0) == 0 and sum_as_written(0, V) == V


def test_a_tree_knows_the_symbols_it_is_written_in_in_the_house_order():
    tree = group("toy", [embedding("emb", V, H), group("layer", [per_head_linear("q", H, A, H / A),
                                                                 layer_norm("ln", H)], repeat=L)])
    assert tree.symbols == (V, H, L, A)  # A is written per head though it cancels in the count
    assert A not in tree.total.free_symbols
    assert model("llama-2-70b").tree.symbols == (V, H, L, A, G, F)
    assert model("t5-small").tree.symbols == (V, H, L, A, D, B, F)


def test_a_tree_fact_is_computed_once_per_tree_and_shared_by_models_of_the_same_tree():
    calls = []

    @tree_fact
    def blocks(tree):
        calls.append(tree)
        return len(list(tree.walk()))

    base, large = model("bert-base"), model("bert-large")
    assert base.tree is large.tree  # same family, switches and head: one tree
    assert blocks(base.tree) == blocks(large.tree) == len(list(base.tree.walk()))
    assert calls == [base.tree]
    assert blocks(model("bert-base", pooler=False).tree) == len(list(base.tree.walk())) - 2  # pooler, its dense
    assert len(calls) == 2
