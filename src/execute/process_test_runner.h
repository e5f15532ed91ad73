// The real TestRunner: for a test with N ranks, N processes in one process
// group of their own, each with the rank environment and its own log; the
// timeout enforced on the whole group (SIGTERM, a grace period, SIGKILL);
// once a rank fails, the others get the grace period to finish, then are
// stopped; each rank's result read from its own gtest JSON report.
#pragma once

#include <chrono>
#include <functional>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <vector>

#include "config/duration.h"
#include "execute/fork_server.h"
#include "execute/launch_plan.h"
#include "execute/run_folder.h"
#include "process/child_process.h"
#include "process/network_namespace.h"
#include "process/signal_watch.h"
#include "process/test_cgroup.h"
#include "schedule/scheduler.h"

namespace ranktest::execute {

struct RunnerOptions {
  config::Duration grace_period = std::chrono::seconds(5);
  bool capture_output = true;  // false: tests write to the runner's terminal
  // Device kinds the machine has: every test is told which of each it may
  // use, even none.
  std::vector<std::string> inventory_kinds;
  std::uint64_t max_output = 0;  // bytes kept of each log; 0: all
  // Failure signatures that make a pass suspicious (suspicious-output).
  std::vector<std::string> suspicious_output;
  // ranktest-audit, which runs a test whose children are audited.
  std::filesystem::path audit_helper;
  // Known error signatures, in order of precedence.
  std::vector<config::Hint> hints;
  // Where set and available, each test runs in a cgroup of its own.
  process::CgroupTree* cgroups = nullptr;
  // [mpirun] and [slurm], and ranktest-rank, which they start per rank.
  config::LauncherConfig mpirun;
  config::LauncherConfig slurm;
  std::filesystem::path rank_helper;
  // Where the runner's warnings go (a RunWarning event): a fork server that
  // cannot serve, a binary whose teardown matters.
  std::function<void(const std::string&)> warn;
};

class ProcessTestRunner final : public schedule::TestRunner {
 public:
  ProcessTestRunner(const RunFolder& folder, process::SignalWatch& signals,
                    RunnerOptions options);
  ~ProcessTestRunner() override;

  void start(const select::PlannedTest& test,
             const schedule::Assignment& assignment) override;
  schedule::RunnerWakeup wait(
      std::optional<std::chrono::steady_clock::time_point> wake_by) override;
  std::optional<int> pause_until(std::chrono::steady_clock::time_point until) override;
  void stop_all() override;

 private:
  using Clock = std::chrono::steady_clock;

  struct Rank {
    int rank = 0;
    process::ChildProcess child;
    std::filesystem::path log_path;     // empty when output is not captured
    std::filesystem::path report_path;  // gtest's JSON report
    std::filesystem::path audit_path;   // ranktest-audit's report; empty: not audited
    Clock::time_point ended{};           // set once reaped
    std::optional<RankResult> result{};  // set once reaped
    bool stopped = false;  // still running when another rank's failure stopped it
    // Started by a launcher: the test's pid on its node, once ranktest-rank
    // said it started; what it left running there.
    int remote_pid = 0;
    std::vector<int> remote_left_behind{};
    // The fork server whose teardown this rank's full exit probes; empty
    // for every other rank.
    std::string exit_probe_of{};
  };

  // A debugger taking the stacks of one process of a hung test.
  struct Dumper {
    int pid = 0;   // the process it dumps
    int rank = -1;
    std::filesystem::path path;
    process::ChildProcess child;
  };

  struct RunningTest {
    const select::PlannedTest* test = nullptr;
    std::filesystem::path folder;  // the attempt's folder
    schedule::Assignment assignment;
    std::vector<Rank> ranks;
    Clock::time_point started;
    Clock::time_point deadline;                // the test's timeout
    Clock::time_point next_slow_note;
    std::optional<Clock::time_point> stop_at;  // a rank failed: stop the rest then
    std::optional<Clock::time_point> dump_until;  // timed out: stacks being taken
    std::vector<Dumper> dumpers;
    std::optional<Clock::time_point> kill_at;  // SIGTERM sent: SIGKILL then
    std::optional<int> root_cause_rank;        // the first rank that failed
    bool timed_out = false;
    bool interrupted = false;
    bool forked = false;  // a fork server forked a rank of it
    // Processes still running when the last rank ended (then killed).
    std::vector<pid_t> left_behind;
    std::unique_ptr<process::TestCgroup> cgroup;  // null where cgroups are not used
    // network = "isolated": its ranks' namespace, released when it ends.
    std::optional<process::NetworkNamespace> network;
    // mpirun or srun, where a launcher starts the ranks; their ends are
    // read from ranktest-rank's records, polled until then.
    std::optional<process::ChildProcess> launcher;
    Clock::time_point next_poll;
    // Asked to stop through its ranks' files; at the next kill_at the
    // launcher itself gets SIGTERM (this set), then SIGKILL.
    bool launcher_signalled = false;

    bool all_reaped() const;
    const process::ChildProcess* unreaped() const;  // any rank still unreaped
  };

  void reap();
  // Launchers (mpirun, srun): see launcher_runner.cpp.
  void start_with_launcher(RunningTest& running, std::vector<RankPlan> ranks,
                           const std::function<void(const std::string&)>& failed_to_launch);
  void poll_rank_ends(RunningTest& running, Clock::time_point now);
  void launcher_ended(RunningTest& running, Clock::time_point now);
  bool request_launcher_stacks(RunningTest& running) const;
  void request_launcher_stop(RunningTest& running) const;
  bool launcher_stacks_taken(const RunningTest& running) const;
  void collect_launcher_stacks(TestResult& result, const RunningTest& running) const;
  void rank_ended(RunningTest& running, Rank& rank, Clock::time_point now);
  void enforce_deadlines(Clock::time_point now);
  void terminate(RunningTest& running, Clock::time_point now);
  void signal_test(const RunningTest& running, int signal) const;
  Clock::time_point next_deadline() const;
  schedule::Finished finish(RunningTest& running);
  void end_left_behind(RunningTest& running, const process::ChildProcess& last_rank);
  bool start_stack_dumps(RunningTest& running);
  void detach_audits(const RunningTest& running) const;
  void request_python_stacks(const RunningTest& running) const;
  ForkServer* fork_server_for(const select::PlannedTest& test);
  void give_up_fork_server(const TestSource& source, const std::string& why);
  std::vector<std::string> markers(const RunningTest& running) const;
  // Every live process of the test: its group, its cgroup, its markers.
  std::vector<pid_t> test_processes(const RunningTest& running, pid_t group) const;
  void note_cgroup_usage(TestResult& result, const RunningTest& running) const;
  void note_failed_descendant(TestResult& result, const RunningTest& running) const;
  void judge_exit_probe(const RunningTest& running, const Rank& rank);
  static void note_left_behind(TestResult& result, const RunningTest& running);
  RankResult classify_rank(const RunningTest& running, const Rank& rank) const;

  const RunFolder& folder_;
  process::SignalWatch& signals_;
  RunnerOptions options_;
  std::vector<std::unique_ptr<RunningTest>> running_;
  std::vector<schedule::Finished> finished_;  // not yet returned by wait()
  std::vector<schedule::SlowNotice> slow_;     // not yet returned by wait()
  bool stopping_ = false;  // stop_all() was called
  // One per pytest source in fork-server mode; sources whose server could
  // not serve run plain.
  std::map<std::string, std::unique_ptr<ForkServer>> fork_servers_;
  std::set<std::string> no_fork_server_;
  // Exits of orphans not (yet) known as a rank: a forked test can end
  // before the fork server's answer makes it one.
  std::map<pid_t, ProcessExit> orphan_exits_;
  // When the running tests' logs are next held to max-output.
  Clock::time_point next_output_check_{};
};

}  // namespace ranktest::execute
