"""A sub-config nested in one a config.json gives and left out of it (T5Gemma 2's ``encoder.vision_config``, NeMo
SpeechLM's ``audio_config.asr_config``) is built by transformers with its class's defaults, which are the
default config's there: every such nesting the data reads is counted as transformers builds it.  A sub-config
written without its ``model_type`` is read into however deep its fields lie (T5Gemma 2's ``encoder`` without one
was not, and its text config's layers were counted at the default 26)."""

import json

import pytest
import transformers

from symparams.families import inferred
from tests.reference.inferred_builds import built

pytestmark = pytest.mark.crosscheck


def _saved(model_type: str) -> dict:
    """The default config as ``save_pretrained`` writes it (every sub-config with its ``model_type``)."""
    out = transformers.AutoConfig.for_model(model_type).to_dict()
    for key in ("transformers_version", "architectures", "dtype"):
        out.pop(key, None)
    return out


def _exact_base_entries() -> list[dict]:
    with open(inferred.DATA, "rb") as fh:
        lines = fh.read().split(b"\n")[1:]
    entries = (json.loads(line.rstrip().rstrip(b",")) for line in lines if line.startswith(b"{"))
    return [e for e in entries if e["class"] == "base" and e["exact"]]


def _nested() -> list[tuple[str, str]]:
    """Every (type, dotted sub-config) the data reads that lies inside another sub-config."""
    found = set()
    for entry in _exact_base_entries():
        for name in [*entry["symbols"], *entry.get("defaults", {})]:
            heads = name.split(".")[:-1]
            found.update((entry["model_type"], ".".join(heads[:i])) for i in range(2, len(heads) + 1))
    return sorted(found)


NESTED = _nested()


def test_the_types_the_data_nests_sub_configs_in_are_found():
    """Two types today, each of whose nestings is checked below (a type the data comes to nest is checked too)."""
    assert {model_type for model_type, _ in NESTED} >= {"t5gemma2", "nemo_speechlm"}


@pytest.mark.parametrize("model_type, nested", NESTED, ids=[f"{t}:{n}" for t, n in NESTED])
def test_a_sub_config_left_out_of_a_given_one_counts_as_transformers_builds_it(model_type, nested):
    config = _saved(model_type)
    *heads, leaf = nested.split(".")
    holder = config
    for head in heads:
        holder = holder[head]
    del holder[leaf]
    assert inferred.model(config).count == built(config, "base")


def test_a_sub_config_without_its_model_type_is_read_however_deep():
    """T5Gemma 2's ``encoder`` written without ``model_type``: its ``text_config`` was not read, and the default
    26 layers were counted for the 2 given, 2,879,050,496 parameters where transformers builds 1,010,254,592."""
    text = {"num_hidden_layers": 2}
    config = {"model_type": "t5gemma2", "encoder": {"text_config": text}, "decoder": {"num_hidden_layers": 2}}
    assert inferred.model(config).count == built(config, "base")
