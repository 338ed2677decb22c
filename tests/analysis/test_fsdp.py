"""FSDP's first rank against PyTorch's own FSDP2 (``torch.distributed.fsdp.fully_shard``).

Tiny transformers models are built on the meta device and sharded by
``fully_shard`` itself, each layer and then the root, in one process: a fake
process group (``torch.testing._internal.distributed.fake_pg``) stands for
the ranks, so PyTorch splits every parameter as it would on ``K`` GPUs, with
no communication.  Checked against what it builds:

* every parameter's local shard on rank 0 (``DTensor.to_local()``), summed:
  the shard our weights, gradients and optimizer state are 4, 4 and 8 bytes a
  parameter of; and that the last rank holds no more (rank 0 is the most
  loaded);
* each unit's padded shard (``FSDPParam.padded_sharded_param_size``) times
  ``K``: what an all-gather of the unit holds, for the unsharded parameters
  (``full-shard``: the root and two layers; ``shard-grad-op``: every unit);
* a 2-D mesh (``hybrid-shard``): the shard over a group of ``K``, not ``N``.

An odd ``K`` (3) makes PyTorch pad: GPT-2's 1,001-row table, Mixtral's 4
experts, Llama's 4 key/value heads of 8 do not divide by it.
"""

import re
from contextlib import contextmanager

import pytest
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.testing._internal.distributed.fake_pg import FakeStore

from symparams import SymparamsError, model
from symparams.analysis.ranks import per_rank
from tests.reference import decoders, moe

pytestmark = pytest.mark.crosscheck

CASES = {
    "llama-gqa": model("llama", head="causal-lm", V=1000, H=64, L=3, A=8, G=4, F=96, gqa=True),
    "gpt2-tied": model("gpt2", head="causal-lm", V=1001, P=32, H=64, L=3, A=4, r=4),
    "mixtral": model("mixtral", head="causal-lm", V=1000, H=64, L=3, A=8, G=4, N_e=4, k_e=2, F_e=48),
}
LAYER = re.compile(r"(^|\.)(layers|h)\.\d+$")


@contextmanager
def fake_ranks(world: int, rank: int = 0):
    """A process group of ``world`` ranks that are this process as ``rank``."""
    dist.init_process_group("fake", rank=rank, world_size=world, store=FakeStore())
    try:
        yield
    finally:
        dist.destroy_process_group()


def sharded(m, mesh, reshard=None):
    """The transformers model of ``m`` on the meta device, ``fully_shard`` on each layer and on the root."""
    module = moe.reference(m)[0] if m.family.name == "mixtral" else decoders.reference(m)[0]
    options = {} if reshard is None else {"reshard_after_forward": reshard}
    layers = [sub for name, sub in module.named_modules() if LAYER.search(name)]
    for layer in layers:
        fully_shard(layer, mesh=mesh, **options)
    fully_shard(module, mesh=mesh, **options)
    return module, layers


def local_elements(module) -> int:
    return sum(p.to_local().numel() for p in module.parameters())


def padded(unit) -> int:
    """The elements of one rank's padded shards of ``unit``'s own parameters (not its sharded children's)."""
    group = unit._get_fsdp_state()._fsdp_param_group
    return sum(fp.padded_sharded_param_size.numel() for fp in group.fsdp_params)


def fsdp(m, strategy, n, k=None, **options):
    return per_rank(m.memory("bf16", "adam", ranks=n, fsdp=strategy, shard_group=k, **options))


@pytest.mark.parametrize("name", CASES)
def test_first_rank_shard_is_fully_shards_on_rank_0(name):
    m, k = CASES[name], 3
    r = fsdp(m, "full-shard", k)
    with fake_ranks(k):
        module, layers = sharded(m, init_device_mesh("cpu", (k,)))
        first = local_elements(module)
        root, layer = padded(module), padded(layers[0])
    with fake_ranks(k, rank=k - 1):
        last = local_elements(sharded(m, init_device_mesh("cpu", (k,)))[0])
    assert r.shard == first and last <= first
    assert (r.weights, r.gradients, r.optimizer) == (4 * first, 4 * first, 8 * first)
    assert r.unsharded == 2 * k * (root + 2 * layer)  # bf16: the root and two layers gathered


def test_shard_grad_op_holds_every_unit_gathered():
    m, k = CASES["gpt2-tied"], 3
    r = fsdp(m, "shard-grad-op", k)
    with fake_ranks(k):
        module, layers = sharded(m, init_device_mesh("cpu", (k,)), reshard=False)
        gathered = k * (padded(module) + sum(padded(layer) for layer in layers))
    assert r.unsharded == 2 * gathered


def test_hybrid_shard_splits_over_its_group_and_replicates_across_groups():
    m, n, k = CASES["llama-gqa"], 6, 3
    r = fsdp(m, "hybrid-shard", n, k)
    with fake_ranks(n):
        mesh = init_device_mesh("cpu", (n // k, k), mesh_dim_names=("replicate", "shard"))
        first = local_elements(sharded(m, mesh)[0])
    assert r.shard == first and r.to_dict()["layout"]["replicas"] == 2
    assert r.shard > fsdp(m, "full-shard", n).shard  # over 3 ranks, not 6


def test_fp32_gathers_four_bytes_and_sgd_keeps_one_moment():
    m = CASES["llama-gqa"]
    mixed, plain = fsdp(m, "full-shard", 4), per_rank(m.memory("fp32", "sgd", ranks=4, fsdp="full-shard"))
    assert plain.unsharded == 2 * mixed.unsharded and plain.optimizer == 4 * plain.shard


def test_activations_are_the_ranks_own_batch():
    m = CASES["llama-gqa"]
    assert fsdp(m, "full-shard", 4, seq=16, batch=2).activations == m.memory("bf16", "adam", seq=16,
                                                                             batch=2).activations


@pytest.mark.parametrize("options, needle", [
    ({"zero": 3}, "not both"), ({"distributed_optimizer": True}, "give one"),
    ({"tensor_parallel": 2}, "data-parallel ranks alone"), ({"pipeline_parallel": 3}, "data-parallel ranks alone"),
    ({"shard_group": 2}, "hybrid sharding's"), ({"fsdp": "no-shard"}, "unknown FSDP strategy"),
])
def test_combinations_that_make_no_sense_are_refused(options, needle):
    settings = {"ranks": 4, "fsdp": "full-shard", **options}
    with pytest.raises(SymparamsError, match=needle):
        CASES["llama-gqa"].memory("bf16", "adam", **settings)


def test_hybrid_shard_group_must_divide_the_ranks():
    with pytest.raises(SymparamsError, match="must divide the data-parallel ranks N = 4"):
        CASES["llama-gqa"].memory("bf16", "adam", ranks=4, fsdp="hybrid-shard", shard_group=3)
