"""A refusal names a module as transformers does: the module tensor parallelism cannot split, which a document quotes
from the ``memory`` command, is a module of the model transformers builds from the published config (meta device)."""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pytest
import transformers

from symparams.analysis.inference.meta import meta_device
from tests.reference import FIXTURES, ROOT

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.(md|tex)$", p.name))
REFUSED = re.compile(r"Megatron splits the module (\S+) \(")

#: each preset whose documents quote a refusal → its published config.json
FIXTURE = {"t5-small": "t5-small", "t5-base": "t5-base", "t5-large": "t5-base", "flan-t5-small": "google/flan-t5-base",
           "flan-t5-base": "google/flan-t5-base", "mt5-small": "t5-small", "albert-base-v2": "albert-base-v2",
           "albert-large-v2": "albert-base-v2", "albert-xxlarge-v2": "albert-xxlarge-v2",
           "electra-small": "google/electra-small-discriminator", "mpnet-base": "microsoft/mpnet-base",
           "deberta-v3-base": "microsoft/deberta-v3-base", "deberta-v3-large": "microsoft/deberta-v3-base",
           "opt-350m": "facebook/opt-350m", "deepseek-v2-lite": "deepseek-ai/DeepSeek-V2-Lite",
           "deepseek-v3": "deepseek-ai/DeepSeek-V3"}
#: the article's Transformer has no transformers class to build: a refusal names a module its walk names
NO_TRANSFORMERS_CLASS = {"transformer-base-article"}


@lru_cache(maxsize=None)
def modules(fixture: str) -> frozenset[str]:
    data = json.loads((FIXTURES / fixture / "config.json").read_text())
    config = transformers.AutoConfig.for_model(data.pop("model_type"), **data)
    with meta_device():
        built = transformers.AutoModel.from_config(config)
    return frozenset(name for name, _ in built.named_modules())


def refusals():
    for path in DOCUMENTS:
        for name in REFUSED.findall(path.read_text(encoding="utf-8").replace("\\allowbreak{}", "").replace("\\_", "_")):
            yield pytest.param(path.name.split(".")[0], name, id=f"{path.name}:{name}")


@pytest.mark.parametrize("preset, module", list(refusals()))
def test_a_refused_module_is_named_as_named_modules_names_it(preset, module):
    if preset in NO_TRANSFORMERS_CLASS:
        assert f"(`{module}`)" in (ROOT / "docs" / f"{preset}.en.md").read_text(encoding="utf-8")
        return
    # the layer sizes of a published sibling do not move a module's name (t5-large's is t5-base's)
    assert module in modules(FIXTURE[preset])


def test_the_documents_quote_refusals():
    assert {p.values[0] for p in refusals()} >= {"t5-base", "deepseek-v3", "albert-base-v2"}
