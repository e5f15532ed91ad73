def twice(x):
    """
    >>> twice(2)
    4
    """
    return 2 * x


def test_fine():
    assert twice(3) == 6
