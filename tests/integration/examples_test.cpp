// The example suite the README's first command runs gives exactly the
// outcomes the README promises.
#include <gtest/gtest.h>

#include <set>
#include <stdlib.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

// One run of the examples writes every format; each is checked here for
// agreeing with the journal (each has its own detailed tests elsewhere).
TEST(Examples, EveryExampleEndsAsDocumented) {
  Workdir dir;
  const std::string examples = EXAMPLES_BINARY_DIR;
  const auto summary = dir.path() / "summary.md";
  setenv("GITHUB_ACTIONS", "true", 1);
  setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
  const auto run = run_ranktest(
      dir, {"run", "--config", RANKTEST_SOURCE_DIR "/examples/ranktest.toml",
            "--state-dir", (dir.path() / ".ranktest").string(), "--junit", "junit.xml",
            "--html", "report.html", "--trace", "trace.json",
            examples + "/arithmetic_test", examples + "/crash_test",
            examples + "/slow_test", examples + "/collective_test"});
  unsetenv("GITHUB_ACTIONS");
  unsetenv("GITHUB_STEP_SUMMARY");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 10 passed, 6 failed, 2 skipped") << run.out;
  const auto finished = run.finished();
  const auto outcome = [&](const std::string& id) {
    return finished.at(id)["result"]["outcome"].get<std::string>();
  };
  EXPECT_EQ(outcome("arithmetic_test::Arithmetic.SumsAVector"), "failed");
  EXPECT_EQ(outcome("arithmetic_test::Arithmetic.SkipsWithoutHardware"), "skipped");
  EXPECT_EQ(outcome("arithmetic_test::Arithmetic.DISABLED_NotReadyYet"), "skipped");
  EXPECT_EQ(outcome("crash_test::Buffers.WritesThroughAPointer"), "crashed");
  EXPECT_EQ(outcome("crash_test::Buffers.ChecksAnInvariant"), "crashed");
  EXPECT_EQ(outcome("slow_test::Rendezvous.WaitsForAPeerThatNeverComes"), "timed-out");
  EXPECT_EQ(outcome("collective_test::Collective.AllReduceAddsEveryRanksGradient"), "passed");
  const auto& shard = finished.at("collective_test::Collective.EveryRankLoadsItsShard")["result"];
  EXPECT_EQ(shard["outcome"], "failed");
  EXPECT_EQ(shard["root_cause_rank"], 2);
  EXPECT_EQ(shard["ranks"].size(), 4u);
  EXPECT_EQ(outcome("collective_test::Collective.EveryRankJoinsTheBarrier"), "timed-out");

  // The other formats of the same run.
  std::size_t not_passed = 0, started = 0;
  for (const auto& [id, event] : finished) {
    const auto result = event["result"]["outcome"].get<std::string>();
    if (result != "passed" && result != "skipped") ++not_passed;
    if (event["attempt"] != 0) ++started;
  }
  EXPECT_EQ(occurrences(run.out, "::error file="), not_passed) << run.out;
  EXPECT_NE(read_file(summary).find("### ranktest: 10 passed, 6 failed, 2 skipped"),
            std::string::npos);
  EXPECT_EQ(occurrences(read_file(dir.path() / "junit.xml"), "<testcase "), finished.size());
  const auto trace = nlohmann::json::parse(read_file(dir.path() / "trace.json"));
  std::set<std::string> traced;
  for (const auto& event : trace["traceEvents"])
    if (event["ph"] == "X") traced.insert(event["name"].get<std::string>());
  EXPECT_EQ(traced.size(), started);
  const auto html = read_file(dir.path() / "report.html");
  for (const auto& [id, event] : finished)
    EXPECT_NE(html.find("\"id\":\"" + id + "\""), std::string::npos) << id;
}

// The PyTorch examples (gloo on CPU), run by the same configuration as the
// README's command: one summary and one JUnit file for gtest and pytest.
TEST(Examples, TorchExamplesEndAsDocumented) {
  Workdir dir;
  dir.write("ranktest.toml",
            "junit = \"junit.xml\"\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"" RANKTEST_SOURCE_DIR "/examples/python\"]\n"
            "[[override]]\nfilter = \"test_spawned_workers.py::*\"\n"
            "audit-children = true\n"
            "[[source]]\npaths = [\"" EXAMPLES_BINARY_DIR "/arithmetic_test\"]\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "test_*.py::*", "--filter",
                                      "arithmetic_test::Arithmetic.*"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const auto finished = run.finished();
  // pytest names tests relative to its rootdir, here examples/python.
  const auto result = [&](const std::string& name) { return finished.at(name)["result"]; };
  EXPECT_EQ(result("test_distributed.py::test_all_reduce_sums_every_rank")["outcome"], "passed");
  EXPECT_EQ(result("test_distributed.py::test_all_reduce_sums_every_rank")["ranks"].size(), 2u);
  const auto assertion = result("test_distributed.py::test_a_rank_fails_an_assertion");
  EXPECT_EQ(assertion["outcome"], "failed");
  EXPECT_EQ(assertion["root_cause_rank"], 1) << assertion.dump(2);
  EXPECT_NE(assertion["failures"][0]["message"].get<std::string>().find(
                "AssertionError: rank 1 has a bad shard"),
            std::string::npos);
  const auto hang = result("test_distributed.py::test_a_rank_skips_a_collective");
  EXPECT_EQ(hang["outcome"], "timed-out");
  ASSERT_GE(hang["stacks"].size(), 2u) << hang.dump(2);
  // Which rank waits where: rank 0 in all_reduce, rank 1 in barrier.
  std::map<int, std::string> where;
  for (const auto& stack : hang["stacks"])
    if (stack["rank"].is_number()) where[stack["rank"].get<int>()] = stack["summary"];
  EXPECT_EQ(where[0].rfind("all_reduce (distributed_c10d.py", 0), 0u) << hang.dump(2);
  EXPECT_EQ(where[1].rfind("barrier (distributed_c10d.py", 0), 0u) << hang.dump(2);
  EXPECT_EQ(result("test_distributed.py::test_runs_without_ranks")["outcome"], "passed");
  EXPECT_EQ(result("test_spawned_workers.py::test_every_worker_passes")["outcome"], "passed");
  const auto raises = result("test_spawned_workers.py::test_a_worker_raises");
  EXPECT_EQ(raises["outcome"], "child-failed");
  EXPECT_NE(raises["reason"].get<std::string>().find("exited with code 1"), std::string::npos);
  const auto exits = result("test_spawned_workers.py::test_a_worker_exits_with_17");
  EXPECT_EQ(exits["outcome"], "child-failed");
  EXPECT_NE(exits["reason"].get<std::string>().find("exited with code 17"), std::string::npos);
  // Mixed: the gtest binary's tests are in the same summary and JUnit file.
  EXPECT_EQ(finished.at("arithmetic_test::Arithmetic.SumsAVector")["result"]["outcome"], "failed");
  EXPECT_EQ(run.last_out_line(), "ranktest: 4 passed, 5 failed, 2 skipped") << run.out;
  const auto junit = read_file(dir.path() / "junit.xml");
  EXPECT_NE(junit.find("test_a_worker_raises"), std::string::npos);
  EXPECT_NE(junit.find("SumsAVector"), std::string::npos);
  EXPECT_TRUE(surviving_processes(run.run_dir()).empty());
}

}  // namespace
}  // namespace ranktest::testing
