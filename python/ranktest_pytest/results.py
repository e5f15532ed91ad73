"""How each test went (RANKTEST_RESULT_FILE): a JSON line per phase, and
the begin signal a fresh process gives (RANKTEST_BEGIN_FD)."""

import json
import os
import sys
import time

import pytest

from .asked import _asked
from .cleaning import _cleaned
from .collection import _plugin_functions, _reruns_of


def _crash_of(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None:
        return None
    return {"path": str(crash.path), "line": crash.lineno, "message": crash.message}


# Reports of failed phases in this process: a forked test's exit status.
_failed_reports = []
_current_item = None  # the test pytest_runtest_protocol runs


def _rerun_refused(report):
    """Whether pytest-rerunfailures would not rerun this failure, although
    the test has reruns: its --only-rerun patterns (and, where the plugin
    has them, --rerun-except and the flaky mark's only_rerun/rerun_except)
    rule it out. ranktest's retries do the plugin's reruns
    (_take_over_plugins) and keep its filter, asking the plugin's own
    function (its first parameter is the item or, in older versions, the
    session's config)."""
    decide = _plugin_functions.get("hard_fail")
    item = _current_item
    if decide is None or item is None or item.nodeid != report.nodeid or not _reruns_of(item):
        return False
    try:
        import inspect

        first = next(iter(inspect.signature(decide).parameters))
        return bool(decide(item if first == "item" else item.session.config, report))
    except Exception:  # noqa: B902 - a failure it cannot read is rerun, as before
        return False


def pytest_runtest_logreport(report):
    if report.failed:
        _failed_reports.append(report.nodeid)
    out = _asked["RANKTEST_RESULT_FILE"]
    if not out:
        return
    phase = {
        "when": report.when,
        "outcome": report.outcome,
        "duration": report.duration,
        "longrepr": None,
        "crash": None,
        "wasxfail": getattr(report, "wasxfail", None),
        "time": time.time(),  # when this phase ended: orders the ranks' failures
    }
    if report.failed and _rerun_refused(report):
        phase["rerun"] = False
    if report.longrepr is not None:
        if report.skipped and isinstance(report.longrepr, tuple):
            phase["longrepr"] = str(report.longrepr[2])  # (file, line, reason)
        else:
            phase["longrepr"] = str(report.longrepr)
            phase["crash"] = _crash_of(report)
    # One line appended per phase, in one write: a rewrite of the whole
    # file through a renamed temporary cost over a millisecond a phase, as
    # much as a quick test itself. A process killed mid-write leaves at
    # most a torn last line, which ranktest skips.
    line = {"version": 2, "nodeid": report.nodeid, "pid": os.getpid(), "phase": phase}
    line = _cleaned(line)
    data = (json.dumps(line, ensure_ascii=True) + "\n").encode("ascii")
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)
    # With pytest's terminal reporter off, the log still tells what happened.
    if report.failed:
        sys.stderr.write("\n%s %s in %s\n%s\n" % (report.nodeid, "FAILED", report.when,
                                                  phase["longrepr"] or ""))
        sys.stderr.flush()



@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """The test begins (its fixtures' setup first): ranktest's timeout
    for it counts from now, not from the interpreter's start."""
    global _current_item
    _current_item = item
    fd, _asked["RANKTEST_BEGIN_FD"] = _asked["RANKTEST_BEGIN_FD"], None
    if fd:
        try:
            os.write(int(fd), b"b")
            os.close(int(fd))
        except OSError:
            pass
    return None
