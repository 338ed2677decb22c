"""``memory --fsdp`` as a real process, against PyTorch's own ``fully_shard`` of the published Llama-3-8B's widths
(two of its layers, to stay quick).

The transformers model is built on the meta device and sharded over a fake process group of 16 ranks as a 2-D
mesh (2 replicas of a shard group of 8, ``--fsdp hybrid-shard --shard-group 8``): its first rank's shards, each
unit's padded gather and the bytes ``--json`` gives for them must agree.
"""

import json

import pytest
from torch.distributed.device_mesh import init_device_mesh

from symparams import model
from tests.analysis.test_fsdp import fake_ranks, local_elements, padded, sharded
from tests.reference.cli_runner import command

pytestmark = pytest.mark.crosscheck


def test_hybrid_shard_json_is_fully_shards_first_rank_of_llama_3_8b():
    code, out, err = command("memory", "llama-3-8b", "--set", "L=2", "--ranks", "16", "--fsdp", "hybrid-shard", "--shard-group", "8",
                             "--seq", "4096", "--json")
    assert code == 0 and err == ""
    rank = json.loads(out)["per_rank"]
    with fake_ranks(16):
        module, layers = sharded(model("llama-3-8b", L=2), init_device_mesh("cpu", (2, 8), mesh_dim_names=("replicate", "shard")))
        shard, root, layer = local_elements(module), padded(module), padded(layers[0])
    assert rank["parameters"] == shard and rank["layout"] == {"fsdp": "hybrid-shard", "data_parallel": 16,
                                                             "shard_group": 8, "replicas": 2}
    assert (rank["weights"], rank["gradients"], rank["optimizer"]) == (4 * shard, 4 * shard, 8 * shard)
    assert rank["unsharded"] == 2 * 8 * (root + 2 * layer)
    assert rank["total"] == rank["weights"] + rank["unsharded"] + rank["gradients"] + rank["optimizer"] + \
        json.loads(out)["activations"]


def test_text_names_the_rank_and_the_convention():
    code, out, _ = command("memory", "gpt2", "--ranks", "4", "--fsdp", "shard-grad-op")
    assert code == 0
    assert "most loaded rank: rank 1 of a shard group of 4" in out and "unsharded (gathered)" in out
    assert "SHARD_GRAD_OP as reshard_after_forward=False" in out
