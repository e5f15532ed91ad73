// pytest's own conventions mean in ranktest what they mean under pytest:
// pytest-timeout's limits (enforced by ranktest, with stacks),
// pytest-rerunfailures' reruns (ranktest's retries, flakiness listed),
// `-m` and `-k` selection.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

const std::string kTests = R"(import os
import time

import pytest


@pytest.mark.timeout(1)
def test_sleeps_past_its_timeout():
    time.sleep(60)


def test_sleeps_past_the_ini_timeout():
    time.sleep(60)


@pytest.mark.flaky(reruns=2)
def test_fails_twice_then_passes():
    counter = os.path.join(os.path.dirname(__file__), "count")
    count = int(open(counter).read()) if os.path.exists(counter) else 0
    open(counter, "w").write(str(count + 1))
    assert count >= 2, "attempt %d" % (count + 1)


@pytest.mark.slow
def test_slow():
    pass


def test_fast():
    pass
)";

bool has_plugins() {
  return shell("/usr/bin/python3 -c 'import pytest_timeout, pytest_rerunfailures' 2>/dev/null") == 0;
}

TEST(PytestPlugins, TimeoutAndRerunMarksMeanWhatTheyMeanUnderPytest) {
  if (!has_plugins()) GTEST_SKIP() << "needs python3-pytest-timeout and python3-pytest-rerunfailures";
  Workdir dir;
  dir.write("test_plugins.py", kTests);
  // The ini timeout is every unmarked test's; ranktest's own default (5m)
  // would leave the second test running for a minute.
  dir.write("pytest.ini", "[pytest]\ntimeout = 2\nmarkers =\n    slow: slow tests\n");
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"test_plugins.py\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  const auto finished = run.finished();
  const auto result = [&](const std::string& name) {
    return finished.at("test_plugins.py::" + name)["result"];
  };
  ASSERT_EQ(finished.size(), 5u) << run.out << run.err;
  EXPECT_EQ(result("test_sleeps_past_its_timeout")["outcome"], "timed-out");
  EXPECT_EQ(result("test_sleeps_past_its_timeout")["reason"], "after 1s");
  EXPECT_EQ(result("test_sleeps_past_the_ini_timeout")["outcome"], "timed-out");
  EXPECT_EQ(result("test_sleeps_past_the_ini_timeout")["reason"], "after 2s");
  // Rerun as ranktest's retries: fresh processes, the pass listed as flaky
  // (not the plugin's reruns inside one process, which would hide it).
  EXPECT_EQ(result("test_fails_twice_then_passes")["outcome"], "passed");
  EXPECT_EQ(finished.at("test_plugins.py::test_fails_twice_then_passes")["attempt"], 3);
  EXPECT_NE(run.out.find("FLAKY test_plugins.py::test_fails_twice_then_passes"), std::string::npos)
      << run.out;
  EXPECT_EQ(read_file(dir.path() / "count"), "3");
  EXPECT_EQ(run.last_out_line(), "ranktest: 3 passed, 2 failed, 0 skipped") << run.out;
}

TEST(PytestPlugins, MarkAndKeywordSelectAsPytestDoes) {
  Workdir dir;
  dir.write("test_plugins.py", kTests);
  dir.write("pytest.ini", "[pytest]\nmarkers =\n    slow: slow tests\n");
  auto run = run_ranktest(dir, {"list", "-m", "not slow", "-k", "fast or slow"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("test_plugins.py::test_fast"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("test_slow"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("test_sleeps"), std::string::npos) << run.out;
  run = run_ranktest(dir, {"run", "--keyword", "slow"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 0 failed, 0 skipped") << run.out << run.err;
}

}  // namespace
}  // namespace ranktest::testing
