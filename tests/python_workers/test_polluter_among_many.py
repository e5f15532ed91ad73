"""Ten tests run before the last one in a worker; one of them (the
seventh) leaves a module of the suite changed, and the last one fails
after it: narrowing down names that one. The flaky test fails the first
time it runs anywhere, whatever ran before it."""
import os
import sys

import pytest

SETTINGS = {"precision": "double"}


@pytest.mark.parametrize("n", range(10))
def test_earlier(n):
    if n == 6:
        SETTINGS["precision"] = "half"  # the polluter


def test_reads_the_settings():
    assert SETTINGS["precision"] == "double", "a test before it changed the settings"
