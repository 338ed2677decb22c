"""Hub ids through huggingface_hub's own cache: a cache laid out in a temporary folder as the library lays it
out (models--ORG--NAME/refs/main, snapshots/COMMIT/config.json), read with HF_HUB_OFFLINE=1, never the network.
Each run is a fresh process: the library reads its settings when it is imported."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
COMMIT = "4d3b2a1c0f9e8d7c6b5a49382716f5e4d3c2b1a0"
# allenai/OLMo-1B-hf (no preset names it; model_type olmo, counted by the inferred formulas): embeddings
# V·H = 50,304 · 2,048 and 16 layers of 3·F·H + 4·H² (F = 8,192, no GQA), worked out by hand
OLMO_1B = 50304 * 2048 + 16 * (3 * 8192 * 2048 + 4 * 2048 * 2048)


@pytest.fixture
def cache(tmp_path):
    """A huggingface_hub cache holding allenai/OLMo-1B-hf's config.json at main and at a tag."""
    repo = tmp_path / "hub" / "models--allenai--OLMo-1B-hf"
    (repo / "snapshots" / COMMIT).mkdir(parents=True)
    shutil.copy(FIXTURES / "allenai" / "OLMo-1B-hf.json", repo / "snapshots" / COMMIT / "config.json")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    (repo / "refs" / "v1").write_text(COMMIT)
    return tmp_path / "hub"


def symparams(cache, *args):
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HF_HOME": str(cache.parent / "home")}
    return subprocess.run([sys.executable, "-m", "symparams", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_a_hub_id_is_read_from_the_cache(cache):
    for name in ("allenai/OLMo-1B-hf", "allenai/OLMo-1B-hf@v1", f"allenai/OLMo-1B-hf@{COMMIT}"):
        r = symparams(cache, "count", name, "--json")
        assert r.returncode == 0 and r.stderr == "", r.stderr
        data = json.loads(r.stdout)
        assert data["model"] == name and data["total"] == OLMO_1B == 1_176_764_416


def test_a_hub_id_not_in_the_cache_offline_is_one_line(cache):
    r = symparams(cache, "count", "allenai/OLMo-7B-hf")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "not in the Hugging Face cache" in r.stderr
    assert "hf download allenai/OLMo-7B-hf config.json" in r.stderr and "--config" in r.stderr
    r = symparams(cache, "count", "allenai/OLMo-1B-hf@v2")  # a revision the cache does not hold
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_a_preset_hub_id_needs_no_cache_and_a_typo_no_hub(cache):
    r = symparams(cache, "count", "meta-llama/Meta-Llama-3-8B", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["model"] == "llama-3-8b"
    r = symparams(cache, "count", "bert-bas")  # no ORG/: never looked up on the hub
    assert r.returncode == 2 and "did you mean bert-base" in r.stderr
    for bad in ("../etc/passwd", "a/b/c", "org/../x"):
        r = symparams(cache, "count", bad)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, bad


def test_without_huggingface_hub_a_hub_id_says_how_to_get_it(monkeypatch):
    from symparams import SymparamsError, model

    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # as if not installed: importing it fails
    with pytest.raises(SymparamsError, match=r"pip install 'symparams\[hub\]'"):
        model("allenai/OLMo-1B-hf")
