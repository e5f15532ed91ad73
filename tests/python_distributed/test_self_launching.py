"""A framework that starts its own ranks unless it was launched: Lightning
reads "LOCAL_RANK" in os.environ as "my processes were started for me" and
then never starts rank 1. A test without ranks must not see launcher
variables, or rank 0 waits alone for a peer that never comes."""
import os
import socket
import subprocess
import sys

WAIT = 20  # seconds rank 0 waits for rank 1


def test_starts_rank_one_itself_unless_launched():
    port = int(os.environ.get("MASTER_PORT") or 0)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    port = listener.getsockname()[1]
    peer = None
    if "LOCAL_RANK" not in os.environ:
        # Not launched: start rank 1, as Lightning's subprocess launcher does.
        peer = subprocess.Popen([sys.executable, "-c",
                                 "import socket, sys; socket.create_connection(('127.0.0.1', %d)).sendall(b'1')" % port])
    listener.settimeout(WAIT)
    try:
        connection, _ = listener.accept()
    except socket.timeout:
        raise AssertionError("rank 1 never joined: the test believed it was launched "
                             "(LOCAL_RANK=%s)" % os.environ.get("LOCAL_RANK"))
    assert connection.recv(1) == b"1"
    if peer is not None:
        assert peer.wait() == 0
