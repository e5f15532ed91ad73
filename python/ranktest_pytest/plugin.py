"""The side of ranktest that lives inside pytest.

ranktest starts pytest with ``-p ranktest_pytest.plugin`` and says through
the environment what it wants:

RANKTEST_COLLECT_OUT  write the collection here as JSON: every test with its
                      node id, file:line, markers, skip/xfail marks and the
                      arguments of ``@pytest.mark.ranktest``; collection
                      errors as errors, never as missing tests.
RANKTEST_RESULT_FILE  write how the test went here as JSON, rewritten after
                      each phase (setup, call, teardown), so a process that
                      dies mid-test still leaves what happened before.
RANKTEST_STACK_DIR    register faulthandler on SIGUSR2: ranktest sends it at
                      a timeout and gets every thread's Python stack in
                      python-stacks-<pid>.txt there.
"""

import faulthandler
import json
import os
import signal
import sys

import pytest

_stack_file = None  # kept open for faulthandler


def _write_json(path, data):
    """Writes atomically: the reader never sees half a file."""
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as out:
        json.dump(data, out, ensure_ascii=True)
    os.replace(temporary, path)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    global _stack_file
    # ranktest reports; pytest's own progress and summary would only bury
    # the test's output in its log. (Its options stay: assertion rewriting
    # reads them.)
    if os.environ.get("RANKTEST_RESULT_FILE") or os.environ.get("RANKTEST_COLLECT_OUT"):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)
    config.addinivalue_line(
        "markers",
        "ranktest(ranks=1, devices=None, exclusive=False, timeout=None): how ranktest "
        "runs this test: its number of processes (ranks), the devices it needs "
        "({'cuda': 2}), whether it runs alone, its timeout (seconds or '90s')",
    )
    stack_dir = os.environ.get("RANKTEST_STACK_DIR")
    if stack_dir and _stack_file is None and hasattr(signal, "SIGUSR2"):
        path = os.path.join(stack_dir, "python-stacks-%d.txt" % os.getpid())
        _stack_file = open(path, "w")
        faulthandler.register(signal.SIGUSR2, file=_stack_file, all_threads=True, chain=False)


# --- collection --------------------------------------------------------------

_collection_errors = []


def _marker_args(marker):
    def plain(value):
        if isinstance(value, (str, int, float, bool)) or value is None:
            return value
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return repr(value)

    return {"args": plain(list(marker.args)), "kwargs": plain(dict(marker.kwargs))}


def _item_entry(item):
    path = str(getattr(item, "path", None) or item.fspath)
    relative, line, _ = item.location
    entry = {
        "nodeid": item.nodeid,
        # What to pass pytest to run just this test, from any folder.
        "argument": path + item.nodeid[len(relative):] if item.nodeid.startswith(relative)
        else item.nodeid,
        "file": path,
        "line": (line + 1) if line is not None else None,
        "markers": sorted({m.name for m in item.iter_markers()}),
        "skip": None,
        "skipif": [],
        "xfail": None,
        "ranktest": None,
    }
    for marker in item.iter_markers("skip"):
        entry["skip"] = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "skipped")
        break
    for marker in item.iter_markers("skipif"):
        entry["skipif"].append({
            "conditions": [c if isinstance(c, str) else bool(c) for c in marker.args],
            "reason": marker.kwargs.get("reason", ""),
        })
    xfail = item.get_closest_marker("xfail")
    if xfail is not None:
        entry["xfail"] = {
            "reason": xfail.kwargs.get("reason", ""),
            "strict": bool(xfail.kwargs.get("strict", False)),
        }
    marker = item.get_closest_marker("ranktest")
    if marker is not None:
        entry["ranktest"] = _marker_args(marker)["kwargs"]
    return entry


def pytest_collectreport(report):
    if report.failed:
        _collection_errors.append({"nodeid": report.nodeid or ".", "message": str(report.longrepr)})


def pytest_collection_finish(session):
    out = os.environ.get("RANKTEST_COLLECT_OUT")
    if not out:
        return
    _write_json(out, {
        "version": 1,
        "rootdir": str(session.config.rootpath),
        "tests": [_item_entry(item) for item in session.items],
        "errors": _collection_errors,
    })


# --- results -----------------------------------------------------------------

_phases = []


def _crash_of(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None:
        return None
    return {"path": str(crash.path), "line": crash.lineno, "message": crash.message}


def pytest_runtest_logreport(report):
    out = os.environ.get("RANKTEST_RESULT_FILE")
    if not out:
        return
    phase = {
        "when": report.when,
        "outcome": report.outcome,
        "duration": report.duration,
        "longrepr": None,
        "crash": None,
        "wasxfail": getattr(report, "wasxfail", None),
    }
    if report.longrepr is not None:
        if report.skipped and isinstance(report.longrepr, tuple):
            phase["longrepr"] = str(report.longrepr[2])  # (file, line, reason)
        else:
            phase["longrepr"] = str(report.longrepr)
            phase["crash"] = _crash_of(report)
    _phases.append(phase)
    _write_json(out, {"version": 1, "nodeid": report.nodeid, "pid": os.getpid(), "phases": _phases})
    # With pytest's terminal reporter off, the log still tells what happened.
    if report.failed:
        sys.stderr.write("\n%s %s in %s\n%s\n" % (report.nodeid, "FAILED", report.when,
                                                  phase["longrepr"] or ""))
        sys.stderr.flush()
