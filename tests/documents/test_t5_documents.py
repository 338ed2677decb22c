"""T5's documents say of its feed-forward network only what holds for the document's model: gated (``wi_0``,
``wi_1``, ``wo``; Flan-T5, mT5) or not (``wi``, ``wo``; T5 v1.0), which transformers builds from the published
configs, and they write those module names as code, in both languages and both formats."""

from __future__ import annotations

import json
import re

import pytest
import transformers

from symparams.analysis.inference.meta import meta_device
from tests.reference import FIXTURES, ROOT

T5 = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r"(t5|flan-t5|mt5)-.+\.(en|zh)\.(md|tex)$", p.name))
#: a feed-forward module's name outside a code span (``wi``, ``wo``, ``wi_0``, ``wi_1``)
BARE = re.compile(r"(?<![\w`{-])w[io](?:_0|_1)?(?![\w`}])")
GATED_RULE = {"en": "three matrices between $H$ and $F$", "zh": "之间有三个矩阵"}
PLAIN_RULE = {"en": "two matrices between $H$ and $F$", "zh": "之间有两个矩阵"}


def _plain(text: str) -> str:
    """The document as prose: TeX's breaks and escapes undone, code spans (`` `x` ``, ``\\texttt{x}``) and
    diagram blocks left out."""
    text = text.replace("\\allowbreak{}", "").replace("\\_", "_")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`]*`|\\texttt\{[^}]*\}|<code>.*?</code>", "", text)


def _gated(text: str) -> bool:
    switch = re.search(r"(?:`|\\texttt\{)gated(?:`|\}) = (?:`|\\texttt\{)(true|false)", text.replace("\\_", "_"))
    return switch[1] == "true"


@pytest.mark.parametrize("path", T5, ids=lambda p: p.name)
def test_t5_module_names_are_code(path):
    assert BARE.findall(_plain(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("path", T5, ids=lambda p: p.name)
def test_the_rule_of_thumb_counts_the_feed_forward_matrices_this_model_has(path):
    text, lang = path.read_text(encoding="utf-8"), path.name.split(".")[1]
    gated = _gated(text)
    assert (GATED_RULE[lang] in text, PLAIN_RULE[lang] in text) == (gated, not gated)
    assert "when gated" not in text and "带门控时" not in text


@pytest.mark.parametrize("fixture, preset, gated", [("t5-base", "t5-base", False),
                                                    ("google/flan-t5-base", "flan-t5-base", True)])
def test_which_t5_is_gated_is_what_transformers_builds(fixture, preset, gated):
    data = json.loads((FIXTURES / fixture / "config.json").read_text())
    with meta_device():
        built = transformers.T5Model(transformers.T5Config(**data))
    names = {name.rsplit(".", 1)[-1] for name, _ in built.named_modules()}
    assert ("wi_0" in names, "wi" in names) == (gated, not gated)
    assert _gated((ROOT / "docs" / f"{preset}.en.md").read_text(encoding="utf-8")) == gated
