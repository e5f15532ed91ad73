"""torch's TCPStore on a hard-coded port, as torch's own TCPStoreTest
(testMultiTenantStores binds 29500): eight copies at once. On the host's
network one holds the port and the others fail with "Address already in
use"; with network = "isolated" each copy has a loopback of its own and all
pass (tests/integration/network_test.cpp)."""
import os
import time

import pytest
import torch.distributed as dist


def _tried_and_wait_for_the_others(holds_the_port):
    """Each copy says it has tried its port (a file in RENDEZVOUS_DIR), and a
    copy that holds the port keeps it until all eight have tried: so copies
    overlap however slowly a loaded machine starts them."""
    folder = os.environ.get("RENDEZVOUS_DIR")
    if not folder:
        if holds_the_port:
            time.sleep(1.5)
        return
    open(os.path.join(folder, str(os.getpid())), "w").close()
    if not holds_the_port:
        return
    give_up = time.monotonic() + 60
    while len(os.listdir(folder)) < 8:
        assert time.monotonic() < give_up, "only %d of 8 copies tried the port within 60 s" % (
            len(os.listdir(folder)))
        time.sleep(0.02)


@pytest.mark.parametrize("copy", range(8))
def test_tcp_store_on_a_fixed_port(copy):
    port = int(os.environ.get("FIXED_PORT", "29500"))
    try:
        store = dist.TCPStore("127.0.0.1", port, world_size=1, is_master=True,
                              wait_for_workers=False)
    except RuntimeError:
        _tried_and_wait_for_the_others(False)
        raise
    _tried_and_wait_for_the_others(True)
    store.set("copy", str(copy))
    assert store.get("copy") == str(copy).encode()
