"""ranktest's pytest plugin: exports the collection and each test's result
to the ranktest runner. Loaded by ranktest with ``-p ranktest_pytest.plugin``;
needs nothing beyond pytest itself."""
