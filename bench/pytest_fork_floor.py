"""What isolating each pytest test in a forked process costs at least, with
no test runner around it: a pytest plugin that, after collecting, forks one
child per test, two alive at a time, like `ranktest run -j2` with a fork
server. BENCH_FORK_RUN=1: each child runs the test's protocol (setup, call,
teardown: runtestprotocol) and exits; BENCH_FORK_RUN=hook: it runs the
whole pytest_runtest_protocol hook instead, every plugin's wrappers around
the test included, as pytest's own loop and ranktest's forked test do;
otherwise it exits at once (the price of the fork and the exit alone).
Used by bench/pytest_isolation.sh and bench/real_suites.sh:

    PYTHONPATH=bench python3 -m pytest -p pytest_fork_floor SUITE
"""

import gc
import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    from _pytest.runner import runtestprotocol

    run = os.environ.get("BENCH_FORK_RUN") in ("1", "hook")
    hook = os.environ.get("BENCH_FORK_RUN") == "hook"
    gc.collect()
    gc.freeze()  # as ranktest's server does: children share more pages
    running = 0
    failed = 0
    for item in session.items:
        if running == 2:
            _, status = os.wait()
            failed += status != 0
            running -= 1
        if os.fork() == 0:
            code = 0
            if run:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                if hook:
                    failed = session.testsfailed
                    item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
                    code = 1 if session.testsfailed != failed else 0
                else:
                    reports = runtestprotocol(item, nextitem=None, log=False)
                    code = 1 if any(report.failed for report in reports) else 0
            os._exit(code)
        running += 1
    while running:
        _, status = os.wait()
        failed += status != 0
        running -= 1
    if failed:
        session.testsfailed = failed
    return True
