# What a module binds to its process at import (psutil's memory-leak tests
# keep psutil.Process() as a class attribute): under pytest, and in a
# worker that collected the suite itself (mode = "collecting-workers"),
# that process is the test's own; forked, it is the fork server.
import os

IMPORTED_IN = os.getpid()


class TestBoundAtImport:
    process = IMPORTED_IN

    def test_measures_its_own_process(self):
        assert os.getpid() == self.process

    def test_again_in_the_same_worker(self):
        assert os.getpid() == IMPORTED_IN


def test_between():
    pass
