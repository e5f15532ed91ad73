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
#include <optional>
#include <string>
#include <vector>

#include "execute/child_audit.h"
#include "execute/framework_adapter.h"
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
  // Processes the last rank left running that ended badly while the test
  // settled (reaped once orphaned): Lightning's failing rank 1, which
  // SIGKILLs rank 0 and then exits 1; or a failure a pass never waited for.
  std::vector<AuditedChild> ended_after;
  bool leak_is_failure = true;
  // The test's cgroup at its end; nullopt where it had none.
  std::optional<process::CgroupUsage> usage;
  std::optional<std::uint64_t> max_memory;
  std::optional<int> max_processes;
};

TestResult judge_test(const TestFacts& facts);

}  // namespace ranktest::execute
