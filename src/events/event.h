// Every fact of a run is one of these small immutable events, delivered in
// the order they happen: RunStarted, then TestStarted/TestFinished pairs
// (interleaved when tests run in parallel), then RunFinished. Tests that
// never start (skipped, not run) get a TestFinished with attempt 0.
// The JSON form is documented in docs/events.md.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/outcome.h"

namespace ranktest::events {

using TimePoint = std::chrono::system_clock::time_point;

inline constexpr int kSchemaVersion = 1;

// What every test event says about the test itself.
struct TestInfo {
  std::string id;
  std::string name;
  std::string source;  // the source label, e.g. the binary's file name
  std::optional<SourceLocation> location;
  // Its framework: "gtest", "pytest", "ctest" (empty in a journal written
  // before the field was).
  std::string kind;
};

// What the command line of a run said (the configuration is read again),
// so that `ranktest rerun` runs its tests as it ran them. Paths are
// absolute. Empty in journals written before 2026-12-07.
struct Invocation {
  std::optional<std::string> config_file;
  std::vector<std::string> paths;  // the sources named on the command line
  std::string working_directory;
  std::optional<std::string> state_dir;
  std::optional<int> jobs;
  std::optional<std::int64_t> timeout_ms;
  std::optional<int> retries;
  bool fail_fast = false;
  bool audit_children = false;
  bool recollect = false;
  std::optional<std::string> allocation;
  std::optional<std::string> markers;  // pytest's -m
  std::optional<std::string> keyword;  // pytest's -k
};

struct RunStarted {
  std::string run_id;
  TimePoint time;
  std::string run_dir;
  std::size_t tests_to_run = 0;
  std::size_t tests_to_skip = 0;
  std::size_t filtered_out = 0;
  int jobs = 1;
  // How tests are contained: "cgroup v2 (cgroup.kill), v1 pids, v1 memory",
  // or that only process groups and markers are used.
  std::string isolation;
  // Every test the run means to start, so that a journal cut short by a
  // SIGKILL still names the tests that never started.
  std::vector<TestInfo> planned;
  // flaky = "fail": a test that passed on a retry is counted failed.
  bool flaky_fails = false;
  // Ids of the planned tests that run in a network namespace of their own
  // (network = "isolated"); the others use the host's network.
  std::vector<std::string> network_isolated;
  // How many planned tests may run in worker processes (isolation =
  // "worker"); the others each get processes of their own.
  std::size_t in_workers = 0;
  // Inside a Slurm allocation of several nodes, where every test runs as
  // a job step: "Slurm job 12 (node[1-3])"; empty on one machine.
  std::string allocation = {};
  // How it was asked for, as `ranktest rerun` asks again.
  Invocation invocation = {};
};

// Where a started test ran: what it held from the resource pool.
struct Placement {
  std::vector<int> slots;  // empty when the test was never started
  std::map<std::string, std::vector<std::string>> devices;  // kind -> ids
  int port = 0;  // MASTER_PORT; 0 when none
  // Inside an allocation: the nodes its job step ran on.
  std::vector<std::string> nodes = {};
};

// Something a person should know about the run that is no test's verdict:
// a fork server that cannot fork, a limit that is not enforced here, port
// locks not shared with other users. In the journal, so `ranktest report`
// says it again.
struct RunWarning {
  std::string run_id;
  TimePoint time;
  std::string message;
};

struct TestStarted {
  std::string run_id;
  TimePoint time;
  TestInfo test;
  int attempt = 1;
  Placement placement;
};

// A test is still running after another `slow` period (60 s by default).
struct TestSlow {
  std::string run_id;
  TimePoint time;
  TestInfo test;
  int attempt = 1;
  std::chrono::milliseconds elapsed{0};
};

// A quarantined test's entry (config::QuarantineEntry, docs/configuration.md).
struct Quarantine {
  std::string reason;
  std::string until;  // "YYYY-MM-DD"
  std::string place;  // "ranktest.toml:12:3"
};

struct TestFinished {
  std::string run_id;
  TimePoint time;
  TestInfo test;
  int attempt = 1;  // 0: the test was never started
  Placement placement;
  TestResult result;
  // This attempt failed and the test runs again: not its verdict yet.
  bool retrying = false;
  // This attempt ran as a fresh process because the test failed when
  // forked from a fork server, and it passed: the test fails only when
  // forked (a module that keeps state made at import time, say). It counts
  // as passed and is listed apart, like a flaky test.
  bool fork_only = false;
  // A fork server forked this attempt's process(es) (mode = "fork-server").
  bool forked = false;
  // With retrying: why it runs again, where that is not a retry or a
  // forked failure's fresh run (narrowing down an order-dependent failure).
  std::string retry_note = {};
  // isolation = "worker": how many tests its worker process ran before
  // this attempt (0: it was the process's first).
  std::size_t ran_before = 0;
  // Quarantined: its outcome is reported but cannot fail the run.
  std::optional<Quarantine> quarantined = std::nullopt;
};

// The test failed, then passed on a retry (the last attempt passed).
bool is_flaky(const TestFinished& event);

struct Counts {
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t skipped = 0;
  std::size_t not_run = 0;      // never started: fail-fast, interruption
  std::size_t interrupted = 0;  // started, then stopped by an interruption
  // Passed on a retry after failing; also in `passed`, or in `failed` under
  // flaky = "fail".
  std::size_t flaky = 0;
  // Failed when forked, passed as a fresh process; also in `passed`.
  std::size_t fork_only = 0;
  // Quarantined tests whose verdict did not pass (failed, not run): in
  // none of the counts above, and no failure of the run.
  std::size_t quarantined = 0;
  void add(Outcome outcome);
  // A test's verdict: nothing for an attempt that is retried.
  void add(const TestFinished& event, bool flaky_fails);
  // Whether the run failed its tests: one failed, or one that was selected
  // never ran (it needs devices the machine lacks, its fixture's setup
  // failed, the run was cut short). A test not run is no pass.
  bool fail() const { return failed > 0 || not_run > 0; }
};

struct RunFinished {
  std::string run_id;
  TimePoint time;
  Counts counts;
  std::chrono::milliseconds duration{0};
  // "" when the run was not cut short; "fail-fast", "interrupted" else.
  std::string cancel_reason;
  int exit_code = 0;
  // CPU time the runner itself used (user and system, its threads, not its
  // tests): what supervising the run cost.
  std::chrono::milliseconds runner_cpu{0};
  // The runner's own peak resident memory (its tests' not included): no
  // test's output or message may make it grow without bound.
  std::uint64_t runner_peak_memory = 0;  // bytes
};

using Event =
    std::variant<RunStarted, RunWarning, TestStarted, TestSlow, TestFinished, RunFinished>;

// "2026-12-02T14:03:12.345Z"
std::string format_time(TimePoint time);

}  // namespace ranktest::events
