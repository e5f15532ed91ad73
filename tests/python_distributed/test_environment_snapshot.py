"""Lightning's tests copy the environment when their module is imported
(@mock.patch.dict(os.environ, os.environ.copy(), clear=True), about 50 of
them) and restore that copy around the test. In a fork server the copy is
the server's: the ranks lost RANK, WORLD_SIZE and MASTER_PORT, each became
rank 0 and waited in torch's TCPStore for a peer that never came."""
import os
from unittest import mock

import pytest


@pytest.mark.ranktest(ranks=2, timeout="60s")
@mock.patch.dict(os.environ, os.environ.copy(), clear=True)
def test_ranks_keep_their_environment_under_an_import_time_copy():
    assert os.environ.get("RANK") in ("0", "1")
    assert os.environ.get("WORLD_SIZE") == "2"
    assert os.environ.get("MASTER_PORT")
    assert not any(name.startswith("RANKTEST_FORK") for name in os.environ)


@pytest.mark.ranktest(ranks=2, timeout="60s")
@mock.patch.dict(os.environ, os.environ.copy(), clear=True)
def test_gloo_rendezvous_under_an_import_time_copy():
    import torch.distributed as dist

    # As Lightning's environment does: the rank from LOCAL_RANK, 0 if unset.
    rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        dist.barrier()
    finally:
        dist.destroy_process_group()
