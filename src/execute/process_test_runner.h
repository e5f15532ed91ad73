// The supervisor, the real TestRunner: it starts, watches and stops the
// process trees of tests, and nothing else. For a test with N ranks, N
// processes in one process group (started alone, forked by a fork server,
// or by mpirun/srun: launcher_runner.cpp), each with the rank environment
// and its own log; the timeout enforced on the whole group (stacks taken,
// SIGTERM, a grace period, SIGKILL); once a rank fails, the others get the
// grace period to finish, then are stopped. What each framework means is
// its adapter's (framework_adapter.h); what the facts mean is the judge's
// (judge.h); what helps a person read them is the enrichment's.
//
// It never blocks: a fork server collecting, stacks being asked for, a
// grace period running are phases of a test, and every wait is the one
// wait of wait() (signals, children, fork servers' replies, deadlines), so
// every other test's timeout and a Ctrl-C are seen on time.
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
#include "execute/child_audit.h"
#include "execute/fork_server.h"
#include "frameworks/gtest/gtest_stream.h"
#include "execute/launch_plan.h"
#include "execute/run_folder.h"
#include "execute/test_phases.h"
#include "process/child_process.h"
#include "process/descriptor.h"
#include "process/network_namespace.h"
#include "process/process_exit_watch.h"
#include "process/process_scan.h"
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
  // Each launcher's table ([mpirun], [slurm]), and ranktest-rank, which
  // they start per rank.
  std::map<Launcher, config::LauncherConfig> launcher_tables;
  std::filesystem::path rank_helper;
  // The kernel's process events, where they can be had: the workers a
  // pytest test starts are watched, and a pass whose worker failed is
  // suspicious (audit-children makes it child-failed).
  process::ProcessExitWatch* exit_watch = nullptr;
  // Where the kernel's process events cannot be had: the pytest plugin
  // records how the workers it reaps end (RANKTEST_WORKER_EXITS), in
  // fresh and forked tests alike, without tracing them.
  bool watch_waits = false;
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
  TestResult no_free_port(const select::PlannedTest& test,
                          const std::string& port_range) override;
  void no_more_starts() override { no_more_starts_ = true; }
  void release_kept(std::size_t test_index) override;
  void failed_only_forked(const select::PlannedTest& test, Outcome forked) override;
  // Before the run: the tests that failed only when forked in recent runs
  // (PlannedTest::fresh_process, from history) run fresh; a source with
  // kForkOnlyLimit of them is not forked at all. Said once. Counts each
  // source's tests in the run.
  void remember_fork_only(const std::vector<select::PlannedTest>& tests);

 private:
  using Clock = std::chrono::steady_clock;

  // When a test of `finished` failed and the run folder cannot be written
  // now: those failures become `interrupted` (unknown, not the test's) and
  // the reason is returned; the scheduler then stops the run.
  std::optional<std::string> blame_full_run_folder(std::vector<schedule::Finished>& finished) const;

  struct Rank {
    int rank = 0;
    process::ChildProcess child;
    std::filesystem::path log_path;     // empty when output is not captured
    std::filesystem::path report_path;  // its framework's result file
    std::filesystem::path audit_path;   // ranktest-audit's report; empty: not audited
    Clock::time_point ended{};           // set once reaped
    std::optional<RankResult> result{};  // set once reaped (judge_rank)
    // What ranktest-audit recorded, read once the rank is reaped.
    std::optional<std::vector<AuditedChild>> audited{};
    // A gtest worker's test: its log and its report as the runner wrote
    // them from the worker's stream, read from here, not again from disk.
    std::optional<std::string> written_log{};
    std::optional<std::string> written_report{};
    // The log's size when the rank was read: what its leftovers write
    // after that is added to its excerpt at the test's end.
    std::uintmax_t log_size_read = 0;
    // Its processes are watched (exit_watch) under its pid, kept here: a
    // worker's process moves on to its next test.
    bool watched = false;
    pid_t watched_pid = 0;
    // Or the plugin records the workers it reaps here (watch_waits).
    std::filesystem::path worker_exits_path{};
    bool stopped = false;  // still running when another rank's failure stopped it
    // Started by a launcher: the test's pid on its node, once ranktest-rank
    // said it started; what it left running there.
    int remote_pid = 0;
    std::string remote_host{};  // its node, as its start record names it
    // Reaped as killed by the launcher, with no exit record (judge.h).
    std::string ended_by_launcher{};
    std::vector<int> remote_left_behind{};
    // The fork server whose teardown this rank's full exit probes; empty
    // for every other rank.
    std::string exit_probe_of{};
    // A fresh pytest rank: the pipe its plugin writes a byte to when its
    // test begins (after the interpreter, imports and collection).
    process::Descriptor begin_signal{};
  };

  // A debugger taking the stacks of one process of a hung test.
  struct Dumper {
    int pid = 0;   // the process it dumps
    int rank = -1;
    std::filesystem::path path;
    process::ChildProcess child;
  };

  // isolation = "worker": a process forked from a pytest fork server that
  // runs test after test, as an xdist worker does, while each passes and
  // leaves nothing behind (worker_pool.cpp). Idle between tests; while it
  // runs one, the test's RunningTest holds it (its process is rank 0's).
  struct Worker {
    std::string key;             // its fork server's (ForkServer::key)
    process::ChildProcess child = process::ChildProcess::elsewhere();  // while idle
    std::unique_ptr<process::TestCgroup> cgroup;  // its tests' (the first's limits)
    std::optional<int> max_processes;
    std::optional<std::uint64_t> max_memory;
    int requests = -1;  // FIFO: the runner writes the next test's request
    int replies = -1;   // FIFO: the worker says a test passed
    std::string buffered;
    std::vector<std::string> ran;  // the tests it ran, in order
    Worker() = default;
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    ~Worker();
  };

  struct RunningTest;

  // How the supervisor reaches a test's ranks once they run: its own
  // children, started alone, forked or a worker's (LocalRanks,
  // local_ranks.cpp), or the ranks a launcher started, which
  // ranktest-rank reports on in the attempt's folder (LaunchedRanks,
  // launcher_runner.cpp). The phases, the reaper and the test's end ask
  // through it; nothing else branches on how the ranks were started.
  // Each holds its test, whose address is stable (running_ holds it by
  // unique_ptr), and the runner.
  class RankGroup {
   public:
    RankGroup(ProcessTestRunner& runner, RunningTest& running)
        : runner_(runner), running_(running) {}
    virtual ~RankGroup() = default;
    RankGroup(const RankGroup&) = delete;
    RankGroup& operator=(const RankGroup&) = delete;

    // The process that stands for the test while it runs: signalled
    // first, its process group the test's; nullptr once none is left.
    virtual const process::ChildProcess* leader() const = 0;
    // A process of the group that is no rank (a launcher), unreaped, with
    // `pid`; nullptr: none.
    virtual process::ChildProcess* own_process(pid_t /*pid*/) { return nullptr; }
    // That process was reaped.
    virtual void own_process_ended(Clock::time_point /*now*/) {}
    // Whether the group's own processes are reaped (the test may end).
    virtual bool settled() const { return true; }
    // Ranks whose end no signal tells this process (a launcher's): when
    // to look next, and looking.
    virtual Clock::time_point next_look() const { return Clock::time_point::max(); }
    virtual void look(Clock::time_point /*now*/) {}
    // At the timeout: asking the processes to write their own stacks (how
    // long they get; nullopt: nobody was asked), then starting the
    // debuggers (false: none could start), and whether they are done.
    virtual std::optional<PhaseClock::duration> ask_for_stacks() = 0;
    virtual bool start_stack_dumps() = 0;
    virtual bool stacks_taken() const = 0;
    // Stopping: SIGTERM, or its equivalent.
    virtual void stop() = 0;
    // Stacks taken elsewhere than by the runner's own debuggers.
    virtual void add_stacks(TestResult& /*result*/) const {}

    // Where the ranks' process is a worker's, running test after test
    // (WorkerRanks, worker_pool.cpp; GtestWorkerRanks, gtest_worker.cpp),
    // these differ from a test's own processes:
    // A log other than its ranks' own held to max-output: whether it grows.
    virtual bool limit_shared_output(std::uintmax_t /*max_output*/) { return false; }
    // The cgroup its processes run in; nullptr: none.
    virtual const process::TestCgroup* cgroup() const;
    // The environment markers its processes carry, where not the test's own.
    virtual std::vector<std::string> inherited_markers() const { return {}; }
    // A rank of it was reaped.
    virtual void rank_reaped() {}
    // What its process does before the test begins (a start timeout's
    // words); nullopt: the framework's.
    virtual std::optional<std::string> starting() const { return std::nullopt; }
    // The tests its process ran before this one, in order.
    virtual std::vector<std::string> ran_before() const { return {}; }
    // The test was judged: what the process holds goes on or ends.
    virtual void judged() {}

   protected:
    ProcessTestRunner& runner_;
    RunningTest& running_;
  };
  class LocalRanks;
  class LaunchedRanks;
  class WorkerRanks;
  class GtestWorkerRanks;
  std::unique_ptr<RankGroup> local_ranks(RunningTest& running);
  std::unique_ptr<RankGroup> worker_ranks(RunningTest& running);
  std::unique_ptr<RankGroup> gtest_worker_ranks(RunningTest& running);

  // isolation = "worker" for gtest: one process of a binary (forked from its
  // fork server, or fresh) runs a share of its tests through GoogleTest's
  // own loop, --gtest_filter naming them, and streams each test's start and
  // end to a socket of the runner's (gtest_worker.cpp). Each test holds the
  // process as its rank from its TestStart until the next test's (or the
  // process's end): its timeout, stacks, crash and leftovers are its own.
  struct GtestWorker {
    process::Descriptor listener;  // until the process connects
    process::Descriptor stream;
    GtestStreamReader reader;
    std::string suite;  // of the test that started last
    std::vector<schedule::Follower> queue;  // not started yet, in gtest's order
    std::filesystem::path log;  // the process's own; each test gets its slice
    std::uintmax_t slice_from = 0;  // where the holder's RUN line begins
    GtestStreamedTest current;  // the holder's test, once it began
    // Parts streamed outside any test: the global test environment's
    // failures (a ::testing::Environment's SetUp before the first test, its
    // TearDown after the last), which the binary alone fails for.
    std::vector<GtestStreamedTest::Part> outside;
    RunningTest* holder = nullptr;
    std::vector<std::string> ran;  // ids of the tests it ran, in order
    // The environment markers its process started with, the first test's:
    // what its later tests start inherits them (markers()).
    std::vector<std::string> markers;
    // The cgroup its process runs in, its first test's: owned by that test
    // until it is judged, then by the holder of the moment (test_end.cpp).
    // A test that holds the process sooner looks at it here.
    process::TestCgroup* cgroup = nullptr;
    std::vector<pid_t> left;  // running beside it at the holder's TestEnd
    char answer = 'c';  // to the gate at the next TestEnd (frameworks/gtest/gtest_gate.cpp)
    bool ending = false;  // told to end at its holder's TestEnd
  };

  // A test's phases and clock (test_phases.h), and what the supervisor
  // holds of it.
  struct RunningTest : TestPhases {
    const select::PlannedTest* test = nullptr;
    std::filesystem::path folder;  // the attempt's folder
    schedule::Assignment assignment;
    std::vector<Rank> ranks;
    // Each rank's command, kept until every rank started.
    std::vector<RankPlan> commands;
    std::vector<Dumper> dumpers;
    std::optional<int> first_failed;  // the first rank seen failing
    bool forked = false;  // a fork server forked a rank of it
    // Ranks started so far (in order); the next one may wait for a fork.
    std::size_t spawned = 0;
    // Waiting for the fork server with this key (ForkServer::key) to fork
    // rank `spawned`: asked (fork_sent), or waiting for its turn.
    std::string fork_key;
    bool fork_sent = false;
    bool fork_probe = false;  // the fork asked for probes the server's teardown
    // Processes still running when the last rank ended and after the
    // grace period (then killed).
    std::vector<pid_t> left_behind;
    // settling: the last rank's process group, which the processes it
    // left still hold (so the id is not reused while they live).
    pid_t settle_group = 0;
    // settling: what the last rank left running, with its command line.
    // Orphaned, they are this subreaper's to reap: those that end badly
    // (ended_after) may be why the test failed (Lightning's failing rank
    // SIGKILLs rank 0, then exits 1) or a failure its pass hid.
    std::map<pid_t, std::string> leftover_commands;
    std::vector<AuditedChild> ended_after;
    // A CTest fixture's setup: what it leaves running (a server for the
    // fixture's tests) is kept, not a leak, until release_kept().
    std::vector<pid_t> kept;
    std::unique_ptr<process::TestCgroup> cgroup;  // null where cgroups are not used
    // network = "isolated": its ranks' namespace, released when it ends.
    std::optional<process::NetworkNamespace> network;
    // How its ranks are reached once they run (never null).
    std::unique_ptr<RankGroup> group;
    // Whether its test has begun in every rank: false while a fresh pytest
    // rank still starts (its deadline is then the start bound, and its
    // timeout counts from the moment the last of them began).
    bool began = true;
    // isolation = "worker": the worker running it; whether the worker goes
    // back to the idle ones once the test is judged (it passed, clean).
    std::unique_ptr<Worker> worker;
    bool worker_goes_on = false;
    // isolation = "worker", gtest: the worker whose process it holds (or
    // held: the tests it ran before this one are ran_before).
    std::shared_ptr<GtestWorker> gtest;
    std::size_t ran_in_worker = 0;  // how many of gtest->ran ran before it

    bool all_reaped() const;
    const process::ChildProcess* unreaped() const;  // any rank still unreaped
  };

  std::unique_ptr<RunningTest> prepare_test(const select::PlannedTest& test,
                                            const schedule::Assignment& assignment);
  void reap();
  // Starting ranks: alone, forked, or through a launcher (launcher_runner.cpp).
  // False: it could not start (a Finished error says why); drop it.
  bool spawn_ranks(RunningTest& running);
  bool spawn_from(RunningTest& running);
  // What a rank started alone (or by a worker) runs.
  static process::SpawnRequest spawn_request(const RankPlan& rank);
  void started_rank(RunningTest& running, Rank& slot, process::ChildProcess child);
  void poll_forks(Clock::time_point now);
  void not_started(RunningTest& running, std::size_t first);
  void failed_to_launch(RunningTest& running, const std::string& why);
  void start_with_launcher(RunningTest& running, std::vector<RankPlan> ranks,
                           const std::function<void(const std::string&)>& failed_to_launch);
  // Fork servers (fork_server_pool.cpp).
  ForkServer* fork_server_for(const select::PlannedTest& test, bool& starting);
  void give_up_fork_server(const TestSource& source, const std::string& why);
  void poll_fork_servers(Clock::time_point now);
  std::vector<int> starting_server_descriptors() const;
  // Deadlines and stopping (supervision.cpp).
  void rank_ended(RunningTest& running, Rank& rank, Clock::time_point now);
  void enforce_deadlines(Clock::time_point now);
  struct Effects;  // what the phases ask of a test's processes (supervision.cpp)
  PhaseTimes phase_times() const;
  void advance(RunningTest& running, Clock::time_point now);
  void terminate(RunningTest& running, Clock::time_point now);
  void signal_test(const RunningTest& running, int signal) const;
  Clock::time_point next_deadline() const;
  void end_left_behind(RunningTest& running, const process::ChildProcess& last_rank);
  // Workers (worker_pool.cpp).
  bool runs_in_worker(const RunningTest& running) const;
  bool start_in_idle_worker(RunningTest& running);
  std::vector<std::unique_ptr<Worker>>::iterator idle_worker_for(const RunningTest& running);
  bool prepare_worker(RunningTest& running, ForkRequest& fork);
  void poll_workers(Clock::time_point now);
  void worker_passed(RunningTest& running, Clock::time_point now);
  void worker_finished(RunningTest& running);
  bool worker_ended(pid_t pid, const ProcessExit& exit);
  std::vector<int> worker_descriptors() const;
  // gtest workers (gtest_worker.cpp).
  bool runs_in_gtest_worker(const RunningTest& running) const;
  bool prepare_gtest_worker(RunningTest& running, std::vector<schedule::Follower> followers);
  // Puts libranktest-gtest-gate.so first in the command's LD_PRELOAD (before
  // the source's or the runner's own) with its stdout line-buffered.
  static void preload_gate(RankPlan& command);
  bool spawn_collecting_worker(RunningTest& running, process::SpawnRequest& request);
  std::vector<int> gtest_worker_descriptors() const;
  void poll_gtest_workers(Clock::time_point now);
  void gtest_event(RunningTest*& holder, const GtestStreamEvent& event,
                   std::vector<std::unique_ptr<RunningTest>>& began, Clock::time_point now);
  void gtest_test_ended(RunningTest& holder, const std::string& next,
                        std::vector<std::unique_ptr<RunningTest>>& began, Clock::time_point now);
  void gtest_worker_exited(RunningTest& holder);
  // `text`: the slice's bytes where the caller read them already.
  bool gtest_slice(RunningTest& holder, std::uintmax_t end, const std::string* text = nullptr);
  void hand_back_followers(RunningTest& running, bool alone);
  // Fresh pytest ranks that say when their test begins (start-timeout).
  void ask_when_begun(RunningTest& running, Rank& slot, process::SpawnRequest& request,
                      process::Descriptor& write_end);
  std::vector<int> begin_descriptors() const;
  void poll_begins(Clock::time_point now);
  void note_leftovers(RunningTest& running) const;
  bool leftover_ended(pid_t pid, const ProcessExit& exit);
  void orphan_of_ended_test(pid_t pid, const ProcessExit& exit,
                            const process::ZombieEntry& zombie);
  static bool watches_workers(const select::PlannedTest& test);
  bool audits_let_go(const RunningTest& running) const;
  std::vector<std::string> markers(const RunningTest& running) const;
  // Every live process of the test: its group, its cgroup, its markers;
  // but `besides` where given.
  std::vector<pid_t> test_processes(const RunningTest& running, pid_t group,
                                    pid_t besides = 0) const;
  // The end of a test: facts gathered, judged, enriched (test_end.cpp).
  schedule::Finished finish(RunningTest& running);
  void judge_exit_probe(const RunningTest& running, const Rank& rank,
                        const std::optional<std::string>& report);

  const RunFolder& folder_;
  process::SignalWatch& signals_;
  RunnerOptions options_;
  std::vector<std::unique_ptr<RunningTest>> running_;
  std::vector<schedule::Finished> finished_;  // not yet returned by wait()
  std::vector<schedule::SlowNotice> slow_;     // not yet returned by wait()
  std::vector<schedule::Assignment> started_;  // followers begun, not yet returned
  std::vector<schedule::Returned> returned_;   // followers handed back, not yet returned
  bool no_more_starts_ = false;
  bool stopping_ = false;  // stop_all() was called
  // One per pytest source in fork-server mode; sources whose server could
  // not serve run plain.
  std::map<std::string, std::unique_ptr<ForkServer>> fork_servers_;  // serving or starting
  std::set<std::string> no_fork_server_;
  // Tests that failed only when forked, by server key: past
  // kForkOnlyLimit of a source, its server is given up.
  std::map<std::string, std::vector<std::string>> fork_only_;
  // The run's tests of each fork server, by key (the share of fork-only
  // ones that gives it up).
  std::map<std::string, std::size_t> tests_of_source_;
  std::set<std::string> hung_forked_;  // a fork-only test of it timed out forked
  // Exits of orphans not (yet) known as a rank: a forked test can end
  // before the fork server's answer makes it one.
  std::map<pid_t, ProcessExit> orphan_exits_;
  std::vector<std::unique_ptr<Worker>> idle_workers_;
  // gtest binaries (their paths) that ran with a library of ranktest's
  // preloaded (their fork server served, or a worker connected): their
  // fresh processes get the gate too, so what a test printed last before
  // it crashed is in its log (preload_gate). A binary that refuses
  // preloads (AddressSanitizer's) never gets here.
  std::set<std::filesystem::path> took_preload_;
  // Workers killed after a test that left processes behind, until reaped.
  std::vector<process::ChildProcess> retired_workers_;
  std::size_t workers_started_ = 0;
  // When the running tests' logs are next held to max-output.
  Clock::time_point next_output_check_{};
  // What ended fixture setups left running, by plan index: killed when
  // release_kept() says the fixture's tests ended, or with the runner.
  struct Kept {
    std::vector<pid_t> pids;
    std::unique_ptr<process::TestCgroup> cgroup;  // null where cgroups are not used
    // Without a cgroup, a pid is killed only while its environment still
    // says it is the test's (the pid may have been reused meanwhile).
    std::string test_id, attempt;
  };
  std::map<std::size_t, Kept> kept_;
  void end_kept(Kept& kept);
};

}  // namespace ranktest::execute
