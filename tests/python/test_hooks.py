"""Outcomes that pytest's hooks decide, not the test body: each must be the
same under ranktest (plain and fork server) as under pytest itself."""
import gc
import os
import warnings

import pytest


@pytest.mark.filterwarnings("error::UserWarning")
def test_a_warning_made_an_error_fails():
    warnings.warn("this is an error here", UserWarning)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_ignored_warning_passes():
    warnings.warn("nobody cares", UserWarning)


def test_runs_inside_the_projects_protocol_wrapper(request):
    assert os.environ.get("WRAPPED_BY_CONFTEST") == request.node.nodeid


class _RaisesWhenCollected:
    def __del__(self):
        raise RuntimeError("raised in __del__")


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_an_unraisable_exception_made_an_error_fails():
    _RaisesWhenCollected()
    gc.collect()


@pytest.mark.xfail(reason="the warning is expected to be an error", strict=True,
                   raises=UserWarning)
@pytest.mark.filterwarnings("error::UserWarning")
def test_a_strict_xfail_that_fails_as_expected():
    warnings.warn("expected", UserWarning)
