"""The head-count proof of types known only through inferred formulas, each verdict rebuilt by transformers.

An inferred formula writes a head's width as the modeling code computes it,
floor(H/A), and a size the config leaves out at the value transformers gave
it.  The proof reads it under a premise (A | H; G = A where
num_key_value_heads is left out; G | A where it is given) and holds the
natural quantity (G/A, A·D).  Every verdict below is checked against real
meta-device builds of the same config at two head counts, with the key/value
heads and head widths as the proof says they move.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp
import torch
import transformers

from symparams.analysis.proof import RHO, WIDTH
from symparams.core.errors import SymparamsError
from symparams.core.symbols import SYMBOLS, A, D, G, H, L
from symparams.documents.proof_text import proof_lines
from symparams.families.inferred import model
from symparams.families.inferred_data import DATA, FloorDiv

transformers.logging.set_verbosity_error()

D_V = SYMBOLS["D_v"].symbol
SMALL = {"vocab_size": 100, "num_hidden_layers": 2, "intermediate_size": 96}
#: OLMo with num_key_value_heads left out: transformers sets it to num_attention_heads
OLMO_MHA = {"model_type": "olmo", "hidden_size": 64, "num_attention_heads": 4, **SMALL}
#: OLMo with two key/value heads given
OLMO_GQA = {**OLMO_MHA, "num_key_value_heads": 2}
#: GLM-4 with heads of a width of their own
GLM4 = {"model_type": "glm4", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "pad_token_id": 0, **SMALL}
#: MiniCPM3's multi-head latent attention; v_head_dim left out, so hidden_size // num_attention_heads
MINICPM3 = {"model_type": "minicpm3", "hidden_size": 64, "num_attention_heads": 4, "q_lora_rank": 16,
            "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, **SMALL}
#: encoders: GTE divides H into heads, ERNIE's formula holds no A at all, RoFormer's frozen sinusoidal table
#: is floor(E/A) wide
GTE = {"model_type": "gte", "hidden_size": 64, "num_attention_heads": 4, **SMALL}
ERNIE = {"model_type": "ernie", "hidden_size": 64, "num_attention_heads": 4, **SMALL}
ROFORMER = {"model_type": "roformer", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 32,
            **SMALL}


def real(config: dict, **changes) -> int:
    """The parameters transformers builds on the meta device for ``config`` with ``changes``."""
    values = {k: v for k, v in {**config, **changes}.items() if k != "model_type" and v is not None}
    cfg = transformers.AutoConfig.for_model(config["model_type"], **values)
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(cfg)
    return sum(p.numel() for p in module.parameters())


def proof_of(config: dict):
    return model(config, source=config["model_type"]).prove()


@pytest.mark.crosscheck
def test_olmo_without_key_value_heads_is_invariant_as_transformers_builds_it():
    m = model(OLMO_MHA, source="olmo")
    p = m.prove()
    assert p.invariant and p.derivative == 0 and p.fixed_ratio is None
    assert [c.latex for c in p.conditions] == ["G = A", r"A \mid H"]
    assert set(p.witness) == {1, 2, 4, 8, 16, 32, 64} and set(p.witness.values()) == {m.count}
    # num_key_value_heads unset: transformers gives G = A, and 4, 16 and 64 heads build the same model
    assert {real(OLMO_MHA, num_attention_heads=a) for a in (4, 16, 64)} == {m.count}


@pytest.mark.crosscheck
def test_olmo_with_key_value_heads_depends_on_a_until_g_over_a_is_held():
    m = model(OLMO_GQA, source="olmo")
    p = m.prove()
    assert not p.invariant and p.dependence == 2 * G * H**2 * SYMBOLS["L"].symbol / A
    assert p.derivative == -2 * G * H**2 * SYMBOLS["L"].symbol / A**2
    assert [c.latex for c in p.conditions] == [r"A \mid H", r"G \mid A"]
    (a1, n1), (a2, n2) = p.counterexample
    assert a1 == 4 and a2 % 2 == 0 and n1 != n2
    assert real(OLMO_GQA, num_attention_heads=a1) == n1 == m.count
    assert real(OLMO_GQA, num_attention_heads=a2) == n2  # two key/value heads kept
    fr = p.fixed_ratio
    assert fr.substitutions == {G: RHO * A} and fr.invariant and fr.values == {RHO: sp.Rational(1, 2)}
    assert {real(OLMO_GQA, num_attention_heads=a, num_key_value_heads=a // 2) for a in (2, 4, 8, 16)} == {m.count}


@pytest.mark.crosscheck
def test_heads_of_their_own_width_depend_on_a_until_g_over_a_and_a_times_d_are_held():
    m = model(GLM4, source="glm4")
    p = m.prove()
    assert not p.invariant and p.conditions[0].latex == r"G \mid A"
    (a1, n1), (a2, n2) = p.counterexample
    assert real(GLM4, num_attention_heads=a1) == n1 and real(GLM4, num_attention_heads=a2) == n2 != n1
    fr = p.fixed_ratio
    assert fr.substitutions == {G: RHO * A, D: WIDTH / A} and fr.invariant
    assert fr.values == {RHO: sp.Rational(1, 2), WIDTH: 64}
    assert {real(GLM4, num_attention_heads=a, num_key_value_heads=a // 2, head_dim=64 // a) for a in (2, 4, 8)} \
        == {m.count}


@pytest.mark.crosscheck
def test_latent_attention_depends_on_a_through_its_per_head_projections():
    m = model(MINICPM3, source="minicpm3")
    p = m.prove()
    assert not p.invariant and p.fixed_ratio is None  # no G, no D: nothing natural to hold
    assert [c.latex for c in p.conditions] == [r"D_{v} = \frac{H}{A}", r"A \mid H"]
    (a1, n1), (a2, n2) = p.counterexample
    # v_head_dim left out: transformers makes it hidden_size // num_attention_heads at each head count
    assert real(MINICPM3, num_attention_heads=a1) == n1 == m.count
    assert real(MINICPM3, num_attention_heads=a2) == n2 != n1
    assert D_V not in p.closed_form.free_symbols


@pytest.mark.crosscheck
@pytest.mark.parametrize("config", [GTE, ERNIE], ids=lambda c: c["model_type"])
def test_encoders_that_cut_h_into_heads_are_invariant_as_transformers_builds_them(config):
    m = model(config, source=config["model_type"])
    p = m.prove()
    assert p.invariant and p.derivative == 0
    assert {real(config, num_attention_heads=a) for a in (2, 4, 16)} == {m.count}


@pytest.mark.crosscheck
def test_roformer_depends_on_a_through_its_sinusoidal_table():
    m = model(ROFORMER, source="roformer")
    p = m.prove()
    assert not p.invariant and [c.latex for c in p.conditions] == [r"A \mid E"]
    (a1, n1), (a2, n2) = p.counterexample
    assert real(ROFORMER, num_attention_heads=a1) == n1 == m.count
    assert real(ROFORMER, num_attention_heads=a2) == n2 != n1


def _exact_classes():
    with open(DATA, encoding="utf-8") as fh:
        return [(e["model_type"], e["class"]) for e in json.load(fh)["formulas"] if e["exact"]]


def _halves(total: sp.Expr) -> bool:
    """Whether a count holds a floor by a fixed number of a size that moves with the heads."""
    return any(isinstance(f, FloorDiv) and f.args[1].is_Integer and f.args[0].free_symbols - {L}
               for f in total.atoms(FloorDiv))


def test_no_inferred_proof_holds_a_derivative_or_a_floor_of_a():
    """Every exact inferred class at its type's defaults: the proof's text and data evaluate every derivative
    and, under the premise, divide by A exactly."""
    proved = 0
    for model_type, cls in _exact_classes():
        try:
            m = model({"model_type": model_type}, head=None if cls == "base" else cls, source=model_type)
        except Exception:  # a default config outside the formula's conditions is refused, not proved
            continue
        try:
            p = m.prove()
        except SymparamsError as exc:
            # a floor of half a product (ZAYA's floor(G/2)) is no division by A the premise makes exact: the
            # proof refuses in one line rather than hold a floor of A
            assert "cannot make exact" in str(exc) and _halves(m.tree.total), (model_type, cls, str(exc))
            continue
        text = "\n".join(proof_lines(p)) + json.dumps(p.to_dict())
        assert "Derivative" not in text, (model_type, cls)
        assert not any(f.has(A) for e in (p.closed_form, p.derivative) for f in e.atoms(sp.Function)), model_type
        proved += 1
    assert proved > 400
