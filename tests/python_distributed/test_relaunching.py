"""Lightning's subprocess launcher starts rank 1 by running pytest again
with the parent's own command line (python -m pytest sys.argv[1:]). That
command must run this one test, as it would under pytest; and the pytest
it starts must not write the parent's result for ranktest."""
import os
import socket
import subprocess
import sys

WAIT = 30


def test_relaunches_pytest_for_rank_one():
    if os.environ.get("RELAUNCHED_RANK") == "1":
        # Rank 1: started with exactly this test, it joins rank 0.
        assert sys.argv[-1].endswith("test_relaunching.py::test_relaunches_pytest_for_rank_one"), sys.argv
        socket.create_connection(("127.0.0.1", int(os.environ["RANK0_PORT"]))).sendall(b"1")
        return
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(WAIT)
    env = dict(os.environ, RELAUNCHED_RANK="1", RANK0_PORT=str(listener.getsockname()[1]))
    child = subprocess.Popen([sys.executable, "-m", "pytest"] + sys.argv[1:], env=env)
    connection, _ = listener.accept()
    assert connection.recv(1) == b"1"
    assert child.wait(timeout=WAIT) == 0
    assert "RANKTEST_RESULT_FILE" not in os.environ


def test_rank_zero_ends_before_its_relaunched_rank_one():
    """Rank 0 is done and its process ends while the rank 1 it started is
    still in its teardown, ending on its own a moment later (seen with
    Lightning's DDP tests, forked): not a process left behind."""
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.7)"])
