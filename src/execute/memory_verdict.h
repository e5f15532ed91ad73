// What the OOM killer did to a test, judged: a test in whose cgroup the OOM
// killer ended any process never passes, and its reason says who was ended
// and by which limit. Pure: facts in, the result changed, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/outcome.h"

namespace ranktest::execute {

struct OutOfMemoryFacts {
  std::uint64_t kills = 0;     // processes of the test the OOM killer ended
  bool limit_reached = false;  // the test's own memory limit was hit
  std::optional<std::uint64_t> max_memory;  // the test's max-memory, if any
  // Processes of the test ended by a SIGKILL that ranktest did not send,
  // as a person reads them: "rank 1 (pid 812)", "child 913 (python3 -c ...)".
  std::vector<std::string> killed;
};

void judge_out_of_memory(TestResult& result, const OutOfMemoryFacts& facts);

}  // namespace ranktest::execute
