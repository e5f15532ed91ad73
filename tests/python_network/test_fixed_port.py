"""torch's TCPStore on a hard-coded port, as torch's own TCPStoreTest
(testMultiTenantStores binds 29500): eight copies that overlap in time.
On the host's network all but one fail with "Address already in use"; with
network = "isolated" each copy has a loopback of its own and all pass
(tests/integration/network_test.cpp)."""
import os
import time

import pytest
import torch.distributed as dist


@pytest.mark.parametrize("copy", range(8))
def test_tcp_store_on_a_fixed_port(copy):
    port = int(os.environ.get("FIXED_PORT", "29500"))
    store = dist.TCPStore("127.0.0.1", port, world_size=1, is_master=True,
                          wait_for_workers=False)
    store.set("copy", str(copy))
    assert store.get("copy") == str(copy).encode()
    # Held a while, so that copies running at once overlap.
    time.sleep(float(os.environ.get("HOLD_SECONDS", "1.5")))
