// The real TestRunner: one process group per test, output captured to the
// test's log, the timeout enforced (SIGTERM to the group, a grace period,
// SIGKILL), the result read from gtest's JSON report.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "config/duration.h"
#include "execute/run_folder.h"
#include "process/child_process.h"
#include "process/signal_watch.h"
#include "schedule/scheduler.h"

namespace ranktest::execute {

struct RunnerOptions {
  config::Duration grace_period = std::chrono::seconds(5);
  bool capture_output = true;  // false: tests write to the runner's terminal
};

class ProcessTestRunner final : public schedule::TestRunner {
 public:
  ProcessTestRunner(const RunFolder& folder, process::SignalWatch& signals,
                    RunnerOptions options);
  ~ProcessTestRunner() override;

  void start(const select::PlannedTest& test,
             const schedule::Assignment& assignment) override;
  schedule::RunnerWakeup wait() override;
  void stop_all() override;

 private:
  using Clock = std::chrono::steady_clock;

  struct RunningTest {
    const select::PlannedTest* test = nullptr;
    schedule::Assignment assignment;
    process::ChildProcess child;
    Clock::time_point started;
    Clock::time_point deadline;               // the test's timeout
    std::optional<Clock::time_point> kill_at;  // SIGTERM sent; SIGKILL then
    bool timed_out = false;
    bool interrupted = false;
    std::filesystem::path log_path;     // empty when output is not captured
    std::filesystem::path report_path;  // gtest's JSON report
  };

  void reap();
  void enforce_deadlines(Clock::time_point now);
  void terminate(RunningTest& running, Clock::time_point now);
  Clock::time_point next_deadline() const;
  schedule::Finished finish(RunningTest& running);

  const RunFolder& folder_;
  process::SignalWatch& signals_;
  RunnerOptions options_;
  std::vector<std::unique_ptr<RunningTest>> running_;
  std::vector<schedule::Finished> finished_;  // not yet returned by wait()
  bool stopping_ = false;  // stop_all() was called
};

}  // namespace ranktest::execute
