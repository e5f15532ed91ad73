"""tmpdir = "private": the test's TMPDIR is its attempt's own, and Python's
tempfile and pytest's tmp_path follow it (tests/integration/network_test.cpp)."""
import os
import tempfile


def test_tempfile_and_tmp_path_use_the_tests_own_tmpdir(tmp_path):
    own = os.environ["TMPDIR"]
    assert os.path.basename(own) == "tmp"
    assert os.path.basename(os.path.dirname(own)).startswith("attempt-")
    assert tempfile.gettempdir() == own
    assert str(tmp_path).startswith(own + os.sep)
