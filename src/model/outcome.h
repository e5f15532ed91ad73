// How a test ended, and everything a reporter needs to say so.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/test_case.h"

namespace ranktest {

// Ordered from good to bad; counted into the summary by `counts_as`.
enum class Outcome {
  passed,
  xpassed,    // pytest: passed although marked xfail (not strict)
  skipped,
  xfailed,    // pytest: failed as its xfail mark expected
  failed,     // an assertion failed, or the process exited non-zero
  crashed,    // killed by a signal it did not ask for
  timed_out,  // ran past its timeout and was stopped
  leaked,     // passed, but left processes running (they were killed)
  // passed, but a process it started (audited) crashed or exited non-zero
  child_failed,
  error,      // could not be launched, or left no result to read
  interrupted,  // stopped because the run was interrupted
  not_run,    // never started (e.g. --fail-fast stopped the run)
};

std::string_view to_string(Outcome outcome);
std::optional<Outcome> outcome_from_string(std::string_view text);

// The three numbers of the summary line.
enum class SummaryBucket { passed, failed, skipped, none };
SummaryBucket summary_bucket(Outcome outcome);
bool is_failure(Outcome outcome);
// Passed or skipped in any of their forms (xpassed, xfailed): what a leak,
// an OOM kill or a failed child turns into a failure.
bool ended_cleanly(Outcome outcome);

// One failure message as the framework reported it.
struct FailureMessage {
  std::optional<SourceLocation> location;
  std::string text;
};

// How the test's main process ended. Absent when it never started.
struct ProcessExit {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // signal number when signaled
  bool core_dumped = false;
};

// How one rank (one of the processes the runner started for a test) ended.
struct RankResult {
  int rank = 0;
  Outcome outcome = Outcome::error;
  std::string reason;
  std::vector<FailureMessage> failures;
  std::optional<ProcessExit> exit;
  std::chrono::milliseconds duration{0};
  std::string log_path;
  std::string output_excerpt;
  // When the framework saw the failure (where it says), seconds since the
  // epoch: the root cause is the rank that failed first, not the one whose
  // process happened to exit first. Not part of the events.
  std::optional<double> failed_at;
  // Its framework says this failure is not one to run again (TestResult's).
  bool retry_refused = false;
};

// Where one process of a hung test was when it was stopped.
struct StackDump {
  int pid = 0;
  int rank = -1;         // its RANK; -1 when unknown
  std::string path;      // the debugger's full output
  std::string summary;   // innermost frames of its main thread: "f ← g ← h"
};

struct TestResult {
  Outcome outcome = Outcome::error;
  // One line saying why, e.g. "SIGSEGV", "exit code 3 after gtest reported
  // success", "after 2s"; empty for a plain pass.
  std::string reason;
  std::vector<FailureMessage> failures;
  std::optional<ProcessExit> exit;
  std::chrono::milliseconds duration{0};
  std::string log_path;  // the captured output; empty when not captured
  // The part of the output worth showing a person: for gtest, what the test
  // printed between its "[ RUN ]" and result lines, less the failure
  // messages already in `failures`. Raw bytes; at most a few KiB.
  std::string output_excerpt;
  // Every rank, by rank number; the fields above are the root cause's (or
  // rank 0's when no rank failed). Empty when the test never started.
  std::vector<RankResult> ranks;
  int root_cause_rank = -1;  // the rank that failed first; -1 if none did
  // Taken at the timeout, before anything was killed; one per process.
  std::vector<StackDump> stacks;
  // Lines of a passing test's output that match a failure signature
  // (suspicious-output): a child process may have failed unseen.
  std::vector<std::string> suspicious;
  // Known errors found in what the test said (data/hints.toml, [[hint]]).
  struct Hint {
    std::string match;
    std::string explanation;
    std::string fix;
  };
  std::vector<Hint> hints;
  // From the test's cgroup, where it had one: all its processes together.
  std::optional<std::uint64_t> peak_memory;  // bytes
  std::optional<int> peak_processes;
  // The kernel's OOM killer ended a process of it because the machine ran
  // out of memory (not its max-memory): what else ran then is to blame as
  // much as the test, never the tests its worker ran before it.
  bool machine_out_of_memory = false;
  // The framework says this failure is not one to run again: pytest-
  // rerunfailures' --only-rerun / --rerun-except did not let it, and
  // pytest would report it failed without a rerun. No retry runs (the
  // attempts that diagnose a forked failure still do). Not part of the
  // events: the attempt's `retrying` says what came of it.
  bool retry_refused = false;
};

// What tells one failure from another across runs: its outcome, where it
// failed and the last line of its first message (pytest's "E   ..." line,
// gtest's expectation), else its reason. Empty for a result that is no
// failure. Two attempts that failed the same way have the same signature;
// anything that varies from run to run (a temporary path, a time) only
// makes them differ.
// kFailedAloneNote, which a verdict taken from that sameness ends its
// reason with, is no part of it.
std::string failure_signature(const TestResult& result);
inline constexpr std::string_view kFailedAloneNote =
    "not run again alone: it failed the same way as a fresh process in a recent run";

}  // namespace ranktest
