// The end of a run on the terminal: what did not pass, what passed only
// on a retry or fresh, what is quarantined, and the summary line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "config/duration.h"
#include "report/terminal_reporter.h"
#include "report/terminal_text.h"

namespace ranktest::report {

using namespace terminal_text;

void TerminalReporter::on(const events::RunFinished& event) {
  const auto& counts = event.counts;
  const std::size_t ran = counts.passed + counts.failed + counts.skipped +
                          counts.interrupted + counts.quarantined;
  fmt::print(out_, "{}\n", std::string(60, '-'));
  fmt::print(out_, "ranktest: {} test{} in {}\n", ran, ran == 1 ? "" : "s",
             config::format_duration(event.duration));
  const auto level = options_.final_status_level;
  if (level >= StatusLevel::pass) {
    for (const auto& entry : passed_and_skipped_)
      if (entry.outcome == Outcome::passed || level >= StatusLevel::skip)
        fmt::print(out_, "{} {}{}\n", label(entry.outcome), in_name_column(entry.id),
                   entry.detail.empty() ? "" : "  " + entry.detail);
  }
  if (!not_passed_.empty() && level >= StatusLevel::fail) {
    std::size_t width = 0;
    for (const auto& entry : not_passed_)
      width = std::max(width, characters(in_name_column(entry.id)));
    // Grouped by kind: failures, then crashes, then timeouts, ...
    std::stable_sort(not_passed_.begin(), not_passed_.end(),
                     [](const auto& a, const auto& b) { return a.outcome < b.outcome; });
    fmt::print(out_, "ranktest: did not pass:\n");
    for (const auto& entry : not_passed_)
      fmt::print(out_, "{} {:<{}}  {}\n", label(entry.outcome),
                 in_name_column(entry.id), width, entry.detail);
  }
  if (!quarantined_.empty()) {
    fmt::print(out_, "ranktest: {} quarantined test{} (run and reported; no outcome of theirs "
                     "fails the run):\n",
               quarantined_.size(), quarantined_.size() == 1 ? "" : "s");
    for (const auto& entry : quarantined_)
      fmt::print(out_, "{} {}  {}\n", label("QUARANT", Tone::notice), in_name_column(entry.id),
                 entry.detail);
  }
  if (!flaky_.empty()) {
    fmt::print(out_, "ranktest: {} flaky test{} (failed, then passed on a retry){}:\n",
               flaky_.size(), flaky_.size() == 1 ? "" : "s",
               flaky_fails_ ? "; counted failed (flaky = \"fail\")" : "");
    for (const auto& entry : flaky_)
      fmt::print(out_, "{} {}  {}\n", label("FLAKY", flaky_fails_ ? Tone::bad : Tone::notice),
                 in_name_column(entry.id), entry.detail);
  }
  if (!fork_only_.empty()) {
    fmt::print(out_, "ranktest: {} test{} failed only when forked from a fork server (passed as "
                     "a fresh process; counted passed): state made at import or static "
                     "initialisation, or a pid, socket or thread seen before the fork:\n",
               fork_only_.size(), fork_only_.size() == 1 ? "" : "s");
    for (const auto& entry : fork_only_)
      fmt::print(out_, "{} {}\n", label("FORKFAIL", Tone::notice), in_name_column(entry.id));
  }
  if (counts.interrupted)
    fmt::print(out_, "ranktest: {} test{} interrupted\n", counts.interrupted,
               counts.interrupted == 1 ? "" : "s");
  if (!suspicious_.empty()) {
    fmt::print(out_, "ranktest: {} passing test{} may have swallowed a failure (a worker "
               "that failed, or failure signatures in the output), check:\n",
               suspicious_.size(), suspicious_.size() == 1 ? "" : "s");
    for (const auto& id : suspicious_)
      fmt::print(out_, "{} {}\n", label("SUSPECT", Tone::notice), in_name_column(id));
  }
  for (const auto& entry : not_run_reasons_)
    fmt::print(out_, "ranktest: {} test{} not run: {} ({}{})\n", entry.count,
               entry.count == 1 ? "" : "s", shown(entry.reason), fmt::join(entry.first_ids, ", "),
               entry.count > kNotRunNamed
                   ? fmt::format(" and {} more", entry.count - kNotRunNamed)
                   : "");
  for (const auto& [what, path] : options_.report_files)
    fmt::print(out_, "ranktest: {}: {}\n", what,
               shown(display_path(std::filesystem::path(path).lexically_normal().string())));
  // Tests not run fail the run too: the last line says why it failed.
  fmt::print(out_, "ranktest: {} passed, {} failed, {} skipped{}{}\n", counts.passed,
             counts.failed, counts.skipped,
             counts.not_run ? fmt::format(", {} not run", counts.not_run) : "",
             counts.quarantined ? fmt::format(", {} quarantined", counts.quarantined) : "");
}

}  // namespace ranktest::report
