"""What Lightning's own conftest does that a fork server must survive: it
writes to pytest's terminal writer while collecting (tests/tests_pytorch/
conftest.py, pytest_collection_modifyitems), which fails if the terminal
reporter is gone."""


def pytest_collection_modifyitems(items, config):
    writer = config.get_terminal_writer()
    writer.write("collected %d distributed-pattern tests\n" % len(items))
