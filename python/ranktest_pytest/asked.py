"""What ranktest asks of this pytest process (its RANKTEST_* variables),
taken out of the environment as the plugin is imported."""

import os

# What ranktest asks of this pytest process, and of no other: taken out of
# the environment before any conftest or test module is imported, so a
# pytest that a test starts again (Lightning's launcher re-runs pytest for
# rank 1; multiprocessing's spawn) does not write this process's result
# file or become a fork server, and an import-time copy of the environment
# (mock.patch.dict(os.environ, os.environ.copy())) does not hold them.
_asked = {name: os.environ.pop(name, None) for name in
          ("RANKTEST_RESULT_FILE", "RANKTEST_COLLECT_OUT", "RANKTEST_FORK_SERVER",
           "RANKTEST_FORK_LIBRARY", "RANKTEST_WORKER_EXITS", "RANKTEST_BEGIN_FD",
           "RANKTEST_WORKER_REQUESTS", "RANKTEST_WORKER_REPLIES")}
# Held by this process alone: a process the test starts must not keep
# ranktest's pipe open.
if _asked["RANKTEST_BEGIN_FD"]:
    try:
        os.set_inheritable(int(_asked["RANKTEST_BEGIN_FD"]), False)
    except (ValueError, OSError):
        _asked["RANKTEST_BEGIN_FD"] = None
# pytest-rerunfailures starts a socket server thread in pytest_configure
# wherever xdist is installed (to rerun tests whose xdist worker crashed):
# a thread no fork server may hold, for xdist workers ranktest never runs.
# Its no-op store instead; ranktest's retries do its reruns
# (_take_over_plugins).
if any(_asked.values()):
    try:
        import pytest_rerunfailures

        pytest_rerunfailures.HAS_PYTEST_HANDLECRASHITEM = False
    except Exception:  # noqa: B902 - not installed, or not the version that has it
        pass
# In a fork server, the marker of its environment: a copy of it made at
# import (a decorator's snapshot) is recognised in a forked test by this.
_SERVER_MARK = "RANKTEST_FORK_SERVER_ENVIRONMENT"
if _asked["RANKTEST_FORK_SERVER"]:
    os.environ[_SERVER_MARK] = str(os.getpid())
