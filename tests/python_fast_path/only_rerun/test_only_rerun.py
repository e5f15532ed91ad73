# Each test fails its first time only (a marker file in MARKERS remembers).
import os


def first_time(name):
    marker = os.path.join(os.environ["MARKERS"], name)
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


def test_assertion_once():
    # Not a ConnectionError: pytest does not rerun it, it fails.
    assert not first_time("assertion"), "failed the first time"


def test_connection_error_once():
    # Rerun, and passes.
    if first_time("connection"):
        raise ConnectionError("refused the first time")
