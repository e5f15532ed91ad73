// With no ranktest.toml, ranktest runs what pytest and ctest would run with
// no configuration of their own (config/implicit_sources.h): a pytest
// project by its testpaths, a Python file or folder named on the command
// line, a CMake build folder; and says on its first line what it found.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

const std::string kPassAndFail =
    "def test_passes():\n    pass\n\ndef test_fails():\n    assert 1 == 2\n";

TEST(ZeroConfig, APytestProjectRunsByItsOwnTestpaths) {
  // Each file pytest reads its configuration from, in its own words.
  const std::vector<std::pair<std::string, std::string>> projects{
      {"pytest.ini", "[pytest]\ntestpaths =\n    tests\n"},
      {"pyproject.toml", "[project]\nname = \"x\"\n[tool.pytest.ini_options]\n"
                         "testpaths = [\"tests\"]\n"},
      {"setup.cfg", "[metadata]\nname = x\n[tool:pytest]\ntestpaths = tests\n"},
      {"tox.ini", "[tox]\nenvlist = py3\n[pytest]\ntestpaths = tests\n"},
  };
  for (const auto& [file, text] : projects) {
    SCOPED_TRACE(file);
    Workdir dir;
    dir.write(file, text);
    dir.write("tests/test_unit.py", kPassAndFail);
    // Outside testpaths: pytest would not collect it, nor does ranktest.
    dir.write("scripts/test_not_collected.py", "def test_x():\n    pass\n");
    const auto run = run_ranktest(dir, {"run"});
    EXPECT_EQ(run.out_lines().front(),
              "ranktest: no ranktest.toml here; running a pytest project (" + file +
                  "; collecting tests)")
        << run.out << run.err;
    EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 1 failed, 0 skipped") << run.out << run.err;
    EXPECT_EQ(run.exit_code, 1);
    const auto finished = run.finished();
    EXPECT_TRUE(finished.count("tests/test_unit.py::test_fails")) << run.out;
  }
}

TEST(ZeroConfig, WithoutAPytestFileTheFolderIsCollectedAsPytestWould) {
  Workdir dir;
  dir.write("test_here.py", kPassAndFail);
  dir.write("pkg/sub/test_deep.py", "def test_deep():\n    pass\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.out_lines().front(),
            "ranktest: no ranktest.toml here; running a pytest project (test_*.py files; "
            "collecting .)")
      << run.out << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 1 failed, 0 skipped") << run.out << run.err;
}

TEST(ZeroConfig, APathNamesAPythonFileOrFolder) {
  Workdir dir;
  dir.write("a/test_a.py", kPassAndFail);
  dir.write("b/test_b.py", "def test_b():\n    pass\n");
  auto run = run_ranktest(dir, {"run", "a/test_a.py", "b"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 1 failed, 0 skipped") << run.out << run.err;
  // A CMake build folder: ctest_test.cpp (Ctest.ABuildFolderNeedsNoConfiguration).
}

// A project whose test files hold no test: the advice is the ranktest.toml
// to write, never a [[source]] that does not exist.
TEST(ZeroConfig, AnEmptyProjectSaysWhatToWriteWithoutAConfigFile) {
  Workdir dir;
  dir.write("test_helpers.py", "def helper():\n    pass\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("pytest collected no tests from .; if that is expected, no ranktest.toml "
                         "names it: write one here holding [[source]] kind = \"pytest\", paths = "
                         "[\".\"], allow-empty = true"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("in this [[source]]"), std::string::npos) << run.err;
}

// One rule for every framework: a test binary's tests, with no
// configuration, run in workers, shares of the binary through
// GoogleTest's own loop, each with its own outcome.
TEST(ZeroConfig, ATestBinarysTestsRunInWorkers) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", "-j", "1", fixture("params")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("in worker processes"), std::string::npos) << run.out;
  std::size_t after_others = 0;
  for (const auto& [id, event] : run.finished()) after_others += event["ran_before"].get<int>() > 0;
  EXPECT_EQ(after_others, run.finished().size() - 1) << "one worker ran them all" << run.out;
}

TEST(ZeroConfig, NothingToRunSaysWhatWasLookedForAndExitsTwo) {
  Workdir dir;
  dir.write("README", "no tests here\n");
  auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("no ranktest.toml here, and nothing ranktest runs without one"),
            std::string::npos) << run.err;
  run = run_ranktest(dir, {"run", "missing.py"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("missing.py: no such file"), std::string::npos) << run.err;
  std::filesystem::create_directory(dir.path() / "empty");
  run = run_ranktest(dir, {"run", "empty"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("empty: a folder with no tests ranktest can run in it (no pytest project"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace ranktest::testing
