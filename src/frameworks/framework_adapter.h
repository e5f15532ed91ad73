// What the runner knows of a test framework, and all it knows: how to start
// one test as one rank (alone, or forked from a fork server), and how to read
// what that rank did. One per framework, in its room
// (frameworks/gtest/gtest_adapter.cpp, frameworks/pytest/pytest_adapter.cpp,
// frameworks/ctest/ctest_adapter.cpp), reached through the framework's
// FrameworkKind (framework_kind.h; adapter_for() is a shorthand); the
// supervisor, the judge and the fork server branch on none of them.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frameworks/gtest/gtest_result.h"
#include "execute/launch_plan.h"
#include "model/test_case.h"

namespace ranktest::execute {

// One rank as its framework tells it.
struct RankReading {
  TestResult result;    // outcome, reason, failures
  std::string excerpt;  // what the test printed, less what the framework added
  // When the rank's first failing phase ended (seconds since the epoch),
  // where the framework records it.
  std::optional<double> failed_at;
};

class FrameworkAdapter {
 public:
  virtual ~FrameworkAdapter() = default;

  // The stem of each rank's result file in the attempt folder
  // ("gtest": gtest.json, gtest-rank-1.json).
  virtual std::string_view report_stem() const = 0;

  // Adds to `plan` (holding the source's environment already) the command
  // that runs only `test` and writes its result to `report`.
  virtual void add_command(const TestCase& test, const std::filesystem::path& report,
                           const std::filesystem::path& attempt_folder, RankPlan& plan) const = 0;

  // Adds to `plan` what the framework itself tells a test about the devices
  // it was granted, beyond ranktest's contract (CTest's
  // CTEST_RESOURCE_GROUP_* variables); most frameworks add nothing.
  virtual void add_device_environment(
      const TestCase& /*test*/, const std::map<std::string, std::vector<std::string>>& /*devices*/,
      RankPlan& /*plan*/) const {}

  // A rank's end read together with its result file (nullopt: none was
  // written) and the end of its log.
  virtual RankReading read(const TestCase& test, const ProcessEnd& end,
                           const std::optional<std::string>& report,
                           std::string_view log_tail) const = 0;

  // The fork server's command and environment for `source`, where
  // `library` is libranktest-forkserver.so; an error says why it cannot
  // have one.
  virtual Expected<RankPlan> fork_server_command(const TestSource& source,
                                                 const std::filesystem::path& library) const = 0;

  // What the run calls `source`'s fork server in what it says (a gtest
  // binary's label; a pytest source's paths, which every file of it shares).
  virtual std::string fork_server_name(const TestSource& source) const { return source.label; }

  // Adds to a fork request what this framework's server reads to start a
  // test (docs/fork-server.md): the test and its environment.
  virtual void add_fork_request(const TestCase& test, const std::vector<std::string>& argv,
                                const std::vector<std::string>& environment, bool full_exit,
                                nlohmann::json& message) const = 0;

  // Whether the test's processes write their stacks when sent SIGUSR2
  // (python-stacks-<pid>.txt in the attempt folder), which a debugger
  // attaching would otherwise hide.
  virtual bool dumps_stacks_on_signal() const { return false; }

  // Whether a pass whose worker process failed (is_worker, child_audit.h)
  // is suspicious without audit-children: where the process watch can see
  // it, a harness that swallows its workers' exits cannot hide them. Not
  // for gtest (a death test's forked child dies on purpose) nor CTest
  // (whatever its commands run).
  virtual bool watches_workers() const { return false; }

  // Whether a fresh process of the test says when the test itself begins
  // (RANKTEST_BEGIN_FD, after its interpreter, imports and collection), so
  // its timeout counts from there and starting up has start-timeout.
  virtual bool says_when_it_begins() const { return false; }

  // mode = "collecting-workers": the command of a fresh process that
  // collects the test's whole source, then runs the tests its worker is
  // given, made from the test's own command `argv` (add_command's).
  virtual std::vector<std::string> collecting_worker_argv(const TestCase& /*test*/,
                                                          std::vector<std::string> argv) const {
    return argv;
  }

  // Whether ranktest's gtest gate (libranktest-gtest-gate.so) may be
  // preloaded into a fresh process of the framework's, to line-buffer its
  // output, once its binary took a preload of ranktest's.
  virtual bool takes_the_gate() const { return false; }

  // Whether a forked test can skip the server's teardown (fork-exit), so a
  // source's first forked test probes whether that teardown matters.
  virtual bool has_fast_exit() const { return false; }

  // For a framework with a fast exit: whether the full exit of a forked
  // test agrees with what it reported (see ExitProbe); nullopt when the
  // report does not tell (the test did not get that far).
  virtual std::optional<bool> exit_agrees(const TestCase&, const ProcessExit&,
                                          const std::optional<std::string>& /*report*/) const {
    return std::nullopt;
  }
};

const FrameworkAdapter& adapter_for(SuiteKind kind);

}  // namespace ranktest::execute
