// The patterns of the suites ranktest exists for (PyTorch Lightning's and
// torch.distributed's own tests), reproduced in tests/python_distributed
// without them: a conftest writing through pytest's terminal writer, a test
// that starts its own ranks unless launched, one that starts pytest again
// for its rank 1, ranks under an import-time copy of the environment
// (gloo's TCPStore rendezvous), workers whose failures the harness
// swallows or reports as a skip. Each ends the same in both modes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "harness.h"

namespace ranktest::testing {
namespace {

class DistributedPatterns : public ::testing::TestWithParam<std::string> {};

TEST_P(DistributedPatterns, EndAsPytestSaysAndSwallowedWorkersAreSuspicious) {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"60s\"\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_distributed\"]\n"
            "mode = \"" + GetParam() + "\"\n");
  const auto run = run_ranktest(dir, {"run"});
  const auto finished = run.finished();
  const std::map<std::string, std::string> expected{
      {"test_self_launching.py::test_starts_rank_one_itself_unless_launched", "passed"},
      {"test_swallowed_workers.py::test_a_worker_exit_17_is_swallowed", "passed"},
      {"test_swallowed_workers.py::test_every_worker_passes", "passed"},
      {"test_swallowed_workers.py::test_workers_ask_for_a_skip", "skipped"},
      {"test_swallowed_workers.py::test_a_forked_child_raises", "passed"},
      {"test_swallowed_workers.py::test_runs_a_tool_that_fails_on_purpose", "passed"},
      // Forked ranks get their own environment even where the test put
      // back a copy made when its module was imported (in the server).
      {"test_environment_snapshot.py::test_ranks_keep_their_environment_under_an_import_time_copy",
       "passed"},
      {"test_environment_snapshot.py::test_gloo_rendezvous_under_an_import_time_copy", "passed"},
      // pytest started again from the test's sys.argv runs just this test.
      {"test_relaunching.py::test_relaunches_pytest_for_rank_one", "passed"},
      // What a test started and did not wait for gets the grace period to
      // end on its own before it counts as left behind.
      {"test_relaunching.py::test_rank_zero_ends_before_its_relaunched_rank_one", "passed"},
  };
  ASSERT_EQ(finished.size(), expected.size()) << run.out << run.err;
  for (const auto& [id, outcome] : expected) {
    ASSERT_TRUE(finished.count(id)) << id << "\n" << run.out << run.err;
    EXPECT_EQ(finished.at(id)["result"]["outcome"], outcome) << finished.at(id).dump(2);
    // The conftest's terminal writer works: the fork server collected, and
    // no test fell back to a fresh interpreter.
    EXPECT_EQ(finished.at(id)["forked"], GetParam() == "fork-server") << id;
  }
  const auto suspicious = [&](const std::string& id) {
    return finished.at("test_swallowed_workers.py::" + id)["result"]["suspicious"];
  };
  // Swallowed: named, with the code, and the pass stays a pass.
  ASSERT_EQ(suspicious("test_a_worker_exit_17_is_swallowed").size(), 1u) << run.out;
  const auto exit_17 = suspicious("test_a_worker_exit_17_is_swallowed")[0].get<std::string>();
  EXPECT_NE(exit_17.find("from multiprocessing.spawn import spawn_main"), std::string::npos)
      << exit_17;
  EXPECT_NE(exit_17.find("exited with code 17 while the test passed"), std::string::npos)
      << exit_17;
  ASSERT_EQ(suspicious("test_a_forked_child_raises").size(), 1u) << run.out;
  EXPECT_NE(suspicious("test_a_forked_child_raises")[0].get<std::string>().find(
                "forked child"),
            std::string::npos);
  // Not swallowed: clean workers, a skip its workers asked for, a tool
  // whose failure the test checked.
  EXPECT_EQ(suspicious("test_every_worker_passes").size(), 0u);
  EXPECT_EQ(suspicious("test_workers_ask_for_a_skip").size(), 0u);
  EXPECT_EQ(suspicious("test_runs_a_tool_that_fails_on_purpose").size(), 0u);
  EXPECT_NE(run.out.find("ranktest: 2 passing tests may have swallowed a failure"),
            std::string::npos) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 9 passed, 0 failed, 1 skipped");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.err.find("fork server"), std::string::npos) << run.err;
}

// With the audit, the swallowed worker fails the test (child-failed); the
// skip its workers asked for stays a skip.
TEST(DistributedPatterns, TheAuditFailsASwallowedWorker) {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"60s\"\naudit-children = true\n[[source]]\nkind = \"pytest\"\n"
            "python = \"/usr/bin/python3\"\n"
            "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_distributed/test_swallowed_workers.py\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  const auto finished = run.finished();
  const auto outcome = [&](const std::string& id) {
    return finished.at("test_swallowed_workers.py::" + id)["result"]["outcome"];
  };
  EXPECT_EQ(outcome("test_a_worker_exit_17_is_swallowed"), "child-failed") << run.out;
  EXPECT_EQ(outcome("test_a_forked_child_raises"), "child-failed") << run.out;
  EXPECT_EQ(outcome("test_workers_ask_for_a_skip"), "skipped") << run.out;
  EXPECT_EQ(outcome("test_every_worker_passes"), "passed") << run.out;
  EXPECT_EQ(run.exit_code, 1);
}

// An ordinary user (most CI) gets no kernel process events: the plugin
// watches the waits of the test's own process instead, forked or fresh,
// and the swallowed worker is still suspicious, named as before.
TEST_P(DistributedPatterns, AsAnOrdinaryUserSwallowedWorkersAreStillSuspicious) {
  if (::geteuid() != 0 || shell("setpriv --reuid=65534 --regid=65534 --clear-groups true") != 0)
    GTEST_SKIP() << "needs root, to run ranktest as the user nobody";
  Workdir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  dir.write("ranktest.toml",
            "timeout = \"60s\"\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_distributed/test_swallowed_workers.py\"]\n"
            "mode = \"" + GetParam() + "\"\n");
  std::string output;
  const int code = shell("cd " + dir.path().string() +
                             " && setpriv --reuid=65534 --regid=65534 --clear-groups env "
                             "HOME=" + dir.path().string() + " " RANKTEST_BINARY " run 2>&1",
                         &output);
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("watched from inside pytest"), std::string::npos) << output;
  Invocation run;
  run.workdir = dir.path();
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 5u) << output;
  const auto suspicious = [&](const std::string& id) {
    return finished.at("test_swallowed_workers.py::" + id)["result"]["suspicious"];
  };
  ASSERT_EQ(suspicious("test_a_worker_exit_17_is_swallowed").size(), 1u) << output;
  EXPECT_NE(suspicious("test_a_worker_exit_17_is_swallowed")[0].get<std::string>().find(
                "from multiprocessing.spawn import spawn_main"),
            std::string::npos)
      << output;
  ASSERT_EQ(suspicious("test_a_forked_child_raises").size(), 1u) << output;
  EXPECT_NE(suspicious("test_a_forked_child_raises")[0].get<std::string>().find("forked child"),
            std::string::npos);
  EXPECT_EQ(suspicious("test_every_worker_passes").size(), 0u) << output;
  EXPECT_EQ(suspicious("test_workers_ask_for_a_skip").size(), 0u) << output;
  EXPECT_EQ(suspicious("test_runs_a_tool_that_fails_on_purpose").size(), 0u) << output;
  for (const auto& [id, event] : finished)
    EXPECT_EQ(event["forked"], GetParam() == "fork-server") << id;
}

// Lightning's deadlock detector: the failing rank (a pytest the test
// started, not a ranktest rank) SIGKILLs rank 0, then raises. The crash
// names that process and shows its traceback, written after rank 0 died;
// a rank 1 that fails after rank 0 passed makes the pass suspicious. As
// root (the kernel's process events) and as an ordinary user (ranktest
// reaps the orphan itself), forked and fresh.
TEST_P(DistributedPatterns, AProcessThatKillsItsRankIsNamedWithItsTraceback) {
  const bool as_nobody_too =
      ::geteuid() == 0 && shell("setpriv --reuid=65534 --regid=65534 --clear-groups true") == 0;
  for (const bool as_nobody : {false, true}) {
    if (as_nobody && !as_nobody_too) continue;
    SCOPED_TRACE(as_nobody ? "as nobody" : "as this user");
    Workdir dir;
    std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
    dir.write("ranktest.toml",
              "timeout = \"60s\"\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
              "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_killing_ranks\"]\n"
              "mode = \"" + GetParam() + "\"\n");
    std::string output;
    shell("cd " + dir.path().string() + " && " +
              (as_nobody ? "setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=" +
                               dir.path().string() + " "
                         : std::string()) +
              RANKTEST_BINARY " run 2>&1",
          &output);
    Invocation run;
    run.workdir = dir.path();
    const auto finished = run.finished();
    ASSERT_EQ(finished.size(), 3u) << output;
    const auto& killed =
        finished.at("test_rank_kills_rank_zero.py::test_rank_one_kills_rank_zero_then_raises")
            ["result"];
    EXPECT_EQ(killed["outcome"], "crashed") << killed.dump(2);
    const auto reason = killed["reason"].get<std::string>();
    EXPECT_EQ(reason.rfind("SIGKILL; probable root cause: child ", 0), 0u) << reason;
    // As an ordinary user its command line is read while it runs, once
    // rank 0's end is seen; on a busy machine it may have ended first, and
    // only its command name is left (see the test below).
    EXPECT_NE(reason.find(as_nobody ? "(python3" : "(python3 -c import os, signal, sys, time"),
              std::string::npos)
        << reason;
    EXPECT_NE(reason.find("exited with code 1"), std::string::npos) << reason;
    EXPECT_NE(output.find("| RuntimeError: planted failure in rank 1"), std::string::npos)
        << output;
    const auto& late =
        finished.at("test_rank_kills_rank_zero.py::test_rank_one_fails_after_rank_zero_passed")
            ["result"];
    EXPECT_EQ(late["outcome"], "passed") << late.dump(2);
    ASSERT_EQ(late["suspicious"].size(), 1u) << late.dump(2);
    EXPECT_NE(late["suspicious"][0].get<std::string>().find(
                  "exited with code 1 after the test passed"),
              std::string::npos)
        << late.dump(2);
    // Gone before the rank was seen to end: named all the same, by its
    // command line where the kernel's process events watched it (root,
    // where the kernel lets ranktest subscribe), else by the command name
    // its zombie kept.
    const auto& gone =
        finished.at("test_rank_kills_rank_zero.py::test_a_child_ended_before_its_rank_was_killed")
            ["result"];
    EXPECT_EQ(gone["outcome"], "crashed") << gone.dump(2);
    const auto gone_reason = gone["reason"].get<std::string>();
    EXPECT_EQ(gone_reason.rfind("SIGKILL; probable root cause: child ", 0), 0u) << gone_reason;
    EXPECT_NE(gone_reason.find("(python3"), std::string::npos) << gone_reason;
    EXPECT_NE(gone_reason.find("exited with code 3"), std::string::npos) << gone_reason;
    if (as_nobody) {
      EXPECT_NE(gone_reason.find("(python3) exited"), std::string::npos) << gone_reason;
    }
    EXPECT_NE(output.find("ranktest: 1 passed, 2 failed, 0 skipped"), std::string::npos) << output;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, DistributedPatterns, ::testing::Values("plain", "fork-server"),
                         [](const auto& info) {
                           return info.param == "plain" ? std::string("Plain")
                                                        : std::string("ForkServer");
                         });

}  // namespace
}  // namespace ranktest::testing
