#include "execute/memory_verdict.h"

#include <fmt/format.h>

#include "config/byte_size.h"

namespace ranktest::execute {
namespace {

std::string who(const OutOfMemoryFacts& facts) {
  if (facts.killed.empty())
    return facts.kills == 1 ? "a process of the test"
                            : fmt::format("{} processes of the test", facts.kills);
  std::string names;
  for (std::size_t i = 0; i < facts.killed.size() && i < 3; ++i)
    names += (i ? ", " : "") + facts.killed[i];
  if (facts.killed.size() > 3) names += fmt::format(" and {} more", facts.killed.size() - 3);
  return names;
}

}  // namespace

void judge_out_of_memory(TestResult& result, const OutOfMemoryFacts& facts) {
  if (facts.kills == 0) return;
  const auto note =
      facts.limit_reached && facts.max_memory
          ? fmt::format("out of memory: the OOM killer ended {} at max-memory {}", who(facts),
                        config::format_size(*facts.max_memory))
          : fmt::format("out of memory: the kernel's OOM killer ended {} (the machine ran out "
                        "of memory{})",
                        who(facts),
                        facts.max_memory ? ", not the test's max-memory" : "");
  result.machine_out_of_memory = !(facts.limit_reached && facts.max_memory);
  // A worker the OOM killer took is never a pass, whatever the test said.
  const bool passing = ended_cleanly(result.outcome);
  if (passing) {
    result.outcome = Outcome::child_failed;
    result.reason = result.reason.empty() ? note : note + "; " + result.reason;
    return;
  }
  result.reason += (result.reason.empty() ? "" : "; ") + note;
}

}  // namespace ranktest::execute
