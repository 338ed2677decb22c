"""``count``, ``sweep`` and ``solve`` with ``--config`` and ``--set``: a value set on a config.json a hand-written
family reads is written into the file, as a user would edit it; each figure is compared with the model
transformers builds on the meta device from the edited file."""

import json

import pytest

from tests.reference.cli_runner import command
from tests.reference.edited_configs import BART, LLAMA, NEOX, edited_count

pytestmark = pytest.mark.crosscheck


@pytest.fixture
def config_file(tmp_path):
    def write(config: dict) -> str:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        return str(path)

    return write


def test_count_set_writes_the_value_into_the_file(config_file):
    status, out, err = command("count", "--config", config_file(NEOX), "--set", "H=512", "--json")
    assert status == 0, err
    figures = json.loads(out)
    assert figures["total"] == edited_count(NEOX, {"hidden_size": 512}) == 3_668_992
    assert figures["values"]["r"] == 1 and figures["double_entry"]["of"] == "the config as read"


def test_sweep_grid_points_are_the_edited_files(config_file):
    status, out, err = command("sweep", "--config", config_file(BART), "--grid", "L=2:4", "--set", "H=256", "--json")
    assert status == 0, err
    rows = {row["L"]: row["parameters"] for row in json.loads(out)["rows"]}
    assert rows == {layers: edited_count(BART, {"d_model": 256, "encoder_layers": layers}) for layers in (2, 3, 4)}


def test_sweep_names_what_follows_the_grid(config_file):
    status, out, err = command("sweep", "--config", config_file(NEOX), "--grid", "H=256,512", "--json")
    assert status == 0, err
    sweep = json.loads(out)
    assert sweep["follows"] == {"r": "512/H"} and "r" not in sweep["values"]


def test_solve_answers_with_the_edited_file_s_count(config_file):
    """head_dim 64 stays: with 8 heads the attention is 512 wide whatever H is."""
    llama = {**LLAMA, "head_dim": 64}
    target = edited_count(llama, {"hidden_size": 384, "num_attention_heads": 8})
    status, out, err = command("solve", "--config", config_file(llama), "--for", "H", "--target", str(target),
                               "--set", "A=8", "--json")
    assert status == 0, err
    answer = json.loads(out)
    assert (answer["value"], answer["count"]) == (384, target)
    assert answer["below"]["count"] == edited_count(llama, {"hidden_size": 376, "num_attention_heads": 8})
