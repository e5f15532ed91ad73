// pytest's collection, cached between runs: collected again whenever
// what it read (files, environment, options, a module that was missing)
// changes, so a cached collection never leaves a test out.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

// The collection is cached, and collected again as soon as a file changes:
// a test added to a file is never missed.
TEST(Pytest, TheCachedCollectionFollowsTheFiles) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"tests\"]\n");
  std::filesystem::create_directories(dir.path() / "tests");
  dir.write("tests/test_a.py", "def test_one():\n    pass\n");
  auto first = run_ranktest(dir, {"list"});
  EXPECT_NE(first.out.find("test_a.py::test_one"), std::string::npos) << first.out << first.err;
  const auto listed = nlohmann::json::parse(run_ranktest(dir, {"list", "--format", "json"}).out);
  EXPECT_EQ(listed["tests"][0]["kind"], "pytest") << listed;
  EXPECT_EQ(listed["tests"][0]["source"], "tests/test_a.py") << listed;
  ASSERT_TRUE(std::filesystem::exists(dir.path() / ".ranktest" / "pytest-collections"));
  dir.write("tests/test_a.py", "def test_one():\n    pass\n\ndef test_two():\n    pass\n");
  auto second = run_ranktest(dir, {"list"});
  EXPECT_NE(second.out.find("test_a.py::test_two"), std::string::npos) << second.out;
  dir.write("tests/test_b.py", "def test_three():\n    pass\n");
  auto third = run_ranktest(dir, {"run"});
  EXPECT_EQ(third.last_out_line(), "ranktest: 3 passed, 0 failed, 0 skipped") << third.out;
}

// The cached collection also follows what the collection read beyond the
// test files: an environment variable a conftest looks at, a data file a
// parametrize reads from outside the collected folder, and PYTEST_ADDOPTS.
// A collection cached under other conditions would silently leave tests
// out of later runs.
TEST(Pytest, TheCachedCollectionFollowsWhatTheCollectionRead) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"tests\"]\nmode = \"plain\"\n");
  std::filesystem::create_directories(dir.path() / "tests");
  std::filesystem::create_directories(dir.path() / "data");
  dir.write("data/cases.txt", "1\n2\n");
  dir.write("tests/conftest.py",
            "import os\n"
            "def pytest_collection_modifyitems(config, items):\n"
            "    if os.environ.get('RUN_SLOW') != '1':\n"
            "        items[:] = [i for i in items if 'slow' not in i.name]\n");
  dir.write("tests/test_cases.py",
            "import os, pytest\n"
            "HERE = os.path.dirname(__file__)\n"
            "with open(os.path.join(HERE, '..', 'data', 'cases.txt')) as f:\n"
            "    CASES = f.read().split()\n"
            "@pytest.mark.parametrize('case', CASES)\n"
            "def test_case(case):\n"
            "    assert case != '3', 'case 3 fails'\n"
            "def test_slow():\n"
            "    assert False, 'the slow test fails'\n");
  const auto counted = [&] { return run_ranktest(dir, {"run"}).last_out_line(); };
  ::unsetenv("RUN_SLOW");
  ::unsetenv("PYTEST_ADDOPTS");
  EXPECT_EQ(counted(), "ranktest: 2 passed, 0 failed, 0 skipped");
  EXPECT_EQ(counted(), "ranktest: 2 passed, 0 failed, 0 skipped");  // from the cache
  ::setenv("RUN_SLOW", "1", 1);
  EXPECT_EQ(counted(), "ranktest: 2 passed, 1 failed, 0 skipped");
  ::unsetenv("RUN_SLOW");
  EXPECT_EQ(counted(), "ranktest: 2 passed, 0 failed, 0 skipped");
  // The data file is outside the collected folder: only the collection
  // knows it was read.
  dir.write("data/cases.txt", "1\n2\n3\n");
  EXPECT_EQ(counted(), "ranktest: 2 passed, 1 failed, 0 skipped");
  ::setenv("PYTEST_ADDOPTS", "--deselect tests/test_cases.py::test_case[3]", 1);
  EXPECT_EQ(counted(), "ranktest: 2 passed, 0 failed, 0 skipped");
  ::unsetenv("PYTEST_ADDOPTS");
  EXPECT_EQ(counted(), "ranktest: 2 passed, 1 failed, 0 skipped");
  // A variable nothing read changes nothing: the cache is still used.
  const auto cache = dir.path() / ".ranktest" / "pytest-collections";
  ASSERT_TRUE(std::filesystem::exists(cache));
  const auto cached = std::filesystem::directory_iterator(cache)->path();
  const auto before = std::filesystem::last_write_time(cached);
  ::setenv("UNREAD_BY_THE_COLLECTION", "x", 1);
  EXPECT_EQ(counted(), "ranktest: 2 passed, 1 failed, 0 skipped");
  ::unsetenv("UNREAD_BY_THE_COLLECTION");
  EXPECT_EQ(std::filesystem::last_write_time(cached), before);
}

// A test file imports a module not written yet: its collection error is
// cached with what was looked for and missing, so the run after the module
// is added collects afresh (issue 28, #12) -- beside the test file (the
// working folder) or in a package.
TEST(Pytest, TheCachedCollectionFollowsAModuleThatWasMissing) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"test_uses_helper.py\", \"test_uses_package.py\"]\n");
  dir.write("test_uses_helper.py", "import helper\ndef test_helps():\n    assert helper.VALUE == 1\n");
  std::filesystem::create_directories(dir.path() / "pkg");
  dir.write("pkg/__init__.py", "");
  dir.write("test_uses_package.py",
            "from pkg import later\ndef test_later():\n    assert later.VALUE == 2\n");
  const auto before = run_ranktest(dir, {"run"});
  EXPECT_EQ(before.last_out_line(), "ranktest: 0 passed, 2 failed, 0 skipped") << before.out;
  EXPECT_EQ(run_ranktest(dir, {"run"}).last_out_line(), before.last_out_line());  // cached
  dir.write("helper.py", "VALUE = 1\n");
  EXPECT_EQ(run_ranktest(dir, {"run"}).last_out_line(), "ranktest: 1 passed, 1 failed, 0 skipped");
  dir.write("pkg/later.py", "VALUE = 2\n");
  EXPECT_EQ(run_ranktest(dir, {"run"}).last_out_line(), "ranktest: 2 passed, 0 failed, 0 skipped");
}

}  // namespace
}  // namespace ranktest::testing
