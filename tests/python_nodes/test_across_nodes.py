"""Four gloo ranks, two on each node of the simulated Slurm cluster
(tests/slurm/cluster.sh start DIR 2): each node is a network namespace with
an address and a host name of its own, so the ranks meet over the bridge,
at rank 0's node, as they would across machines."""
import os
import socket
import time

import pytest
import torch
import torch.distributed as dist


@pytest.fixture
def group():
    dist.init_process_group("gloo", init_method="env://")
    yield dist.get_rank(), dist.get_world_size()
    dist.destroy_process_group()


@pytest.mark.ranktest(ranks=4)
def test_ranks_span_two_nodes(group):
    """As torchrun sets them per node: LOCAL_RANK and LOCAL_WORLD_SIZE
    among the node's ranks, GROUP_RANK the node's index, MASTER_ADDR rank
    0's node."""
    rank, world = group
    assert world == 4
    assert socket.gethostname() == f"node{rank // 2 + 1}"
    assert os.environ["LOCAL_RANK"] == str(rank % 2)
    assert os.environ["LOCAL_WORLD_SIZE"] == "2"
    assert os.environ["GROUP_RANK"] == str(rank // 2)
    assert os.environ["MASTER_ADDR"] == "node1"
    tensor = torch.tensor([rank + 1.0])
    dist.all_reduce(tensor)
    assert tensor.item() == 10.0


@pytest.mark.ranktest(ranks=4)
def test_rank_three_fails_on_node_two(group):
    """Rank 3's failure is the root cause; the others, waiting in the
    collective, are stopped after the grace period."""
    rank, _ = group
    assert rank != 3, f"rank 3 on {socket.gethostname()} has a bad shard"
    dist.all_reduce(torch.ones(1))


@pytest.mark.ranktest(ranks=4, timeout="20s")
def test_ranks_hang_on_both_nodes(group):
    """Rank 0 waits in an all_reduce nobody else joins: every rank hangs,
    and the stacks at the timeout come from both nodes. The timeout counts
    from the ranks' start, torch's import included: 20 s leaves a busy
    machine the time to reach the hang."""
    rank, _ = group
    if rank == 0:
        dist.all_reduce(torch.ones(1))
    time.sleep(60)
