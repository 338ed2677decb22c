"""One preset of each variant the presets hold: the cases of the tests that compare the package with itself.

Presets of one family with the same switches and the same symbols given values
(bert-base, bert-large and bert-base-chinese) build the same tree and differ
only in the numbers put in: a check of the tree against another of our own
views of it (the derivation, the live page's formulas, the numeric counts)
learns nothing from the second of them.  The checks against transformers,
published figures and rendered documents keep every preset.
"""

from __future__ import annotations

from symparams import model
from symparams.families.presets import all_presets
from symparams.families.registry import all_families


def _variant(name: str) -> tuple:
    m = model(name)
    return (m.family.name, tuple(sorted((k, str(v)) for k, v in m.switches.items())),
            tuple(sorted(s.name for s in m.values)))


def one_preset_per_variant() -> list[str]:
    """The first preset (by name) of each family, switch combination and set of symbols given values."""
    first: dict[tuple, str] = {}
    for name in sorted(all_presets()):
        first.setdefault(_variant(name), name)
    return sorted(first.values())


def with_every_head(names) -> list[tuple[str, str | None]]:
    """``(preset, head)`` for each of ``names`` with no head and with each head its family has."""
    families, presets = all_families(), all_presets()
    return [(name, head) for name in names for head in (None, *families[presets[name].family].heads)]


def with_each_head_once(names) -> list[tuple[str, str | None]]:
    """``(preset, None)`` for each of ``names``, and each head of each family once, on the family's first preset
    among ``names``: for a check of one of our views against another (the live page's formulas against the
    derivation), where a head's items, built by its family's one function, differ between presets only in
    switches the headless cases and other families' heads already meet (biases, a tied output layer)."""
    families, presets = all_families(), all_presets()
    first: dict[str, str] = {}
    for name in names:
        first.setdefault(presets[name].family, name)
    return [(name, None) for name in names] + [(name, head) for family, name in first.items()
                                               for head in families[family].heads]
