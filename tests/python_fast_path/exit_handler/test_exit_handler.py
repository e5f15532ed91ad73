import atexit
import os


def test_before():
    pass


def test_registers_a_failing_exit_handler():
    # pytest itself then exits 7, after reporting every test passed.
    atexit.register(lambda: os._exit(7))


def test_after():
    pass
