// The OOM killer's work, judged: never a pass, and the reason says who was
// ended and by which limit.
#include "execute/memory_verdict.h"

#include <gtest/gtest.h>

namespace ranktest::execute {
namespace {

TestResult with(Outcome outcome, std::string reason = "") {
  TestResult result;
  result.outcome = outcome;
  result.reason = std::move(reason);
  return result;
}

TEST(OutOfMemory, NothingKilledChangesNothing) {
  auto result = with(Outcome::passed);
  judge_out_of_memory(result, OutOfMemoryFacts{0, true, 256u << 20, {}});
  EXPECT_EQ(result.outcome, Outcome::passed);
  EXPECT_EQ(result.reason, "");
}

TEST(OutOfMemory, AWorkerKilledAtTheLimitIsNeverAPass) {
  auto result = with(Outcome::passed);
  judge_out_of_memory(result, OutOfMemoryFacts{1, true, 200u << 20, {}});
  EXPECT_EQ(result.outcome, Outcome::child_failed);
  EXPECT_EQ(result.reason,
            "out of memory: the OOM killer ended a process of the test at max-memory 200.0 MiB");
}

TEST(OutOfMemory, ASkipIsNoEscapeEither) {
  auto result = with(Outcome::skipped, "no GPU");
  judge_out_of_memory(result, OutOfMemoryFacts{2, true, 1u << 30, {}});
  EXPECT_EQ(result.outcome, Outcome::child_failed);
  EXPECT_EQ(result.reason,
            "out of memory: the OOM killer ended 2 processes of the test at max-memory 1.00 GiB; "
            "no GPU");
}

TEST(OutOfMemory, ACrashNamesTheKilledRankAndKeepsItsOutcome) {
  auto result = with(Outcome::crashed, "SIGKILL");
  judge_out_of_memory(result, OutOfMemoryFacts{1, true, 256u << 20, {"rank 0 (pid 41)"}});
  EXPECT_EQ(result.outcome, Outcome::crashed);
  EXPECT_EQ(result.reason,
            "SIGKILL; out of memory: the OOM killer ended rank 0 (pid 41) at max-memory 256.0 MiB");
}

TEST(OutOfMemory, TheKernelsGlobalKillerIsNamedAsSuch) {
  auto result = with(Outcome::crashed, "SIGKILL");
  judge_out_of_memory(result, OutOfMemoryFacts{1, false, std::nullopt, {"rank 0 (pid 7)"}});
  EXPECT_EQ(result.reason,
            "SIGKILL; out of memory: the kernel's OOM killer ended rank 0 (pid 7) (the machine "
            "ran out of memory)");
  auto limited = with(Outcome::passed);
  judge_out_of_memory(limited, OutOfMemoryFacts{1, false, 8ull << 30,
                                                 {"child 9 (python3 -c x)", "child 10 (a)",
                                                  "child 11 (b)", "child 12 (c)"}});
  EXPECT_EQ(limited.outcome, Outcome::child_failed);
  EXPECT_EQ(limited.reason,
            "out of memory: the kernel's OOM killer ended child 9 (python3 -c x), child 10 (a), "
            "child 11 (b) and 1 more (the machine ran out of memory, not the test's max-memory)");
}

}  // namespace
}  // namespace ranktest::execute
