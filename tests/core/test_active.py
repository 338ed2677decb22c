"""The active count: the parameters one token uses, the routed experts it is not sent to left out.

A routed block says how many of its ``repeat`` copies a token passes through
(``used``); every other block is used whole.  The count is exact like the
total: one evaluation of the tree, checked here against the symbolic form
and against hand counts; a model without routed experts has active = total,
and shows nothing new.
"""

import json

import pytest
import sympy as sp

from symparams import SymparamsError, model
from symparams.core.algebra import exact_counts
from symparams.core.blocks import embedding, group, linear, tensor
from symparams.core.formatting import percent
from symparams.core.symbols import F, F_e, H, L, N_e, V, k_e
from tests.cli.test_commands import run
from tests.reference.variants import one_preset_per_variant, with_every_head


def toy_moe(used=k_e):
    """An embedding, L layers of a router and N_e experts (k_e used), an LM head tied to the embedding."""
    experts = group("experts", [tensor("gate_up_proj", 2 * F, H), tensor("down_proj", H, F)], repeat=N_e, used=used)
    layer = group("layers", [linear("gate", H, N_e, bias=False), experts], repeat=L)
    head = linear("lm_head", H, V, bias=False, tied_to="emb")
    return group("toy", [embedding("emb", V, H), layer, head])


def test_a_routed_block_counts_all_its_copies_in_the_total_and_the_used_ones_in_the_active_count():
    tree = toy_moe()
    assert tree.total == sp.expand(V * H + L * (H * N_e + N_e * 3 * F * H))
    assert tree.active_total == sp.expand(V * H + L * (H * N_e + k_e * 3 * F * H))  # the router: all N_e rows
    assert tree.routed and tree.find("layers.experts").copies_used == k_e
    assert k_e in tree.symbols  # a symbol only the active count uses is still the model's


def test_a_block_without_routing_is_used_whole():
    tree = toy_moe(used=None)
    assert not tree.routed and tree.active_total == tree.total
    assert tree.find("lm_head").active_total == 0  # tied: its weights are the embedding's, counted there


def test_the_exact_evaluation_gives_the_active_count_of_every_block():
    tree = toy_moe()
    values = {V: sp.Integer(10), H: sp.Integer(4), L: sp.Integer(3), N_e: sp.Integer(8), k_e: sp.Integer(2),
              F: sp.Integer(5)}
    counts = exact_counts(tree, values)
    experts = counts[id(tree.find("layers.experts"))]
    assert (experts.repeat, experts.used, experts.total, experts.active) == (8, 2, 60, 60)  # 3·5·4 per expert
    layer = counts[id(tree.find("layers"))]
    assert (layer.total, layer.active) == (4 * 8 + 8 * 60, 4 * 8 + 2 * 60)
    root = counts[id(tree)]
    assert root.used * root.active == 10 * 4 + 3 * (32 + 120) == tree.active_total.xreplace(values)


def every_variant():
    for name, head in with_every_head(one_preset_per_variant()):
        yield model(name, head=head)


VARIANTS = list(every_variant())


@pytest.mark.parametrize("m", VARIANTS, ids=repr)
def test_the_active_count_is_the_symbolic_active_total_at_the_values(m):
    assert m.active == m.evaluate(m.tree.active_total) == m.active_total
    if m.routed:
        assert m.active < m.count or all(b.used == b.repeat for _, b, _ in m.tree.walk() if b.used is not None)
    else:
        assert m.active == m.count and m.active_share == 1


def test_mixtral_active_by_hand():
    # 2 of 8 experts of 3·4096·14336 in each of 32 layers; all the rest (embedding, attention, norms, router)
    m = model("mixtral-8x7b")
    expert = 3 * 4096 * 14336
    assert m.count - m.active == 32 * (8 - 2) * expert
    assert model("mixtral-8x7b", k_e=8).active == m.count  # every expert used: nothing left out


def test_the_active_count_needs_every_value():
    with pytest.raises(SymparamsError, match="no value for"):
        _ = model("mixtral").active


def test_to_dict_has_the_active_count_and_for_a_mixture_of_experts_the_active_count_of_every_component():
    data = model("mixtral-8x7b").to_dict(depth=4)
    assert data["active"] == 12_748_853_248 and data["with_lm_head"]["active"] == 12_879_925_248
    decoder = data["tree"][1]
    layers = decoder["children"][0]
    experts = layers["children"][3]["children"][1]
    assert (experts["name"], experts["count"], experts["active"]) == ("experts", 32 * 8 * 3 * 4096 * 14336,
                                                                      32 * 2 * 3 * 4096 * 14336)
    dense = model("llama-3-8b").to_dict(depth=2)
    assert dense["active"] == dense["total"] and "active" not in dense["with_lm_head"]
    assert "active" not in dense["tree"][0]


def test_count_shows_the_active_line_only_for_a_mixture_of_experts():
    code, out, err = run("count", "mixtral-8x7b")
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert lines[-2].split() == ["active", "12,748,853,248", "27.37%"]
    assert lines[-1].endswith("46,702,792,704, 12,879,925,248 active")
    _, out, _ = run("count", "llama-3-8b")
    assert not any(line.startswith("active") for line in out.splitlines())
    _, out, _ = run("count", "mixtral-8x7b", "--depth", "4")
    assert "experts × 8 (2 per token)" in out
    _, out, _ = run("count", "mixtral-8x7b", "--json")
    assert json.loads(out)["active"] == 12_748_853_248


def test_documents_show_the_active_count_only_where_it_differs_from_the_total():
    text = model("mixtral-8x7b").derive("md")
    assert "| Active per token |" in text and "12,748,853,248" in text
    assert "每个词元激活的参数" in model("mixtral-8x7b").derive("md", lang="zh")
    assert "Active per token" in model("mixtral-8x7b").derive("tex")
    assert "Active per token" not in model("mixtral-8x7b", k_e=8).derive("md")
    assert "Active per token" not in model("llama-3-8b").derive("md")


def test_a_preset_value_of_f_is_not_an_expert_width():
    # Mixtral's only FFN is its experts': F is not a symbol of the family, F_e is
    assert F not in model("mixtral").symbols and F_e in model("mixtral").symbols


@pytest.mark.browser
def test_the_live_page_recomputes_the_active_count(tmp_path):
    from tests.documents.test_html_page import cli, open_in_chromium

    path = tmp_path / "mixtral.html"
    cli("derive", "mixtral-8x7b", "--format", "html", "-o", str(path))
    dom = open_in_chromium(path, "k_e=4&L=2")
    m = model("mixtral-8x7b", k_e=4, L=2)
    assert dom.outputs["total"] == f"{m.count:,}" and dom.outputs["active"] == f"{m.active:,}"
    assert dom.outputs["active-share"] == percent(m.active_share)
