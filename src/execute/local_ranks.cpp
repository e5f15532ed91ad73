// The ranks of a test that are the runner's own children: started alone,
// forked by a fork server, or a worker's process. The runner reaps them,
// signals their process group and whatever carries the test's markers,
// and takes their stacks itself: Python processes write their own, then a
// debugger per process.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>

#include "execute/enrichment.h"
#include "execute/local_ranks.h"
#include "execute/process_test_runner.h"
#include "execute/stack_dump.h"
#include "process/process_scan.h"

namespace ranktest::execute {
namespace {

// How long Python ranks get to write their stacks (faulthandler writes from
// its signal handler at once).
constexpr auto kPythonStackTime = std::chrono::milliseconds(200);

}  // namespace

const process::TestCgroup* ProcessTestRunner::RankGroup::cgroup() const {
  return running_.cgroup.get();
}

std::unique_ptr<ProcessTestRunner::RankGroup> ProcessTestRunner::local_ranks(
    RunningTest& running) {
  return std::make_unique<LocalRanks>(*this, running);
}

// At the timeout, before any debugger attaches (it would stop what it
// attaches to): Python processes running ranktest's plugin write their own
// stacks on SIGUSR2 (faulthandler, even while blocked in C code), and each
// ranktest-audit lets go of its tracees on SIGUSR1 (a debugger cannot attach
// to a traced process). How long the Python ranks get to write theirs;
// nullopt when there was nobody to ask.
std::optional<PhaseClock::duration> ProcessTestRunner::LocalRanks::ask_for_stacks() {
  auto& running = running_;
  const auto* leader = this->leader();
  if (!leader) return std::nullopt;
  bool asked = false;
  PhaseClock::duration python_wait{0};
  if (adapter_for(running.test->test->source->kind).dumps_stacks_on_signal()) {
    const auto processes = runner_.test_processes(running, leader->process_group());
    for (const auto& [pid, path] : python_stack_files(running.folder))
      if (std::find(processes.begin(), processes.end(), pid) != processes.end()) {
        ::kill(pid, SIGUSR2);
        asked = true;
        python_wait = kPythonStackTime;
      }
  }
  for (const auto& rank : running.ranks)
    if (!rank.audit_path.empty() && rank.child.is_ours() && !rank.child.exit()) {
      ::kill(rank.child.pid(), SIGUSR1);
      asked = true;
    }
  if (!asked) return std::nullopt;
  return python_wait;
}

// A debugger per process of the test (every rank and whatever they
// started) writes all its threads' stacks. False when none could be
// started (no gdb): then nothing waits.
bool ProcessTestRunner::LocalRanks::start_stack_dumps() {
  auto& running = running_;
  const auto* leader = this->leader();
  if (!leader) return false;
  for (const pid_t pid : runner_.test_processes(running, leader->process_group())) {
    const bool audit_helper = std::any_of(running.ranks.begin(), running.ranks.end(), [&](const Rank& r) {
      return !r.audit_path.empty() && r.child.pid() == pid;
    });
    if (audit_helper) continue;  // ranktest's own process, not the test's
    process::SpawnRequest request;
    request.argv = stack_dump_command(pid);
    request.environment = process::make_environment({}, {});
    request.stdout_path = running.folder / fmt::format("stacks-{}.txt", pid);
    auto child = process::ChildProcess::spawn(request);
    if (!child) continue;
    // A rank's number from the runner's own records (a forked test's
    // environment in /proc is its fork server's), else from its RANK.
    int rank_number = -1;
    for (const auto& r : running.ranks)
      if (r.child.pid() == pid) rank_number = r.rank;
    if (rank_number < 0)
      if (const auto rank = process::environment_value(pid, "RANK"))
        rank_number = std::atoi(rank->c_str());
    running.dumpers.push_back(Dumper{pid, rank_number, request.stdout_path, std::move(*child)});
  }
  return !running.dumpers.empty();
}

}  // namespace ranktest::execute
