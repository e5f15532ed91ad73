#include "execute/process_test_runner.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>

#include "discover/gtest_discoverer.h"
#include "execute/gtest_result.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

constexpr std::size_t kTailBytes = 64 * 1024;
// Keep the end of a long excerpt: the lines before a crash matter most.
constexpr std::size_t kExcerptBytes = 8 * 1024;

process::SpawnRequest gtest_request(const select::PlannedTest& planned,
                                    const schedule::Assignment& assignment,
                                    const RunFolder& folder,
                                    const std::filesystem::path& log_path,
                                    const std::filesystem::path& report_path) {
  const TestCase& test = planned.test;
  process::SpawnRequest request;
  request.argv.push_back(test.executable.string());
  // The user's arguments first: gtest takes the last of a repeated flag, so
  // ranktest's own filter and report path win.
  request.argv.insert(request.argv.end(), test.extra_args.begin(),
                      test.extra_args.end());
  request.argv.push_back("--gtest_filter=" + test.name);
  request.argv.push_back("--gtest_output=json:" + report_path.string());
  std::vector<std::pair<std::string, std::string>> env(test.env.begin(),
                                                       test.env.end());
  env.emplace_back("GTEST_COLOR", "no");
  env.emplace_back("RANKTEST_TEST_ID", test.id);
  env.emplace_back("RANKTEST_ATTEMPT", std::to_string(assignment.attempt));
  env.emplace_back("RANKTEST_RUN_DIR",
                   std::filesystem::absolute(folder.path()).string());
  request.environment = process::make_environment(
      env, discover::gtest_variables_to_remove());
  request.working_directory = test.working_directory;
  request.stdout_path = log_path;
  return request;
}

}  // namespace

ProcessTestRunner::ProcessTestRunner(const RunFolder& folder,
                                     process::SignalWatch& signals,
                                     RunnerOptions options)
    : folder_(folder), signals_(signals), options_(options) {}

// Whatever is still running when the runner goes away is killed and reaped
// by ~ChildProcess.
ProcessTestRunner::~ProcessTestRunner() = default;

void ProcessTestRunner::start(const select::PlannedTest& test,
                              const schedule::Assignment& assignment) {
  const auto now = Clock::now();
  auto failed_to_launch = [&](const std::string& why,
                              const std::filesystem::path& log) {
    TestResult result;
    result.outcome = Outcome::error;
    result.reason = why;
    result.log_path = log.string();
    finished_.push_back(schedule::Finished{assignment, std::move(result)});
  };
  auto folder = folder_.attempt_folder(test.test.id, assignment.attempt);
  if (!folder) return failed_to_launch(folder.error().message, {});
  const auto log_path =
      options_.capture_output ? *folder / "output.log" : std::filesystem::path();
  const auto report_path = *folder / "gtest.json";
  auto child = process::ChildProcess::spawn(
      gtest_request(test, assignment, folder_, log_path, report_path));
  if (!child) return failed_to_launch(child.error().message, log_path);
  running_.push_back(std::make_unique<RunningTest>(RunningTest{
      &test, assignment, std::move(*child), now, now + test.settings.timeout,
      std::nullopt, false, false, log_path, report_path}));
}

schedule::RunnerWakeup ProcessTestRunner::wait() {
  schedule::RunnerWakeup wakeup;
  for (;;) {
    reap();
    enforce_deadlines(Clock::now());
    if (!finished_.empty() || wakeup.interrupt_signal) break;
    const auto event = signals_.wait_until(next_deadline());
    if (event.termination_signal) {
      // A second signal while stopping: no more grace.
      if (stopping_)
        for (auto& running : running_) running->child.signal_group(SIGKILL);
      wakeup.interrupt_signal = event.termination_signal;
    }
  }
  wakeup.finished = std::move(finished_);
  finished_.clear();
  return wakeup;
}

void ProcessTestRunner::stop_all() {
  stopping_ = true;
  const auto now = Clock::now();
  for (auto& running : running_) {
    running->interrupted = true;
    if (!running->kill_at) terminate(*running, now);
  }
}

void ProcessTestRunner::reap() {
  const auto owner = [&](pid_t pid) {
    return std::find_if(running_.begin(), running_.end(),
                        [&](const auto& r) { return r->child.pid() == pid; });
  };
  const auto exits = process::reap_exited_children([&](pid_t pid) {
    // The test is over once its main process is: end what it left behind
    // while the group id is still reserved by the zombie.
    if (auto it = owner(pid); it != running_.end())
      (*it)->child.signal_group(SIGKILL);
  });
  for (const auto& [pid, exit] : exits) {
    auto it = owner(pid);
    if (it == running_.end()) continue;  // not a test's main process
    (*it)->child.mark_reaped(exit);
    finished_.push_back(finish(**it));
    running_.erase(it);
  }
}

void ProcessTestRunner::terminate(RunningTest& running, Clock::time_point now) {
  running.child.signal_group(SIGTERM);
  running.kill_at = now + options_.grace_period;
}

void ProcessTestRunner::enforce_deadlines(Clock::time_point now) {
  for (auto& running : running_) {
    if (!running->kill_at && now >= running->deadline) {
      running->timed_out = true;
      terminate(*running, now);
    } else if (running->kill_at && now >= *running->kill_at) {
      running->child.signal_group(SIGKILL);
    }
  }
}

ProcessTestRunner::Clock::time_point ProcessTestRunner::next_deadline() const {
  auto next = Clock::time_point::max();
  for (const auto& running : running_)
    next = std::min(next, running->kill_at.value_or(running->deadline));
  return next;
}

schedule::Finished ProcessTestRunner::finish(RunningTest& running) {
  const auto tail = text::read_file_tail(running.log_path, kTailBytes);
  std::optional<GtestVerdict> verdict;
  if (std::filesystem::exists(running.report_path))
    verdict = read_gtest_verdict(text::read_file(running.report_path),
                                 running.test->test.name);
  TestResult result = classify_gtest_test(
      GtestProcessEnd{running.child.exit(), running.timed_out,
                      running.interrupted},
      verdict, tail.bytes);
  if (result.outcome == Outcome::timed_out)
    result.reason = fmt::format(
        "after {}", config::format_duration(running.test->settings.timeout));
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
      Clock::now() - running.started);
  result.log_path = running.log_path.string();
  result.output_excerpt = text::keep_end_utf8(
      gtest_test_output(tail.bytes, running.test->test.name, result.failures),
      kExcerptBytes);
  return schedule::Finished{running.assignment, std::move(result)};
}

}  // namespace ranktest::execute
