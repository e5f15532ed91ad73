"""A pytest plugin that records, per test, the outcome pytest itself judged.

Load it with ``-p record_pytest_outcomes`` (this folder on PYTHONPATH) and
name the output file in RECORD_PYTEST_OUTCOMES; at session end it writes a
JSON object, node id -> outcome, one of

    failed    any phase failed: the call, an error in setup or teardown,
              a strict xpass ("[XPASS(strict)]"), a collection error
    xfailed   the test failed as its xfail mark (or pytest.xfail) expected
    xpassed   the test passed although marked xfail (not strict)
    skipped   skipped (skip/skipif marks, pytest.skip, in any phase)
    passed    everything else that ran

i.e. what pytest's own summary line counts, test by test (a test that
xfails in its call and errors in teardown is "failed", as pytest counts
an error for it). Node ids are pytest's, relative to its rootdir: run
pytest from the same folder with the same path arguments as ranktest
collects with, and the ids are ranktest's test ids.

A file that fails to collect is recorded under its collection report's
node id as "failed" (ranktest turns it into an `error` test of that id;
run pytest with --continue-on-collection-errors, as ranktest goes on with
the other files), a module skipped as a whole (pytest.importorskip at
module level) as "skipped", as pytest counts them.

RECORD_PYTEST_DURATIONS, if set, names a second file: node id -> seconds
spent in setup + call + teardown (used to pick fast test folders).

RECORD_PYTEST_PARTITION=hash:K/N runs only the tests that
`ranktest run --partition hash:K/N` runs (FNV-1a of the node id, modulo N,
is K-1); the others are deselected, so a reference for one share costs the
collection and that share's tests, and the rootdir and node ids stay those
of the whole set.
"""

import json
import os

import pytest

_RANK = {"passed": 0, "skipped": 1, "xpassed": 2, "xfailed": 3, "failed": 4}

_outcomes = {}
_durations = {}


def _note(nodeid, outcome):
    previous = _outcomes.get(nodeid)
    if previous is None or _RANK[outcome] > _RANK[previous]:
        _outcomes[nodeid] = outcome


def pytest_runtest_logreport(report):
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + (report.duration or 0.0)
    wasxfail = hasattr(report, "wasxfail")
    if report.failed:
        # A strict xpass is a failed call report without wasxfail.
        _note(report.nodeid, "failed")
    elif report.skipped:
        _note(report.nodeid, "xfailed" if wasxfail else "skipped")
    elif report.when == "call":
        _note(report.nodeid, "xpassed" if wasxfail else "passed")
    else:
        _note(report.nodeid, "passed")


def _stable_hash(text):
    """ranktest's select::stable_hash: FNV-1a, 64 bits, over the UTF-8 id."""
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def pytest_collection_modifyitems(config, items):
    partition = os.environ.get("RECORD_PYTEST_PARTITION")
    if not partition:
        return
    strategy, _, fraction = partition.partition(":")
    index, _, count = fraction.partition("/")
    if strategy != "hash" or not index.isdigit() or not count.isdigit() or \
            not 1 <= int(index) <= int(count):
        raise pytest.UsageError("RECORD_PYTEST_PARTITION: expected hash:K/N, got %r" % partition)
    index, count = int(index), int(count)
    kept, dropped = [], []
    for item in items:
        (kept if _stable_hash(item.nodeid) % count == index - 1 else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collectreport(report):
    if report.failed:
        _note(report.nodeid or ".", "failed")
    elif report.skipped:
        # A module skipped as a whole (pytest.importorskip, or pytest.skip
        # with allow_module_level): pytest counts one skip for it.
        _note(report.nodeid or ".", "skipped")


def _write(path, data):
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=0, sort_keys=True)
    os.replace(temporary, path)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    path = os.environ.get("RECORD_PYTEST_OUTCOMES")
    if path:
        _write(path, _outcomes)
    durations = os.environ.get("RECORD_PYTEST_DURATIONS")
    if durations:
        _write(durations, _durations)
