"""Ten quick tests that run in worker processes (isolation = "worker");
the fifth misbehaves as WORKER_FIFTH says. Each test writes which process
ran it, so the suite can tell workers were reused and replaced."""
import os
import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.parametrize("n", range(10))
def test_ten(n):
    with open(os.environ["PIDS_FILE"], "a") as pids:
        pids.write("%d %d\n" % (n, os.getpid()))
    if n != 4:
        return
    what = os.environ.get("WORKER_FIFTH", "")
    if what == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif what == "hang":
        time.sleep(60)
    elif what == "leak":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    elif what == "oom":
        hog = bytearray(1024 * 2**20)  # past the test's max-memory
        for i in range(0, len(hog), 4096):
            hog[i] = 1
    elif what == "fail":
        assert n == 5, "the fifth test fails"

