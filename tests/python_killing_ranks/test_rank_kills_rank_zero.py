"""Lightning's DDP strategy, when a rank fails (reconciliate_processes):
the failing rank SIGKILLs the others, then raises, and its traceback is
printed after rank 0 is gone. Rank 1 here is a process rank 0 started
(Lightning's subprocess launcher relaunches pytest), not a ranktest rank:
ranktest sees rank 0 killed by a signal it did not send, and must name
rank 1's failure and show its traceback, not a bare SIGKILL."""
import os
import signal
import subprocess
import sys
import time

RANK_ONE_FAILS = r"""
import os, signal, sys, time
time.sleep(0.3)
os.kill(os.getppid(), signal.SIGKILL)   # the deadlock detector's kill
time.sleep(0.3)
raise RuntimeError("planted failure in rank 1")
"""

RANK_ONE_FAILS_LATE = r"""
import sys, time
time.sleep(1.5)  # long after rank 0 ended, even on a loaded machine
print("rank 1: the batch it checked is wrong", file=sys.stderr)
sys.exit(1)
"""


def test_rank_one_kills_rank_zero_then_raises():
    subprocess.Popen([sys.executable, "-c", RANK_ONE_FAILS])
    time.sleep(30)  # rank 0 waits in its collective until it is killed


def test_rank_one_fails_after_rank_zero_passed():
    """Rank 0 passes without waiting for the rank it started; rank 1 fails
    while the test settles: a failure nobody waited for, said."""
    subprocess.Popen([sys.executable, "-c", RANK_ONE_FAILS_LATE])


def test_a_child_ended_before_its_rank_was_killed():
    """The process that failed is gone before ranktest sees the rank end
    (on a busy machine, Lightning's rank 1 raises and exits before the
    runner wakes for rank 0's SIGKILL): rank 0 leaves its failed child
    unwaited for, then is killed. ranktest finds the child only among the
    zombies reaped with the rank, and still names it."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"])
    while _state(child.pid) != "Z":
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGKILL)


def _state(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rpartition(")")[2].split()[0]
