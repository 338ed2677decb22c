"""``sweep`` and ``solve`` on a model read from a config.json vary a symbol as ``--set`` does: the file edited to
each value, as transformers builds it.  A grid point and a solve answer are compared with the model transformers
builds on the meta device from the edited file; what cannot be written as a formula is refused in one line."""

import pytest

import symparams
from symparams.analysis.solve import solve
from symparams.analysis.sweep import Sweep
from symparams.core.errors import SymparamsError
from symparams.core.symbols import SYMBOLS, H
from tests.reference.edited_configs import CASES, NEOX, QWEN3_MOE, SMALL, edited_count

#: types only the inferred formulas read, whose class computes a field the file leaves out from the one varied
INFERRED = [("arcee head_dim left out follows H", {"model_type": "arcee", **SMALL}, {"H": 512},
             {"hidden_size": 512}),
            ("rwkv attention_hidden_size and intermediate_size left out follow H",
             {"model_type": "rwkv", "hidden_size": 256, "num_hidden_layers": 2, "vocab_size": 1000}, {"H": 512},
             {"hidden_size": 512})]

pytestmark = pytest.mark.crosscheck


def _file_value(config, key):
    return int(symparams.model(config).values[SYMBOLS[key].symbol])


#: a sweep over A with key/value heads apart from A counts G·H²/A, no polynomial in A: refused (as for a preset)
SWEPT = [c for c in [*CASES, *INFERRED] if "key/value heads" not in c[0]]
GQA = [c for c in CASES if "key/value heads" in c[0]]


@pytest.mark.parametrize("config, values, fields", [c[1:] for c in SWEPT], ids=[c[0] for c in SWEPT])
def test_a_sweep_point_counts_as_the_edited_file_builds(config, values, fields):
    (key, value), = values.items()
    rows = {row[0]: row[1] for row in Sweep(symparams.model(config), {key: f"{_file_value(config, key)},{value}"})}
    assert rows[value] == edited_count(config, fields)


@pytest.mark.parametrize("config, values, fields", [c[1:] for c in [*CASES, *INFERRED]],
                         ids=[c[0] for c in [*CASES, *INFERRED]])
def test_solve_finds_the_value_whose_edited_file_builds_the_target(config, values, fields):
    (key, value), = values.items()
    target = edited_count(config, fields)
    answer = solve(symparams.model(config), target, key)
    assert (answer.value, answer.count) == (value, target)


@pytest.mark.parametrize("config, values, fields", [c[1:] for c in GQA], ids=[c[0] for c in GQA])
def test_a_sweep_over_heads_the_file_s_key_value_heads_stay_apart_from_is_refused(config, values, fields):
    """The file's key/value heads (the class's default) stay as A moves: the count is no polynomial in A."""
    (key, value), = values.items()
    with pytest.raises(SymparamsError, match=r"^cannot sweep .*: its count is not a polynomial in A"):
        Sweep(symparams.model(config), {key: f"{_file_value(config, key)},{value}"})


def test_heads_that_keys_values_and_head_width_follow_leave_the_count_alone():
    """Arcee's num_key_value_heads and head_dim left out are A and H/A: every head count gives H² in attention."""
    with pytest.raises(SymparamsError, match=r"does not depend on A: every admissible A gives 1,305,856$"):
        solve(symparams.model({"model_type": "arcee", **SMALL}), 10**6, "A")
    assert edited_count({"model_type": "arcee", **SMALL}, {"num_attention_heads": 8}) == 1_305_856


def test_a_width_the_file_gives_is_a_constant_over_h():
    from symparams.analysis.followers import freed

    assert freed(symparams.model(NEOX), {H}).follows == {SYMBOLS["r"].symbol: 512 / H}


def test_a_follower_no_formula_expresses_is_refused_in_one_line():
    """Qwen3-MoE's dense layers with ``decoder_sparse_step`` 2 are every other layer: L_f is a floor of L/2."""
    m = symparams.model({**QWEN3_MOE, "num_experts": 4, "num_hidden_layers": 4, "decoder_sparse_step": 2})
    with pytest.raises(SymparamsError, match=r": L_f follows L in the file's reading in a way no formula "
                                             r"here expresses \(L_f is 2 at L=4, 4 at L=8, ") as refused:
        Sweep(m, {"L": "4:12"})
    assert "\n" not in str(refused.value)


def test_a_disagreement_of_the_double_entry_at_another_value_is_never_stepped_over(monkeypatch):
    """A value whose edited file the family refuses is skipped; one the two derivations count differently is not."""
    from symparams.families import double_entry

    compare = double_entry._compare

    def planted(reading, head, data, entry, source):
        if data.get("hidden_size") == 768:
            raise double_entry.Disagreement(f"{source}: planted disagreement")
        return compare(reading, head, data, entry, source)

    monkeypatch.setattr(double_entry, "_compare", planted)
    with pytest.raises(double_entry.Disagreement, match="with H=768: planted disagreement$"):
        Sweep(symparams.model(NEOX), {"H": "256,512"})
    with pytest.raises(double_entry.Disagreement, match="with H=768: planted disagreement$"):
        solve(symparams.model(NEOX), 7_000_000, "H")
