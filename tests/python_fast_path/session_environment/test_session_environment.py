import os


def test_strict_mode_is_off():
    # Fails under pytest: the conftest turned strict mode on.
    assert os.environ.get("FAST_PATH_STRICT") != "1"


def test_nothing_was_configured():
    # Fails under pytest: pytest_configure set it.
    assert "FAST_PATH_CONFIGURED" not in os.environ


def test_sees_what_the_session_set():
    assert os.environ["FAST_PATH_STRICT"] == "1"
    assert os.environ["FAST_PATH_CONFIGURED"] == "yes"
    # The source gives FAST_PATH_DEFAULTED, so the conftest's setdefault
    # keeps it; FAST_PATH_REMOVED was given and the conftest removed it.
    assert os.environ["FAST_PATH_DEFAULTED"] == "from the source"
    assert "FAST_PATH_REMOVED" not in os.environ
