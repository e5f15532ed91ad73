// The end of a test: the supervisor gathers the facts (its ranks' ends, the
// audit, the cgroup, the stacks), the judge decides, the enrichment explains.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "execute/enrichment.h"
#include "execute/judge.h"
#include "execute/process_test_runner.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

#include <algorithm>
#include <set>

namespace ranktest::execute {
namespace {

// How long the end of a test waits for the exit events of its workers that
// their parent reaped already (the kernel tells of an exit just after).
constexpr auto kExitEventsSettle = std::chrono::milliseconds(50);

// What a rank's leftovers wrote to its log after the rank was read (a
// relaunched rank's traceback, printed once it had killed rank 0) ends
// its excerpt: it is often the only word of why the test failed.
constexpr std::size_t kLaterOutputBytes = 8 * 1024;

void add_later_output(RankResult& result, const std::filesystem::path& log,
                      std::uintmax_t size_read) {
  if (log.empty()) return;
  std::error_code error;
  const auto size = std::filesystem::file_size(log, error);
  if (error || size <= size_read) return;
  // One byte more: the tail starts after the first newline it holds,
  // which is then the one that ended the part already read.
  auto later = text::read_file_tail(
                   log, static_cast<std::size_t>(std::min<std::uintmax_t>(
                            size - size_read + (size_read > 0 ? 1 : 0), kLaterOutputBytes)))
                   .bytes;
  if (later.empty()) return;
  if (!result.output_excerpt.empty() && result.output_excerpt.back() != '\n')
    result.output_excerpt += '\n';
  result.output_excerpt += later;
  result.output_excerpt = text::keep_end_utf8(result.output_excerpt, kLaterOutputBytes);
}

}  // namespace

schedule::Finished ProcessTestRunner::finish(RunningTest& running) {
  const auto& settings = *running.test->settings;
  TestFacts facts;
  // The watch and the plugin may both see a process end; a leftover the
  // subreaper reaped counts as one (what a pass left may flag it).
  std::set<pid_t> seen;
  for (const auto& child : running.ended_after) seen.insert(child.pid);
  const auto sort = [&](EndedRank& ended, AuditedChild child) {
    if (!ended_badly(child) || !seen.insert(child.pid).second) return;
    (is_worker(child) ? ended.failed_workers : ended.failed_children).push_back(std::move(child));
  };
  for (const auto& rank : running.ranks) {
    EndedRank ended{*rank.result, rank.stopped,
                    rank.remote_pid ? rank.remote_pid : rank.child.pid(), rank.audited, {}, {},
                    rank.remote_host};
    if (rank.watched)
      for (const auto& watched : options_.exit_watch->take(rank.watched_pid, kExitEventsSettle))
        sort(ended, audited_from(watched));
    if (!rank.worker_exits_path.empty())
      for (auto& child : parse_child_audit(text::read_file(rank.worker_exits_path)))
        sort(ended, std::move(child));
    add_later_output(ended.result, rank.log_path, rank.log_size_read);
    facts.ranks.push_back(std::move(ended));
  }
  facts.ended_after = std::move(running.ended_after);
  facts.first_failed = running.first_failed;
  facts.timed_out = running.timed_out;
  if (running.timed_out && !running.began)
    facts.timed_out_starting = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(settings.start_timeout, settings.timeout));
  if (auto starting = running.group->starting()) facts.starting = std::move(*starting);
  facts.interrupted = running.interrupted;
  facts.left_behind = running.left_behind;
  facts.left_behind_commands = running.leftover_commands;
  facts.leak_is_failure = settings.leak_is_failure;
  facts.kept_for_fixtures = running.kept;
  facts.fixtures = running.test->test->detail().fixtures_setup.size();
  if (running.cgroup) facts.usage = running.cgroup->usage();
  facts.max_memory = settings.max_memory;
  facts.max_processes = settings.max_processes;

  TestResult result = judge_test(facts);

  find_suspicious_lines(result, options_.suspicious_output);
  attach_hints(result, options_.hints);
  running.group->add_stacks(result);
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
    // A retried setup's earlier attempt ends what it kept first.
    if (const auto earlier = kept_.find(running.assignment.test_index); earlier != kept_.end())
      end_kept(earlier->second);
    kept_[running.assignment.test_index] =
        Kept{std::move(running.kept), std::move(running.cgroup), running.test->test->id,
             std::to_string(running.assignment.attempt)};
  }
  // A worker whose cgroup saw an OOM kill would carry it into its next
  // test's verdict: it ends here.
  if (facts.usage && facts.usage->oom_kills > 0) running.worker_goes_on = false;
  auto ran_before = running.group->ran_before();
  running.group->judged();
  // Removed while the runner next waits, not before the next test starts.
  if (options_.cgroups && running.cgroup)
    options_.cgroups->remove_later(std::move(running.cgroup));
  schedule::Finished finished{running.assignment, std::move(result)};
  finished.forked = running.forked;
  finished.ran_before = std::move(ran_before);
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
        test.source->label, test.name(), rank.result ? rank.result->reason : std::string("?")));
}

}  // namespace ranktest::execute
