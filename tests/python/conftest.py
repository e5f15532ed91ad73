"""A project's own hook wrapper around each test's whole protocol, as
plugins such as pytest-timeout or a company's CI plugin have: the fork
server must run it exactly as pytest's own loop does."""
import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    os.environ["WRAPPED_BY_CONFTEST"] = item.nodeid
    yield
    del os.environ["WRAPPED_BY_CONFTEST"]
