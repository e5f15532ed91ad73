"""Every way a pytest test can end; tests/integration/pytest_test.cpp states
the outcome ranktest must report for each."""
import os
import signal
import sys
import time

import pytest


def test_passes():
    print("hello from a passing test")


def test_fails_an_assertion():
    expected = 43
    assert 6 * 7 == expected, "the answer is off"


@pytest.fixture
def broken_fixture():
    raise RuntimeError("the database is down")


def test_errors_in_setup(broken_fixture):
    pass


@pytest.fixture
def failing_teardown():
    yield
    raise RuntimeError("could not clean up")


def test_errors_in_teardown(failing_teardown):
    pass


@pytest.mark.skip(reason="not ready")
def test_skipped_by_marker():
    pass


def test_skips_itself():
    pytest.skip("no device here")


@pytest.mark.xfail(reason="known bug")
def test_xfails():
    assert False


@pytest.mark.xfail(reason="fixed already")
def test_xpasses():
    pass


@pytest.mark.xfail(reason="must fail", strict=True)
def test_strict_xpass_fails():
    pass


def test_exits_zero_mid_test():
    os._exit(0)


def test_calls_sys_exit():
    sys.exit(3)


def test_segfaults():
    os.kill(os.getpid(), signal.SIGSEGV)


def test_hangs_in_a_helper():
    def wait_for_peer():
        time.sleep(300)

    wait_for_peer()


@pytest.mark.ranktest(ranks=2)
def test_ranks_see_the_contract():
    assert os.environ["WORLD_SIZE"] == "2"
    assert int(os.environ["RANK"]) in (0, 1)
    assert int(os.environ["MASTER_PORT"]) >= 1024


@pytest.mark.ranktest(ranks=2)
def test_rank_one_fails():
    assert os.environ["RANK"] != "1", "rank 1 lost its shard"


@pytest.mark.ranktest(ranks="two")
def test_bad_marker():
    pass


@pytest.mark.parametrize("value", ["a/b", "<c>", "d::e"])
def test_parametrized(value):
    assert value
