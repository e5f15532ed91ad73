"""B fails after A changed a module global, as in one pytest process;
alone (or first in its process) B passes."""
STATE = {"changed": False}


def test_a_changes_a_global():
    STATE["changed"] = True


def test_b_depends_on_the_global():
    assert not STATE["changed"], "A changed it first"
