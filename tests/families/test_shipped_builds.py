"""Every formula the shipped data marks exact, against the model transformers builds from the same config.json.

``count --config`` of a type no hand-written family reads prints what
``families/data/inferred.json`` says; the data is checked here, not re-inferred.
For each type, each exact class is built on the meta device at the type's default
config and at the small odd configuration its costs were checked on (see
:mod:`tests.reference.shipped_builds`), and compared per tensor (elements and
trainable flag of each parameter path), in total and in trainable count.  A
default the formula's own conditions refuse fails, unless the entry says a size
it needs has no rule (``follows`` null: transformers computes it in a way the
data does not hold); that size is then given as transformers computed it.
"""

from __future__ import annotations

import pytest

from symparams.core.errors import SymparamsError
from symparams.families import inferred
from tests.reference.hf import totals
from tests.reference.shipped_builds import (as_built, build, default_config, head_of, merged, nested, odd_config,
                                            per_tensor, shipped, transformers_tensors)

pytestmark = pytest.mark.crosscheck

TYPES = sorted({e["model_type"] for e in shipped()})

#: odd configurations the formula's own conditions refuse (the costs were checked on a configuration outside the
#: parameter formula's conditions): type → what the refusal names.  Any other refusal fails.
ODD_REFUSED = {"encoder-decoder": "the formula needs decoder.hidden_size divides decoder.intermediate_size"}


def classes_of(model_type: str) -> list[dict]:
    return [e for e in shipped() if e["model_type"] == model_type]


def given_without_rule(entry: dict) -> list[str]:
    """The sizes the entry says a config.json must give: transformers computes them by a rule it does not hold."""
    return sorted(f for f, rule in entry.get("follows", {}).items() if rule is None)


def counted(entry: dict, config: dict, hf, label: str):
    """The inferred model of ``config``; where it is refused, again with the sizes the entry says it needs given
    as transformers computed them (any other refusal fails the test, naming it)."""
    try:
        return inferred.model(config, head=head_of(entry["class"]), source=entry["model_type"])
    except SymparamsError as refused:
        needed = given_without_rule(entry)
        assert needed, f"{label}: refused, and the entry names no size it needs: {refused}"
    given = nested({f: _attribute(hf, f) for f in needed})
    return inferred.model(merged(config, given), head=head_of(entry["class"]), source=entry["model_type"])


def _attribute(hf, dotted: str):
    """A field as transformers writes it to a config.json (a sub-config's too)."""
    held = hf.to_dict()
    for name in dotted.split("."):
        held = held[name]
    return held


def compare(entry: dict, config: dict, where: str) -> list[str]:
    """What differs between the formula and the build of ``config`` (empty: nothing)."""
    label = f"{entry['model_type']} {entry['class']} at {where}"
    module, hf = build(config, entry["class"])
    ours = counted(entry, as_built(config, hf), hf, label)
    theirs, mine = transformers_tensors(module), per_tensor(ours.reference_counts())
    wrong = [f"{label}: {path} is {mine.get(path)} by the formula, {theirs.get(path)} built"
             for path in sorted(set(theirs) | set(mine)) if mine.get(path) != theirs.get(path)]
    if (ours.count, ours.trainable) != totals(module):
        wrong.append(f"{label}: (total, trainable) {(ours.count, ours.trainable)} by the formula, "
                     f"{totals(module)} built")
    if type(module).__name__ != entry["model_class"]:
        wrong.append(f"{label}: transformers builds {type(module).__name__}, the entry names {entry['model_class']}")
    return wrong


@pytest.mark.parametrize("model_type", TYPES)
def test_every_exact_class_counts_each_tensor_as_transformers_builds_it(model_type):
    wrong = []
    for entry in classes_of(model_type):
        wrong += compare(entry, default_config(entry), "its default config")
        odd = odd_config(entry)
        if model_type in ODD_REFUSED:
            with pytest.raises(SymparamsError, match=ODD_REFUSED[model_type]):
                inferred.model(odd, head=head_of(entry["class"]))
        elif odd is not None:
            wrong += compare(entry, odd, "the odd config its costs were checked on")
    assert not wrong, "\n".join(wrong)


def test_the_odd_configurations_are_recorded_for_most_entries():
    """The odd configuration comes from the entry's cost check; an entry without one is checked at its default
    only (the parameter verification records how many configurations it saw and their seed, not their values)."""
    without = [(e["model_type"], e["class"]) for e in shipped() if odd_config(e) is None]
    assert len(without) < len(shipped()) // 4, without
