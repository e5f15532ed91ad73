"""Distributed tests with PyTorch on CPU (the gloo backend), two ranks each.

ranktest starts one process per rank with the torchrun environment (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT), so a test only has to join the group.
Two of these fail on purpose: a rank that fails an assertion, and a rank
that skips a collective (both ranks then hang; the timeout shows where).
"""
import os

import pytest
import torch
import torch.distributed as dist


@pytest.fixture
def group():
    dist.init_process_group("gloo", init_method="env://")
    yield dist.get_rank(), dist.get_world_size()
    dist.destroy_process_group()


@pytest.mark.ranktest(ranks=2)
def test_all_reduce_sums_every_rank(group):
    rank, world = group
    tensor = torch.tensor([rank + 1.0])
    dist.all_reduce(tensor)
    assert tensor.item() == world * (world + 1) / 2


@pytest.mark.ranktest(ranks=2)
def test_a_rank_fails_an_assertion(group):
    rank, _ = group
    shard = torch.arange(4) + rank * 4
    # Rank 1 got the wrong shard: its assertion is the root cause; rank 0,
    # left waiting in the all_reduce, is stopped after the grace period.
    assert shard.sum().item() == 6 + rank * 16 * (1 - rank), f"rank {rank} has a bad shard"
    dist.all_reduce(shard)


@pytest.mark.ranktest(ranks=2, timeout="8s")
def test_a_rank_skips_a_collective(group):
    rank, _ = group
    tensor = torch.ones(1)
    if rank == 0:
        dist.all_reduce(tensor)  # waits for rank 1 forever
    dist.barrier()  # rank 1 went straight here: the ranks wait in different collectives


def test_runs_without_ranks():
    # A test without ranks looks like a plain pytest run: no launcher
    # variables that would tell a framework its processes were started for it.
    assert "WORLD_SIZE" not in os.environ and "LOCAL_RANK" not in os.environ
