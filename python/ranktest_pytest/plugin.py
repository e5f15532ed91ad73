"""The side of ranktest that lives inside pytest.

ranktest starts pytest with ``-p ranktest_pytest.plugin`` and says through
the environment what it wants:

RANKTEST_COLLECT_OUT  write the collection here as JSON: every test with its
                      node id, file:line, markers, skip/xfail marks and the
                      arguments of ``@pytest.mark.ranktest``; collection
                      errors as errors, never as missing tests.
RANKTEST_RESULT_FILE  write how the test went here: one JSON line appended
                      per phase (setup, call, teardown) as it ends, so a
                      process that dies mid-test still leaves what happened
                      before (see pytest_runtest_logreport).
RANKTEST_STACK_DIR    register faulthandler on SIGUSR2: ranktest sends it at
                      a timeout and gets every thread's Python stack in
                      python-stacks-<pid>.txt there.
RANKTEST_FORK_SERVER  after collecting, serve: read requests (JSON lines) on
                      stdin, fork a fresh process per test, answer on fd 3
                      (see _serve).
RANKTEST_FORK_LIBRARY the fork server's way to fork: ranktest's
                      libranktest-forkserver.so (see _sibling_fork).
RANKTEST_WORKER_EXITS where the kernel's process events cannot be had:
                      append a JSON line here for each worker this process
                      reaps that ended badly (see _watch_worker_exits).
RANKTEST_BEGIN_FD     a fresh process's pipe to ranktest: one byte on it
                      when the test begins, after the interpreter, imports
                      and collection; its timeout counts from there.
RANKTEST_WORKER_REQUESTS, RANKTEST_WORKER_REPLIES
                      mode = "collecting-workers": after collecting, this
                      process is a worker (no fork): it reads its first
                      test's request, then each next one, from the first
                      FIFO and says each test passed on the second (see
                      _work).
"""

import sys

import pytest

# First: what ranktest asks is taken out of the environment before anything
# else is imported (asked.py); the environment's recording and the
# collection's start as this module is imported, before any conftest.
from .asked import _asked
from . import environment, worker_exits  # recording and watching from import on
from .collection import _take_over_plugins, pytest_collection_finish, pytest_collectreport
from .fork_guard import _guard
from .fork_server import _serve, _work
from .results import pytest_runtest_logreport, pytest_runtest_protocol
from .stack_dump import _register_stack_dump_once

# The hooks are this module's (pytest registers the plugin it was given):
# each job's hooks live with it and are imported here.
__all__ = ["environment", "worker_exits", "pytest_collection_finish", "pytest_collectreport",
           "pytest_runtest_logreport", "pytest_runtest_protocol"]


def _quiet_reporter_class():
    """pytest's TerminalReporter without its hooks: its writer, sections and
    stats work for whoever calls them, but it prints no progress, failure
    report or summary of its own. (pluggy registers only the pytest_*
    attributes that are functions.)"""
    from _pytest.terminal import TerminalReporter

    hooks = {name: None for name in dir(TerminalReporter) if name.startswith("pytest_")}
    return type("_QuietReporter", (TerminalReporter,), hooks)


_QuietReporter = _quiet_reporter_class()


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    # ranktest reports; pytest's own progress and summary would only bury
    # the test's output in its log. The reporter stays, quiet: conftests
    # and plugins write through it (Lightning's conftest calls
    # config.get_terminal_writer() while collecting), and what they write
    # goes to the test's log as it would to the terminal. (Its options
    # stay too: assertion rewriting reads them.)
    if any(_asked.values()):
        _take_over_plugins(config)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and not isinstance(reporter, _QuietReporter):
            config.pluginmanager.unregister(reporter)
            config.pluginmanager.register(_QuietReporter(config, sys.stdout), "terminalreporter")
    config.addinivalue_line(
        "markers",
        "ranktest(ranks=1, devices=None, exclusive=False, timeout=None): how ranktest "
        "runs this test: its number of processes (ranks), the devices it needs "
        "({'cuda': 2}), whether it runs alone, its timeout (seconds or '90s')",
    )
    _register_stack_dump_once()
    _guard.note("before collection (in conftest.py, a plugin, or pytest's arguments)")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    yield
    _guard.note("after collecting %s (its imports or module-level code)" % (collector.nodeid or "."))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    if _asked["RANKTEST_WORKER_REQUESTS"]:
        _work(session)
        return True
    if not _asked["RANKTEST_FORK_SERVER"]:
        return None
    _serve(session)
    return True
