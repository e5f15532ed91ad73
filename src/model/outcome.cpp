#include "model/outcome.h"

#include <array>
#include <string>
#include <utility>

namespace ranktest {
namespace {
constexpr std::array<std::pair<Outcome, std::string_view>, 12> kNames{{
    {Outcome::passed, "passed"},
    {Outcome::xpassed, "xpassed"},
    {Outcome::skipped, "skipped"},
    {Outcome::xfailed, "xfailed"},
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
    // pytest's own summary counts them apart; ranktest's three numbers put
    // them with what they are closest to, and every report names them.
    case Outcome::passed:
    case Outcome::xpassed: return SummaryBucket::passed;
    case Outcome::skipped:
    case Outcome::xfailed: return SummaryBucket::skipped;
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

bool ended_cleanly(Outcome outcome) {
  const auto bucket = summary_bucket(outcome);
  return bucket == SummaryBucket::passed || bucket == SummaryBucket::skipped;
}

std::string failure_signature(const TestResult& result) {
  if (!is_failure(result.outcome)) return {};
  std::string signature(to_string(result.outcome));
  signature += '|';
  std::string_view reason = result.reason;
  if (reason.ends_with(kFailedAloneNote)) {
    reason.remove_suffix(kFailedAloneNote.size());
    if (reason.ends_with("; ")) reason.remove_suffix(2);
  }
  if (result.failures.empty()) return (signature += '|') += reason;
  const auto& first = result.failures.front();
  if (first.location)
    signature += first.location->file + ':' + std::to_string(first.location->line);
  signature += '|';
  // The last line with anything on it.
  const std::string_view text = first.text;
  const auto end = text.find_last_not_of(" \t\r\n");
  if (end != std::string_view::npos) {
    const auto newline = text.find_last_of('\n', end);
    const auto start = newline == std::string_view::npos ? 0 : newline + 1;
    return signature += text.substr(start, end + 1 - start);
  }
  return signature += reason;
}

}  // namespace ranktest
