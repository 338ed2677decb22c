"""The prover on every family: invariant with its derivation, or not with the dependence and a counterexample.

Counterexamples are re-checked by building both models with transformers on
the meta device; the fixed-ratio step (G = ρ·A) is re-checked the same way.
"""

import json
import subprocess
import sys

import pytest
import sympy as sp

from symparams import model
from symparams.analysis.proof import CANONICAL, RHO, WIDTH, prove
from symparams.core.blocks import embedding, group, per_head_linear
from symparams.core.family import Constraint, Family
from symparams.core.model import Model
from symparams.core.symbols import A, B, D, F, G, H, L, L_d, V
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from symparams.families.registry import all_families, family
from tests.reference import FIXTURES
from tests.reference.decoders import llama_config, t5_config
from tests.reference.hf import build, totals

pytestmark = pytest.mark.crosscheck

# with their default switches: T5's D and bias table; grouped-query attention (G key/value heads) in llama and
# its kin; Gemma's and Qwen 3's own head widths D; Falcon's one key/value head; MPNet's relative bias per head;
# DeepSeek's latent attention (its heads' widths are their own); StarCoder 2's 2 key/value heads of 24
# (StableLM's default is multi-head attention: invariant)
NOT_INVARIANT = {"t5", "llama", "mistral", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "gemma3_text", "olmo2",
                 "cohere", "starcoder2", "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "falcon", "mpnet"}
#                                         MPNet's relative bias table (B·A)


def admissible(m, a, values):
    """Head count ``a`` satisfies every constraint of ``m``'s family at ``values``."""
    trial = {**values, A: sp.Integer(a)}
    for c in m.family.constraints:
        if c.expr.free_symbols <= set(trial):
            v = c.expr.xreplace(trial)
            if not (v.is_Integer and v > 0):
                return False
    return True


# -- every family --------------------------------------------------------------

@pytest.mark.parametrize("name", list(all_families()))
def test_every_family_gets_its_verdict_with_a_reason(name):
    p = Model(family(name)).prove()
    assert p.invariant == (name not in NOT_INVARIANT)
    if p.invariant:
        assert p.derivative == 0 and p.dependence == 0 and A not in p.closed_form.free_symbols
        assert any(c.latex == r"A \mid H" for c in p.conditions)
    else:
        assert p.derivative != 0 and p.dependence != 0
        (a1, n1), (a2, n2) = p.counterexample
        assert a1 != a2 and n1 != n2
        assert p.counterexample_source and p.counterexample_values


@pytest.mark.parametrize("name", [n for n, p in all_presets().items() if p.family in NOT_INVARIANT])
def test_counterexample_head_counts_satisfy_every_constraint(name):
    p = model(name).prove()
    if p.invariant:
        assert model(name).switches.get("gqa") is False  # llama-2-7b, -13b: plain multi-head attention
        return
    (a1, n1), (a2, n2) = p.counterexample
    for a, n in ((a1, n1), (a2, n2)):
        assert admissible(model(name), a, p.counterexample_values)
        assert n == p.written.xreplace({**p.counterexample_values, A: a})
    assert p.counterexample_source == "model" and a1 == model(name).values[A]


# -- GPT-2: invariant -------------------------------------------------------------

@pytest.mark.parametrize("name", ["gpt2", "gpt2-medium", "gpt2-xl", "distilgpt2"])
def test_gpt2_presets_are_invariant_and_every_divisor_gives_the_same_total(name):
    m = model(name)
    p = m.prove()
    assert p.invariant and p.derivative == 0 and p.counterexample is None and p.fixed_ratio is None
    assert sorted(p.witness) == sp.divisors(int(m.values[H]))
    assert set(p.witness.values()) == {m.count}
    assert [c.latex for c in p.conditions] == [r"A \mid H"]


def test_gpt2_fused_c_attn_is_written_per_head_for_q_k_v_and_a_cancels():
    p = Model(family("gpt2"), switches={"cross_attention": True}).prove()
    assert p.invariant
    steps = [s for s in p.steps if s.key == "per_head"]
    paths = {path for s in steps for path in s.paths}
    # named as named_parameters() names them: the fused c_attn tensor, and which part of it
    assert {"h.*.attn.c_attn (query)", "h.*.attn.c_attn (key)", "h.*.attn.c_attn (value)",
            "h.*.crossattention.q_attn"} <= paths
    assert all(A in s.lhs.free_symbols and s.rhs == H**2 + H for s in steps)


# -- LLaMA: multi-head invariant, grouped-query not, fixed ratio invariant again ------

def test_llama_2_7b_multi_head_attention_is_invariant():
    for m in (model("llama-2-7b"), from_config(str(FIXTURES / "meta-llama/Llama-2-7b-hf/config.json"))):
        p = m.prove()
        assert p.invariant and p.derivative == 0 and G not in p.closed_form.free_symbols
        assert sorted(p.witness) == sp.divisors(4096)
        assert set(p.witness.values()) == {m.count} == {6_607_343_616}
        assert [c.latex for c in p.conditions] == [r"A \mid H"]  # no G | A: there is no G


def test_llama_config_with_g_equal_a_is_plain_multi_head_attention_and_invariant():
    data = {"model_type": "llama", "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 2,
            "hidden_size": 1024, "intermediate_size": 2816, "vocab_size": 32000}
    m = model(data)
    assert m.switches["gqa"] is False
    assert m.prove().invariant


def test_llama_2_70b_depends_on_a_through_the_key_value_projections():
    p = model("llama-2-70b").prove()
    assert not p.invariant
    assert sp.simplify(p.derivative - (-2 * G * H**2 * L / A**2)) == 0
    assert p.dependence == 2 * G * H**2 * L / A
    kv = next(s for s in p.steps if s.key == "per_head" and G in s.lhs.free_symbols)
    assert A in kv.lhs.free_symbols and kv.rhs == G * H**2 / A
    assert set(kv.paths) == {"layers.*.self_attn.k_proj", "layers.*.self_attn.v_proj"}  # as named_parameters()
    assert [c.latex for c in p.conditions] == [r"A \mid H", r"G \mid A"]


def test_llama_2_70b_counterexample_is_rechecked_by_building_both_models():
    m = model("llama-2-70b")
    p = m.prove()
    (a1, n1), (a2, n2) = p.counterexample
    assert (a1, n1) == (64, m.count) and n1 != n2
    for a, n in ((a1, n1), (a2, n2)):
        assert 8192 % a == 0 and a % 8 == 0 and (8192 // a) % 2 == 0
        assert totals(build("LlamaModel", llama_config(m, num_attention_heads=a, head_dim=8192 // a)))[0] == n


def test_llama_holding_g_over_a_fixed_is_invariant_again():
    m = model("llama-2-70b")
    fr = m.prove().fixed_ratio
    assert fr.substitutions == {G: RHO * A} and fr.invariant and fr.derivative == 0
    assert A not in fr.closed_form.free_symbols and RHO in fr.closed_form.free_symbols
    assert fr.values == {RHO: sp.Rational(1, 8)}
    at = {s: v for s, v in m.values.items() if s not in (A, G)}
    assert fr.closed_form.xreplace({**at, RHO: fr.values[RHO]}) == m.count
    keys = [s.key for s in m.prove().steps]
    assert keys.index("dependence") < keys.index("fixed_ratio") < keys.index("fixed_ratio_simplified") \
        < keys.index("fixed_ratio_derivative")
    # transformers agrees: with G/A = 1/8 held, 32, 64 and 128 heads give the same model size, the one-layer
    # llama-2-70b's (64 heads, 8 key/value heads)
    sizes = {totals(build("LlamaModel", llama_config(m, num_attention_heads=a, num_key_value_heads=a // 8,
                                                     head_dim=8192 // a, num_hidden_layers=1)))[0]
             for a in (32, 64, 128)}
    assert sizes == {model("llama-2-70b", L=1).count}


def test_llama_gqa_written_with_g_equal_a_is_invariant_only_with_the_ratio_held():
    m = model("llama", gqa=True, V=32000, H=4096, L=32, A=32, G=32, F=11008)
    p = m.prove()
    assert not p.invariant  # G held at 32 while A moves: K, V change
    assert p.fixed_ratio.invariant and p.fixed_ratio.values == {RHO: 1}
    assert m.count == model("llama-2-7b").count


def test_llama_own_head_width_depends_on_a_until_g_over_a_and_a_times_d_are_fixed():
    p = model("llama", free_head_dim=True).prove()
    assert not p.invariant
    assert p.dependence == sp.expand(2 * A * D * H * L)  # q_proj and o_proj: A·D each
    # G = ρ·A and D = W/A: q and o are H·W each, k and v H·ρ·W each, whatever A is
    assert p.fixed_ratio.substitutions == {G: RHO * A, D: WIDTH / A} and p.fixed_ratio.invariant
    assert p.fixed_ratio.closed_form.has(RHO, WIDTH) and not p.fixed_ratio.closed_form.has(A)


def test_symbolic_llama_counterexample_is_at_a_presets_values_and_says_which():
    m = model("llama")
    p = m.prove()
    assert p.witness == {} and p.counterexample_source == "preset llama-2-70b"
    assert p.counterexample_values == {V: 32000, H: 8192, L: 80, G: 8, F: 28672}
    (a1, n1), (a2, n2) = p.counterexample
    assert (a1, n1) == (64, model("llama-2-70b").count)
    assert n2 == model("llama-2-70b", A=a2).count != n1


# -- T5: not invariant -------------------------------------------------------------

def test_t5_depends_on_a_through_the_bias_table_and_the_inner_dimension():
    p = model("t5-small").prove()
    assert not p.invariant and p.conditions == ()
    assert p.dependence == 2 * A * B + 12 * A * D * H * L
    # with the inner width A·D = W held (D = W/A), the twelve A·D·H per layer are 12·W·H: only the bias tables
    # still hold A
    assert p.fixed_ratio.substitutions == {D: WIDTH / A} and p.fixed_ratio.derivative == 2 * B
    assert p.derivative == 2 * B + 12 * D * H * L
    bias = next(s for s in p.steps if s.key == "per_head" and B in s.lhs.free_symbols)
    assert set(bias.paths) == {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias",
                               "decoder.block.0.layer.0.SelfAttention.relative_attention_bias"}  # as transformers
    assert bias.rhs == A * B


def test_t5_small_counterexample_is_rechecked_by_building_both_models():
    m = model("t5-small")
    (a1, n1), (a2, n2) = m.prove().counterexample
    assert (a1, n1) == (8, 60_506_624) and n1 != n2
    for a, n in ((a1, n1), (a2, n2)):
        assert totals(build("T5Model", t5_config(m, num_heads=a)))[0] == n


def test_t5_with_the_inner_width_held_grows_by_its_bias_tables_only():
    # transformers agrees: t5-small's A·D = 512 kept, 4, 8 and 16 heads differ by the 2·B·A bias entries alone
    m = model("t5-small")
    sizes = {a: totals(build("T5Model", t5_config(m, num_heads=a, d_kv=512 // a)))[0] for a in (4, 8, 16)}
    assert (sizes[8] - sizes[4], sizes[16] - sizes[8]) == (2 * 32 * 4, 2 * 32 * 8)  # B = 32 buckets


def test_symbolic_t5_counterexample_is_at_t5_small_and_keeps_given_values():
    p = model("t5").prove()
    assert p.counterexample_source == "preset t5-small"
    assert p.counterexample == ((8, 60_506_624), (16, 79_381_504))
    p = model("t5", L=2, gated=True).prove()
    assert p.counterexample_values[L] == 2 and p.counterexample_values[H] == 512
    (a1, n1), (a2, n2) = p.counterexample
    m = model("t5-small", L=2, gated=True)
    for a, n in ((a1, n1), (a2, n2)):
        assert totals(build("T5Model", t5_config(m, num_heads=a)))[0] == n


def test_t5_with_its_own_decoder_depth():
    p = model("t5", split_layers=True).prove()
    assert p.dependence == 2 * A * B + 4 * A * D * H * L + 8 * A * D * H * L_d
    assert p.counterexample_source == "canonical"  # no preset has L_d: small sizes picked


def test_canonical_values_when_no_preset_gives_them():
    def build_toy(switches, head):
        return group("toy", [embedding("emb", V, H), per_head_linear("q", H, A, D)], ref="")

    toy = Family("toy", {"en": "toy", "zh": "toy"}, build_toy,
                 constraints=(Constraint(H / A, "H={H} not divisible by A={A}"),))
    p = prove(Model(toy))
    assert p.counterexample_source == "canonical"
    assert p.counterexample_values == {V: CANONICAL["V"], H: CANONICAL["H"], D: CANONICAL["D"]}
    (a1, n1), (a2, n2) = p.counterexample
    assert a1 == CANONICAL["A"] and CANONICAL["H"] % a2 == 0
    for a, n in ((a1, n1), (a2, n2)):
        assert n == CANONICAL["V"] * CANONICAL["H"] + a * CANONICAL["H"] * CANONICAL["D"] + a * CANONICAL["D"]


# -- output -------------------------------------------------------------------------

def test_proof_json_has_the_new_fields_and_keeps_the_old_ones():
    data = json.loads(json.dumps(model("llama-2-70b").prove().to_dict()))
    assert {"model", "invariant", "conditions", "closed_form", "derivative", "dependence", "steps", "witness",
            "counterexample"} <= set(data)
    assert data["counterexample_source"] == "model"
    assert data["counterexample_values"] == {"V": 32000, "H": 8192, "L": 80, "G": 8, "F": 28672}
    assert data["fixed_ratio"]["substitutions"] == {"G": "A*rho"} and data["fixed_ratio"]["invariant"] is True
    assert data["fixed_ratio"]["values"] == {"rho": "1/8"}
    t5 = json.loads(json.dumps(model("t5-small").prove().to_dict()))["fixed_ratio"]
    # A·D = W held: only the relative attention bias tables (B·A per stack) still hold A
    assert t5["substitutions"] == {"D": "W/A"} and t5["derivative"] == "2*B" and t5["values"] == {"W": "512"}
    assert json.loads(json.dumps(model("bert").prove().to_dict()))["fixed_ratio"] is None


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "symparams", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cli_prove_t5_small_shows_dependence_and_counterexample():
    out = run("prove", "t5-small")
    assert "t5-small: the parameter count depends on the number of heads A." in out
    assert "N depends on A through 2*A*B + 12*A*D*H*L" in out
    assert "still holding A: 2*A*B, B for each head" in out  # A·D fixed: the relative bias tables remain
    assert "counterexample: A=8 gives 60,506,624, A=16 gives 79,381,504" in out


def test_cli_prove_llama_2_70b_shows_the_fixed_ratio_and_symbolic_llama_says_which_values():
    out = run("prove", "llama-2-70b")
    assert "terms holding A: 2*L*G*(H*(H/A)) = 2*L*G*H**2/A   (still holds A)" in out
    assert "N depends on A through 2*G*H**2*L/A" in out
    assert "holding G/A = rho fixed (G = A*rho)" in out and "dN/dA = 0: invariant again (here rho = 1/8)" in out
    assert "premise: G divides A" in out
    out = run("prove", "llama")
    assert "counterexample (values of preset llama-2-70b: V=32000 H=8192 L=80 G=8 F=28672): A=64 gives " \
           "68,714,504,192, A=128 gives 68,043,415,552" in out


def test_every_symbol_has_a_canonical_size_for_counterexamples():
    # without one the prover would try 2, which can break a constraint (L_f < L) and find no counterexample
    from symparams.core.symbols import SYMBOLS
    assert set(CANONICAL) == set(SYMBOLS)


def test_heads_of_their_own_width_are_not_said_to_be_h_over_a_wide():
    # Qwen3-0.6B: 16 heads of width 128 in a hidden size of 1024; "H/A is the head dimension" would be false
    stated = [c.en for c in model("qwen3-0.6b").prove().conditions]
    assert stated == ["G divides A: each key/value head serves A/G query heads"]
    assert any("H/A is the head dimension" in c.en for c in model("llama-3-8b").prove().conditions)


def _transformers_total(m) -> int:
    """What transformers builds for ``m`` (base model), through the reference module of its family."""
    from tests.reference import classic_decoders, llama_like, moe, more_families
    for ref in (llama_like, classic_decoders, moe):
        try:
            return totals(ref.reference(m)[0])[0]
        except (KeyError, ValueError):
            continue
    return totals(more_families.reference(more_families.config(m))[0])[0]


FIRST_DEPENDENT = {p.family: name for name, p in reversed(all_presets().items())  # t5 and llama: rebuilt above
                   if p.family not in {"t5", "llama"} and not model(name).prove().invariant}


@pytest.mark.parametrize("name", sorted(FIRST_DEPENDENT.values()))
def test_every_new_familys_counterexample_is_rebuilt_in_transformers(name):
    # the two head counts the prover names give, built by transformers at the same sizes, its two totals
    (a1, n1), (a2, n2) = model(name).prove().counterexample
    assert n1 != n2
    assert [_transformers_total(model(name, A=a)) for a in (a1, a2)] == [n1, n2]


@pytest.mark.parametrize("name", list(all_families()))
def test_every_family_lists_the_terms_holding_a_and_no_other_term_holds_it(name):
    p = Model(family(name)).prove()
    assert p.terms and all(t.paths for t in p.terms)
    assert A not in p.rest.free_symbols  # "no other term contains A"
    assert sp.expand(p.collected.doit()) == sp.expand(p.written)  # collected, not changed
    # invariant exactly when each term loses A multiplied out (every term's copies hold no A)
    assert p.invariant == all(t.cancels for t in p.terms)


@pytest.mark.parametrize("name,config_class,module_class,values", [
    ("gemma2", "Gemma2Config", "Gemma2Model", dict(H=64, A=4, D=48, G=2)),
    ("t5", "T5Config", "T5Model", dict(H=64, A=4, D=48)),
])
def test_the_output_projection_has_its_one_head_line_and_a_heads_of_it_are_the_built_module(name, config_class,
                                                                                          module_class, values):
    # each head's D outputs meet D rows of W^O: one head holds D·H, A heads the o_proj transformers builds
    import transformers

    p = model(name, **values).prove()
    term = next(t for t in p.terms if t.paths[0].endswith(("self_attn.o_proj", "SelfAttention.o")))
    heads, one = term.split
    assert heads == A and sp.expand(one.doit()) == D * H
    fields = dict(hidden_size=64, num_attention_heads=4, head_dim=48, num_key_value_heads=2, intermediate_size=96,
                  num_hidden_layers=1, vocab_size=64) if name == "gemma2" else dict(
        d_model=64, num_heads=4, d_kv=48, d_ff=96, num_layers=1, vocab_size=64)
    built = build(module_class, getattr(transformers, config_class)(**fields))
    o_proj = next(m for path, m in built.named_modules() if path.endswith(("self_attn.o_proj", "SelfAttention.o")))
    assert o_proj.weight.numel() == values["A"] * (one.doit()).subs({D: 48, H: 64})
