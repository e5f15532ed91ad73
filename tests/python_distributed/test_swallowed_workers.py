"""Workers whose failures the test harness swallows, as torch's own
MultiProcessTestCase does when a test skips its return-code check: the
parent passes while a worker exited 17. ranktest watches the workers'
exits without tracing them and marks such a pass suspicious."""
import multiprocessing
import os
import subprocess
import sys

import pytest

# torch.testing._internal.common_distributed.TEST_SKIPS: a worker that
# exits with one of these codes asks its parent to skip the test.
SMALL_WORLDSIZE_SKIP = 73


def _worker(rank, code):
    if rank == 1:
        sys.exit(code)


def _spawn_workers(code):
    # The "spawn" start method, as MultiProcessTestCase uses: each worker is
    # a fresh interpreter running multiprocessing.spawn's main.
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_worker, args=(rank, code)) for rank in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    return [process.exitcode for process in processes]


def test_a_worker_exit_17_is_swallowed():
    codes = _spawn_workers(17)
    assert codes[0] == 0  # the harness looks at the first worker only


def test_every_worker_passes():
    assert _spawn_workers(0) == [0, 0]


def test_workers_ask_for_a_skip():
    codes = _spawn_workers(SMALL_WORLDSIZE_SKIP)
    if SMALL_WORLDSIZE_SKIP in codes:
        pytest.skip("Skipped due to small world size.")


def test_a_forked_child_raises():
    pid = os.fork()
    if pid == 0:
        try:
            raise RuntimeError("the forked child failed")
        finally:
            os._exit(1)
    os.waitpid(pid, 0)  # its status is never looked at


def test_runs_a_tool_that_fails_on_purpose():
    # A program run as a tool, whose exit code the test checks: no worker.
    done = subprocess.run([sys.executable, "-c", "raise SystemExit(3)"])
    assert done.returncode == 3
    missing = subprocess.run(["sh", "-c", "exit 1"])
    assert missing.returncode == 1
