"""A module pytest skips as a whole at import: pytest counts one skipped
test, and so must ranktest (it must not vanish from the run)."""

import pytest

pytest.importorskip("module_this_machine_does_not_have")


def test_never_collected():
    assert False, "the module was skipped at import; this never runs"
