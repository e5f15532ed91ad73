// Which of the discovered tests run, with which settings, in which order.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/test_case.h"

namespace ranktest::select {

struct Selection {
  std::vector<std::string> globs;  // --filter: any may match
  std::vector<std::string> exact;  // --exact: any may equal
  bool empty() const { return globs.empty() && exact.empty(); }
};

// A glob matches a test when it matches its id ("binary::Suite.Name") or
// its framework name ("Suite.Name").
bool glob_matches_test(const std::string& glob, const TestCase& test);
bool selection_matches(const Selection& selection, const TestCase& test);

// The settings for one test: each one from the first [[override]] whose
// filter matches and that sets it, else the run's default.
struct ResolvedSettings {
  config::Duration timeout;
  config::Duration slow = std::chrono::seconds(60);
  config::Duration start_timeout = std::chrono::minutes(2);
  int ranks = 1;
  // Whether a `ranks` setting or marker gave the test its ranks (even 1):
  // only then does it get the rank variables (RANK, LOCAL_RANK, ...). A
  // test without ranks must look to the code under test like a plain run,
  // since frameworks read them to decide whether to start their own
  // processes (Lightning: "LOCAL_RANK" set means "started for me").
  bool ranked = false;
  int slots = 1;  // CPU slots it takes at least (CTest's PROCESSORS)
  std::map<std::string, int> devices;  // kind -> count, counts > 0 only
  bool exclusive = false;
  std::vector<std::string> labels;
  bool leak_is_failure = true;
  bool audit_children = false;
  bool watch_workers = true;  // pytest tests: a pass whose worker failed is suspicious
  bool worker_isolation = false;  // isolation = "worker"
  std::optional<int> max_processes;
  std::optional<std::uint64_t> max_memory;
  int retries = 0;  // runs after a failed one, at most
  config::Duration retry_delay{0};
  Launcher launcher = Launcher::local;
  int nodes = 0;  // slurm: the nodes the ranks span; 0: as Slurm places them
  // launcher = "slurm" only because the run spreads over an allocation.
  bool job_step = false;
  Network network = Network::host;
  bool private_tmpdir = false;  // TMPDIR is a folder of the attempt's own
  // Devices a launcher requests for the test (Slurm's --gpus/--gres): the
  // cluster's, not this machine's, so `devices` is then empty and the
  // scheduler grants nothing here.
  std::map<std::string, int> cluster_devices;
  // Unless the cluster places the ranks on its nodes (Slurm): then they
  // take no slot of this machine but the one its launcher runs in.
  bool ranks_run_here() const;

  bool operator==(const ResolvedSettings&) const = default;
};
ResolvedSettings resolve_settings(const config::Config& config,
                                  const TestCase& test);

// CTest's RESOURCE_GROUPS as devices of the kinds `capacity` has, unless an
// [[override]] gave the test devices; the types it lacks are added to
// `absent` (type -> the ids of the tests that name it).
void add_resource_group_devices(const TestCase& test, const std::map<std::string, int>& capacity,
                                ResolvedSettings& settings,
                                std::map<std::string, std::vector<std::string>>& absent);

// A test that runs, and how. Points into its plan's tests; tests with the
// same settings share them (a plan may hold 100,000 tests, and a copy of
// each would be most of the plan's memory).
struct PlannedTest {
  const TestCase* test = nullptr;
  std::shared_ptr<const ResolvedSettings> settings;
  // How it failed alone, as a fresh process, in its recent verdicts
  // (failure_signature; history's failed_alone); null: it did not. The
  // same failure forked or after other tests is not run again alone.
  // (A pointer: most tests have none, and a plan may hold 1,000,000.)
  std::shared_ptr<const std::string> failed_alone = {};
  // It failed only when forked in a recent run (history): it runs as a
  // fresh process from its first attempt, never forked.
  bool fresh_process = false;
  // Its last verdict in the history did not pass (--last-failed,
  // --failed-first): a gtest worker's share holds only tests alike in
  // this, so --failed-first starts them all before the rest.
  bool failed_last = false;
};

// Whether a test may run in a worker process (isolation = "worker") with
// the processes it needs: one rank, none started for it by a launcher, no
// audit (ptrace follows one process's tests), the host's network (a
// namespace is joined once per process), a pytest source's fork server or
// a gtest binary.
bool may_run_in_worker(const PlannedTest& test);

struct NotRunnable {
  const TestCase* test = nullptr;
  std::string reason;  // "needs 8 tpu, inventory has 4"
};

struct TestPlan {
  // Every discovered test, owned here; the lists below point into it, so
  // a plan moves but is never copied.
  std::vector<TestCase> tests;
  std::vector<PlannedTest> to_run;          // in discovery order
  std::vector<const TestCase*> to_skip;     // selected, but with a skip reason
  std::vector<NotRunnable> cannot_run;      // selected, but needs what is not here
  std::size_t filtered_out = 0;             // not selected
  // Said once before the run (CTest resource types without devices).
  std::vector<std::string> warnings;

  TestPlan() = default;
  TestPlan(TestPlan&&) = default;
  TestPlan& operator=(TestPlan&&) = default;
  TestPlan(const TestPlan&) = delete;
  TestPlan& operator=(const TestPlan&) = delete;
};

// `capacity` is how many devices of each kind the machine has; a test that
// needs more can never run and is reported, not dropped.
// Takes the tests (moved in: a suite may hold 100k of them).
TestPlan plan_tests(std::vector<TestCase> tests,
                    const Selection& selection, const config::Config& config,
                    const std::map<std::string, int>& capacity = {});

// The first test to run whose network is isolated while mpirun or srun
// starts its ranks (from settings of different tables), as the error that
// refuses the run; nothing when there is none.
std::optional<std::string> network_conflict(const TestPlan& plan);

// network-fallback = "host": every test that asked for an isolated network
// runs on the host's instead. Returns how many did.
std::size_t fall_back_to_host_network(TestPlan& plan);

// Longest expected first, so a long test does not start last and stretch
// the run: tests with a known duration by it, descending; tests never timed
// before them all (they may be long). Stable otherwise.
void order_longest_first(std::vector<PlannedTest>& tests,
                         const std::map<std::string, config::Duration>& expected);

}  // namespace ranktest::select
