// The end of a test: the supervisor gathers the facts (its ranks' ends, the
// audit, the cgroup, the stacks), the judge decides, the enrichment explains.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "execute/enrichment.h"
#include "execute/judge.h"
#include "execute/process_test_runner.h"
#include "text/file_tail.h"

namespace ranktest::execute {
namespace {

// How long the end of a test waits for the exit events of its workers that
// their parent reaped already (the kernel tells of an exit just after).
constexpr auto kExitEventsSettle = std::chrono::milliseconds(50);

}  // namespace

schedule::Finished ProcessTestRunner::finish(RunningTest& running) {
  const auto& settings = *running.test->settings;
  TestFacts facts;
  for (const auto& rank : running.ranks) {
    EndedRank ended{*rank.result, rank.stopped,
                    rank.remote_pid ? rank.remote_pid : rank.child.pid(), rank.audited, {}};
    if (rank.watched)
      for (const auto& watched : options_.exit_watch->take(rank.child.pid(), kExitEventsSettle)) {
        auto child = audited_from(watched);
        if (is_worker(child) && ended_badly(child)) ended.failed_workers.push_back(std::move(child));
      }
    if (!rank.worker_exits_path.empty())
      for (auto& child : parse_child_audit(text::read_file(rank.worker_exits_path)))
        if (is_worker(child) && ended_badly(child)) ended.failed_workers.push_back(std::move(child));
    facts.ranks.push_back(std::move(ended));
  }
  facts.first_failed = running.first_failed;
  facts.timed_out = running.timed_out;
  facts.interrupted = running.interrupted;
  facts.left_behind = running.left_behind;
  facts.leak_is_failure = settings.leak_is_failure;
  if (running.cgroup) facts.usage = running.cgroup->usage();
  facts.max_memory = settings.max_memory;
  facts.max_processes = settings.max_processes;

  TestResult result = judge_test(facts);

  find_suspicious_lines(result, options_.suspicious_output);
  attach_hints(result, options_.hints);
  if (running.launcher) collect_launcher_stacks(result, running);
  std::vector<TakenStack> taken;
  for (const auto& d : running.dumpers) taken.push_back(TakenStack{d.pid, d.rank, d.path});
  attach_stacks(result, taken, running.folder,
                running.timed_out && adapter_for(running.test->test->source->kind)
                                         .dumps_stacks_on_signal(),
                [&](pid_t pid) {
                  for (const auto& r : running.ranks)
                    if ((r.child.is_ours() && r.child.pid() == pid) || r.remote_pid == pid)
                      return r.rank;
                  return -1;
                });
  result.duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - running.started);
  if (!running.kept.empty()) {
    // A fixture setup's server: it lives, in its cgroup, until the
    // fixture's tests end.
    if (result.reason.empty())
      result.reason = fmt::format("kept {} process{} running for its fixture{} until the tests "
                                  "that need {} end (pid {})",
                                  running.kept.size(), running.kept.size() == 1 ? "" : "es",
                                  running.test->test->detail().fixtures_setup.size() == 1 ? "" : "s",
                                  running.test->test->detail().fixtures_setup.size() == 1 ? "it" : "them",
                                  fmt::join(running.kept, ", "));
    // A retried setup's earlier attempt ends what it kept first.
    if (const auto earlier = kept_.find(running.assignment.test_index); earlier != kept_.end())
      end_kept(earlier->second);
    kept_[running.assignment.test_index] =
        Kept{std::move(running.kept), std::move(running.cgroup), running.test->test->id,
             std::to_string(running.assignment.attempt)};
  }
  // Removed while the runner next waits, not before the next test starts.
  if (options_.cgroups) options_.cgroups->remove_later(std::move(running.cgroup));
  schedule::Finished finished{running.assignment, std::move(result)};
  finished.forked = running.forked;
  return finished;
}

// The probe of a binary's teardown ended (see ExitProbe): if its full exit
// agreed with the framework's report, the binary's other tests take the
// fast exit; if the teardown changed how it ended, none does; if the test
// did not get far enough to tell, the next test probes again.
void ProcessTestRunner::judge_exit_probe(const RunningTest& running, const Rank& rank,
                                         const std::optional<std::string>& report) {
  const auto it = fork_servers_.find(rank.exit_probe_of);
  if (it == fork_servers_.end()) return;
  const TestCase& test = *running.test->test;
  std::optional<bool> agrees;
  if (rank.child.exit() && !running.timed_out && !running.interrupted && !rank.stopped)
    agrees = adapter_for(test.source->kind).exit_agrees(test, *rank.child.exit(), report);
  it->second->set_exit_probe(!agrees ? ExitProbe::untried
                                     : *agrees ? ExitProbe::fast : ExitProbe::full);
  if (agrees == false)
    options_.warn(fmt::format(
        "{}'s exit-time teardown changes how a test ends ({}: {}); its forked tests exit "
        "fully, as a fresh process would (fork-exit = \"full\")",
        test.source->label, test.name, rank.result ? rank.result->reason : std::string("?")));
}

}  // namespace ranktest::execute
