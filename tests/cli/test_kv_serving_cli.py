"""``memory --kv-dtype D --block-size [B]``: the command line passes a server's cache to the library, and
``--fit`` answers in whole blocks."""

import json

from tests.reference.cli_runner import command

SERVE = ("memory", "llama-3-8b", "--optimizer", "none")
PER_TOKEN = 2 * 32 * 8 * 128  # keys and values of 32 layers of 8 heads of 128: elements a token leaves


def test_the_kv_dtype_reaches_the_cache():
    for kv, per_element in (("fp32", 4), ("fp8", 1)):  # the weights are bf16: 2 bytes an element without it
        code, out, err = command(*SERVE, "--seq", "100", "--kv-dtype", kv, "--json")
        assert code == 0 and err == ""
        data = json.loads(out)
        assert data["kv_dtype"] == kv and data["kv_cache_per_token"] == per_element * PER_TOKEN


def test_a_bare_block_size_is_16_and_fit_answers_whole_blocks():
    code, out, err = command(*SERVE, "--kv-dtype", "fp8", "--block-size", "--fit", "80GB", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["memory"]["kv_block_size"] == 16 and data["value"] % 16 == 0
    code, out, _ = command(*SERVE, "--kv-dtype", "fp8", "--block-size", "48", "--fit", "80GB", "--json")
    assert json.loads(out)["value"] % 48 == 0
    # one sequence of 17 tokens takes two blocks of 16: 32 tokens' worth
    code, out, _ = command(*SERVE, "--block-size", "--seq", "17", "--json")
    assert json.loads(out)["kv_cache"] == 32 * PER_TOKEN * 2
