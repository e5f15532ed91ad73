import a_module_nobody_wrote  # noqa: F401


def test_never_collected():
    pass
