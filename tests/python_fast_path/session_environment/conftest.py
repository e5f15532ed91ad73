# What a conftest sets is every test's environment, as under pytest: a
# "strict mode" switch at import, a value only where none was given, and
# one set in pytest_configure.
import os

os.environ["FAST_PATH_STRICT"] = "1"
os.environ.setdefault("FAST_PATH_DEFAULTED", "from the conftest")
os.environ.pop("FAST_PATH_REMOVED", None)


def pytest_configure(config):
    os.environ["FAST_PATH_CONFIGURED"] = "yes"
