"""Fails the first time it runs, wherever: after other tests in a worker
its failure is not their doing, and replaying them says so."""
import os


def test_first(tmp_path_factory):
    pass


def test_second():
    pass


def test_fails_the_first_time():
    marker = os.path.join(os.environ["RANKTEST_FLAKY_MARKER_DIR"], "failed-once")
    if not os.path.exists(marker):
        open(marker, "w").close()
        assert False, "the first run fails"
