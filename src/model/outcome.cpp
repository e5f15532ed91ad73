#include "model/outcome.h"

#include <array>
#include <utility>

namespace ranktest {
namespace {
constexpr std::array<std::pair<Outcome, std::string_view>, 10> kNames{{
    {Outcome::passed, "passed"},
    {Outcome::skipped, "skipped"},
    {Outcome::failed, "failed"},
    {Outcome::crashed, "crashed"},
    {Outcome::timed_out, "timed-out"},
    {Outcome::leaked, "leaked"},
    {Outcome::child_failed, "child-failed"},
    {Outcome::error, "error"},
    {Outcome::interrupted, "interrupted"},
    {Outcome::not_run, "not-run"},
}};
}  // namespace

std::string_view to_string(Outcome outcome) {
  for (const auto& [value, name] : kNames)
    if (value == outcome) return name;
  return "unknown";
}

std::optional<Outcome> outcome_from_string(std::string_view text) {
  for (const auto& [value, name] : kNames)
    if (name == text) return value;
  return std::nullopt;
}

SummaryBucket summary_bucket(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed: return SummaryBucket::passed;
    case Outcome::skipped: return SummaryBucket::skipped;
    case Outcome::failed:
    case Outcome::crashed:
    case Outcome::timed_out:
    case Outcome::leaked:
    case Outcome::child_failed:
    case Outcome::error: return SummaryBucket::failed;
    // Neither the test's fault nor a pass: reported on a line of their own.
    case Outcome::interrupted:
    case Outcome::not_run: return SummaryBucket::none;
  }
  return SummaryBucket::failed;
}

bool is_failure(Outcome outcome) {
  return summary_bucket(outcome) == SummaryBucket::failed;
}

}  // namespace ranktest
