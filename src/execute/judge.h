// The judge: what the supervisor saw of a test in, its outcome out. Pure:
// no processes, no files, no clock; every fact it needs was read before
// (the supervisor's finish), so every outcome is unit-tested from facts
// (tests/unit/judge_test.cpp). What it decides: each rank's outcome, which
// rank is the root cause, what a child failure, a leak, an OOM kill or a
// limit changes. What it leaves to the enrichment step: suspicious lines,
// hints, stacks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "execute/child_audit.h"
#include "frameworks/framework_adapter.h"
#include "model/outcome.h"
#include "process/test_cgroup.h"

namespace ranktest::execute {

// One rank, at its end.
struct RankFacts {
  int rank = 0;
  RankReading reading;                // its framework's reading
  std::optional<ProcessExit> exit;    // absent if it could not be reaped
  std::chrono::milliseconds duration{0};
  std::string log_path;
  // What ranktest-audit recorded of the processes it started; nullopt
  // when it was not audited.
  std::optional<std::vector<AuditedChild>> audited;
  std::chrono::milliseconds timeout{0};  // the test's, for the reason
  // A launcher's rank that ended with no exit record of its own: the
  // launcher's command name ("mpirun", "srun"), which (or whose node) ended
  // its ranktest-rank; the kill it is reaped as is no crash of its code.
  std::string ended_by_launcher;
};

// A rank's outcome: its framework's reading, unless a child it started
// failed while it passed (the failure a swallowing wrapper hides).
RankResult judge_rank(const RankFacts& facts);

// One rank of the whole test, judged at its end.
struct EndedRank {
  RankResult result;  // judge_rank's
  // Still running when another rank's failure stopped it.
  bool stopped = false;
  int pid = 0;  // on its node, to name it
  std::optional<std::vector<AuditedChild>> audited;
  // Workers of the rank (is_worker) that ended badly, as the process watch
  // saw them without an audit: a pass with one is suspicious, not failed.
  std::vector<AuditedChild> failed_workers;
  // Its other children that ended badly, as the watch saw them (a tool, a
  // relaunched `python -m pytest`): they explain a crash or a hang, never
  // flag a pass (a test may check a tool's failure on purpose).
  std::vector<AuditedChild> failed_children;
  // The node it ran on, where a launcher started it ("" for the runner's
  // own children): a root cause on one of several nodes is named with it.
  std::string node{};
};

struct TestFacts {
  std::vector<EndedRank> ranks;  // in rank order
  // The first rank the supervisor saw fail (by when its process ended);
  // the judge prefers the framework's own clock where every failed rank
  // has one.
  std::optional<int> first_failed;
  bool timed_out = false;
  // Timed out before its test began (start-timeout): how long it had.
  std::optional<std::chrono::milliseconds> timed_out_starting;
  // What a process does before its test begins, for that message.
  std::string starting = "starting the interpreter, importing or collecting";
  bool interrupted = false;
  // Processes still running when the last rank ended (killed since).
  std::vector<pid_t> left_behind;
  // Their command lines, read while they ran, where they could be: a leak
  // is named by what the process was, not only its pid.
  std::map<pid_t, std::string> left_behind_commands;
  // Processes the last rank left running that ended badly while the test
  // settled (reaped once orphaned): Lightning's failing rank 1, which
  // SIGKILLs rank 0 and then exits 1; or a failure a pass never waited for.
  std::vector<AuditedChild> ended_after;
  bool leak_is_failure = true;
  // A fixture setup's processes, kept running (in its cgroup) for the
  // `fixtures` it sets up until their tests end: no leak.
  std::vector<pid_t> kept_for_fixtures;
  std::size_t fixtures = 0;
  // The test's cgroup at its end; nullopt where it had none.
  std::optional<process::CgroupUsage> usage;
  std::optional<std::uint64_t> max_memory;
  std::optional<int> max_processes;
};

TestResult judge_test(const TestFacts& facts);

// --- Tests and ranks that never ran (judge_not_started.cpp) ---

// A test that ended before any process of it ran, and why.
struct NotStartedFacts {
  enum class Cause {
    cannot_start,  // its folder, TMPDIR, network or first process failed: `why`
    not_collected, // its framework could not collect it: `why` is its words
    refused,       // ranktest cannot judge it as its framework would: `why`
    interrupted,   // the run was interrupted while it waited to start
    no_port,       // no port of port-range (`why`: "FIRST-LAST") was free
  } cause = Cause::cannot_start;
  std::string why;
};
TestResult judge_not_started(const NotStartedFacts& facts);

// A rank a launcher (mpirun, srun) never started, judged at the
// launcher's end.
struct UnstartedRankFacts {
  int rank = 0;
  bool first_rank = false;  // the test's first: it says why for all
  std::string launcher;     // its command's name: "mpirun", "srun"
  std::string table;        // its configuration table: "mpirun", "slurm"
  std::optional<ProcessExit> launcher_exit;
  bool interrupted = false;
  // Stopped at start-timeout (how long it had) while the launcher still
  // waited to start ranks.
  std::optional<std::chrono::milliseconds> start_timed_out;
  std::string launcher_said;  // the end of what the launcher printed
  // This rank is the test's first failure, and the launcher's refusal in
  // its own words (launcher_refusal), where it printed one.
  bool root_cause = false;
  std::string refusal;
  std::string log_path;
  std::chrono::milliseconds duration{0};
};
RankResult judge_unstarted_rank(const UnstartedRankFacts& facts);

// The reason of a rank a launcher started that ended with no exit record:
// killed under ranktest-rank (by the launcher, or with its node).
std::string killed_without_exit_record(const std::string& launcher);

// A failure while the run folder could not be written: what the test wrote
// (its report, its log) may be lost, so how it ended is unknown; it is
// interrupted, not the test's failure. Others are kept.
void judge_unwritable_folder(TestResult& result, const std::string& why);

}  // namespace ranktest::execute
