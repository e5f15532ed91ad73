#include "report/terminal_reporter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "config/duration.h"
#include "model/overloaded.h"
#include "report/rank_output.h"
#include "text/file_tail.h"
#include "report/terminal_text.h"
#include "text/sanitize.h"

namespace ranktest::report {
using namespace terminal_text;

std::string shell_quote(const std::string& text) {
  const bool plain =
      !text.empty() &&
      text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789_-./:=@%+,") == std::string::npos;
  if (plain) return text;
  // A control byte (a name holding "\r\x1b[2K" would rewrite the terminal
  // line) or invalid UTF-8 is written as bash's $'\xNN', which the shell
  // turns back into the same byte: the command stays exact and printable.
  if (text::terminal_safe(text) != text || text.find('\t') != std::string::npos ||
      text.find('\n') != std::string::npos)
    return text::ansi_c_quoted(text);
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string rerun_command_for(const std::string& prefix, const events::TestFinished& event) {
  // The same devices again, so a device-specific failure reproduces.
  std::string devices;
  for (const auto& [kind, ids] : event.placement.devices)
    if (!ids.empty())
      devices += " --devices " + shell_quote(kind + "=" + fmt::format("{}", fmt::join(ids, ",")));
  return fmt::format("{}{} --exact {}", prefix, devices, shell_quote(event.test.id));
}

TerminalStyle terminal_style(std::FILE* out, std::string_view color_choice) {
  const char* term = std::getenv("TERM");
  const char* no_color = std::getenv("NO_COLOR");
  const bool tty = isatty(fileno(out)) && !(term && std::string_view(term) == "dumb");
  TerminalStyle style;
  style.live_status = tty;
  style.color = color_choice == "always" ||
                (color_choice == "auto" && tty && (!no_color || !*no_color));
  return style;
}

std::optional<StatusLevel> status_level_from_string(std::string_view text) {
  constexpr std::pair<std::string_view, StatusLevel> kLevels[] = {
      {"none", StatusLevel::none}, {"fail", StatusLevel::fail}, {"slow", StatusLevel::slow},
      {"pass", StatusLevel::pass}, {"skip", StatusLevel::skip}, {"all", StatusLevel::all}};
  for (const auto& [name, level] : kLevels)
    if (name == text) return level;
  return std::nullopt;
}

std::string_view status_label(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed: return "PASS";
    case Outcome::xpassed: return "XPASS";
    case Outcome::skipped: return "SKIP";
    case Outcome::xfailed: return "XFAIL";
    case Outcome::failed: return "FAIL";
    case Outcome::crashed: return "CRASH";
    case Outcome::timed_out: return "TIMEOUT";
    case Outcome::leaked: return "LEAK";
    case Outcome::child_failed: return "CHILD";
    case Outcome::error: return "ERROR";
    case Outcome::interrupted: return "INTR";
    case Outcome::not_run: return "NOTRUN";
  }
  return "?";
}

TerminalReporter::TerminalReporter(std::FILE* out, TerminalOptions options)
    : out_(out), options_(std::move(options)) {
  if (options_.live_status)
    live_ = std::make_unique<LiveStatus>(out_, options_.color, options_.expected_durations);
}

TerminalReporter::~TerminalReporter() = default;

void TerminalReporter::report(const events::Event& event) {
  if (!live_) {
    std::visit([this](const auto& e) { on(e); }, event);
    std::fflush(out_);
    return;
  }
  // The status line steps aside for what is printed, then comes back below it.
  auto lock = live_->begin_output();
  std::visit([this](const auto& e) { on(e); }, event);
  live_->end_output(event, lock);
}

std::string TerminalReporter::label(std::string_view text, Tone tone) const {
  const auto padded = fmt::format("{:>8}", text);
  if (!options_.color) return padded;
  const char* colour = "";
  switch (tone) {
    case Tone::good: colour = "\x1b[32m"; break;
    case Tone::notice: colour = "\x1b[33m"; break;
    case Tone::bad: colour = "\x1b[1;31m"; break;
    case Tone::dim: colour = "\x1b[2m"; break;
  }
  return fmt::format("{}{}\x1b[0m", colour, padded);
}

std::string TerminalReporter::label(Outcome outcome) const {
  // Green for a pass, yellow for a skip, bold red for a failure, dim for
  // what did not run.
  Tone tone = Tone::bad;
  switch (summary_bucket(outcome)) {
    case SummaryBucket::passed: tone = Tone::good; break;
    case SummaryBucket::skipped: tone = Tone::notice; break;
    case SummaryBucket::none: tone = Tone::dim; break;
    case SummaryBucket::failed: break;
  }
  return label(status_label(outcome), tone);
}

void TerminalReporter::on(const events::RunStarted& event) {
  flaky_fails_ = event.flaky_fails;
  // Which isolation runs: a process per test, or worker processes that run
  // test after test (isolation = "worker").
  std::string extra;
  if (event.in_workers == event.tests_to_run && event.tests_to_run > 0)
    extra += ", in worker processes";
  else if (event.in_workers > 0)
    extra += fmt::format(", {} in worker processes", event.in_workers);
  else if (event.tests_to_run > 0)
    extra += ", a process each";
  if (!event.allocation.empty())
    extra += fmt::format(", as job steps across {}", shown(event.allocation));
  if (event.tests_to_skip) extra += fmt::format(", {} skipped", event.tests_to_skip);
  if (event.filtered_out) extra += fmt::format(", {} filtered out", event.filtered_out);
  if (!options_.replay_title.empty()) {
    fmt::print(out_, "ranktest: {}: {} test{} run with {} job{}{}\n", shown(options_.replay_title),
               event.tests_to_run, event.tests_to_run == 1 ? "" : "s", event.jobs,
               event.jobs == 1 ? "" : "s", extra);
    return;
  }
  fmt::print(out_, "ranktest: running {} test{} with {} job{}{}; run folder {}\n",
             event.tests_to_run, event.tests_to_run == 1 ? "" : "s",
             event.jobs, event.jobs == 1 ? "" : "s", extra,
             shown(display_path(event.run_dir)));
}

void TerminalReporter::on(const events::TestStarted&) {}

// Said where it happens, on standard error as every warning, and again by
// `report`.
void TerminalReporter::on(const events::RunWarning& event) {
  std::fflush(out_);
  fmt::print(stderr, "ranktest: warning: {}\n", shown(event.message));
}

// A note, not a verdict: the test keeps running until its timeout.
void TerminalReporter::on(const events::TestSlow& event) {
  if (options_.status_level < StatusLevel::slow) return;
  fmt::print(out_, "{} [>{:7.3f}s] {}\n", label("SLOW", Tone::notice), event.elapsed.count() / 1000.0,
             shown(event.test.id));
}

void TerminalReporter::on(const events::TestFinished& event) {
  const TestResult& result = event.result;
  const std::string id = shown(event.test.id);
  if (event.quarantined && !event.retrying && on_quarantined(event)) return;
  if (result.outcome == Outcome::not_run) {
    auto it = std::find_if(not_run_reasons_.begin(), not_run_reasons_.end(),
                           [&](const auto& entry) { return entry.reason == result.reason; });
    if (it == not_run_reasons_.end()) it = not_run_reasons_.insert(it, NotRun{result.reason, 0, {}});
    if (++it->count <= kNotRunNamed) it->first_ids.push_back(in_name_column(id));
    return;
  }
  const std::string time =
      event.attempt == 0 ? std::string(10, ' ') : seconds(result.duration);
  if (event.retrying) {
    // Not the verdict yet, but why it failed is what makes a test flaky.
    if (options_.status_level < StatusLevel::fail) return;
    if (!event.retry_note.empty()) {
      // Narrowing down an order-dependent failure (scheduler.cpp).
      fmt::print(out_, "{} [{}] {} (attempt {} {})\n", label("RETRY", Tone::notice), time, id,
                 event.attempt, shown(event.retry_note));
      // A forked failure's details stay in its log, as below.
      if (event.forked && is_failure(result.outcome))
        fmt::print(out_, "{}log: {}\n", kIndent, shown(display_path(result.log_path)));
      return;
    }
    if (!is_failure(result.outcome)) {
      // Passed as a fresh process after failing forked (scheduler.cpp).
      fmt::print(out_, "{} [{}] {} (attempt {} {} as a fresh process; runs forked once more to "
                       "tell a failure that comes with forking from a flaky one)\n",
                 label("RETRY", Tone::notice), time, id, event.attempt,
                 to_string(result.outcome));
      return;
    }
    fmt::print(out_, "{} [{}] {} (attempt {} {}{}{}; runs again{})\n",
               label("RETRY", Tone::notice), time, id, event.attempt,
               to_string(result.outcome), event.forked ? " when forked" : "",
               result.reason.empty() ? "" : ": " + shown(result.reason),
               event.forked ? " as a fresh process" : "");
    // A forked failure is shown by its fresh run if it fails there too;
    // its own details stay in its log.
    if (event.forked)
      fmt::print(out_, "{}log: {}\n", kIndent, shown(display_path(result.log_path)));
    else
      print_failure_block(event);
    return;
  }
  if (event.fork_only) {
    // Passed as a fresh process after failing forked: true, and worth a line.
    if (options_.status_level >= StatusLevel::fail)
      fmt::print(out_, "{} [{}] {} (failed when forked from the fork server, passed as a fresh "
                       "process)\n",
                 label("FORKFAIL", Tone::notice), time, id);
    fork_only_.push_back({result.outcome, id, "passed as a fresh process"});
    passed_and_skipped_.push_back({result.outcome, id, shown(result.reason)});
    return;
  }
  if (events::is_flaky(event)) {
    if (options_.status_level >= StatusLevel::fail)
      fmt::print(out_, "{} [{}] {} (passed on attempt {})\n",
                 label("FLAKY", flaky_fails_ ? Tone::bad : Tone::notice), time, id,
                 event.attempt);
    flaky_.push_back({result.outcome, id, fmt::format("passed on attempt {}", event.attempt)});
    return;
  }
  if (summary_bucket(result.outcome) == SummaryBucket::passed ||
      summary_bucket(result.outcome) == SummaryBucket::skipped)
    passed_and_skipped_.push_back({result.outcome, id, shown(result.reason)});
  if (result.outcome == Outcome::xpassed) {
    // Passed, though marked to fail: worth a line, like a skip's reason.
    if (options_.status_level >= StatusLevel::pass)
      fmt::print(out_, "{} [{}] {}{}\n", label(result.outcome), time, id,
                 result.reason.empty() ? "" : ": " + shown(result.reason));
    return;
  }
  if (result.outcome == Outcome::passed) {
    if (!result.suspicious.empty() && options_.status_level >= StatusLevel::fail) {
      // Passed, but its output says something failed: never quiet about it.
      fmt::print(out_, "{} [{}] {} (may have swallowed a failure)\n", label("PASS", Tone::notice),
                 time, id);
      for (const auto& line : result.suspicious)
        fmt::print(out_, "{}| {}\n", kIndent, shown(line));
      print_hints(result);
      if (!result.log_path.empty())
        fmt::print(out_, "{}log: {}\n", kIndent, shown(display_path(result.log_path)));
      suspicious_.push_back(id);
    } else if (!result.suspicious.empty()) {
      suspicious_.push_back(id);
    } else if (options_.status_level >= StatusLevel::pass) {
      fmt::print(out_, "{} [{}] {}\n", label(result.outcome), time, id);
    }
    return;
  }
  if (result.outcome == Outcome::skipped || result.outcome == Outcome::xfailed) {
    if (options_.status_level < StatusLevel::skip) return;
    fmt::print(out_, "{} [{}] {}{}\n", label(result.outcome), time, id,
               result.reason.empty() ? "" : ": " + shown(result.reason));
    return;
  }
  if (options_.status_level >= StatusLevel::fail) {
    fmt::print(out_, "{} [{}] {}{}\n", label(result.outcome), time, id,
               result.reason.empty() ? "" : " (" + shown(result.reason) + ")");
    print_failure_block(event);
  }

  std::string detail = result.reason;
  if (!result.failures.empty() && result.failures.front().location)
    detail = where(result.failures.front().location);
  not_passed_.push_back({result.outcome, id, shown(detail)});
}

bool TerminalReporter::on_quarantined(const events::TestFinished& event) {
  const TestResult& result = event.result;
  const auto& entry = *event.quarantined;
  const std::string id = shown(event.test.id);
  if (ended_cleanly(result.outcome)) {
    // Said, then shown as any pass is.
    quarantined_.push_back({result.outcome, id,
                            fmt::format("passes again: remove it from the quarantine ({})",
                                        shown(entry.place))});
    return false;
  }
  if (result.outcome == Outcome::interrupted) return false;
  std::string detail = result.reason;
  if (!result.failures.empty() && result.failures.front().location)
    detail = where(result.failures.front().location);
  const auto quarantine = fmt::format("quarantined until {}: {}", entry.until, shown(entry.reason));
  if (result.outcome != Outcome::not_run && options_.status_level >= StatusLevel::fail) {
    fmt::print(out_, "{} [{}] {} ({}{}; {})\n", label("QUARANT", Tone::notice),
               seconds(result.duration), id, to_string(result.outcome),
               detail.empty() ? "" : ": " + shown(detail), quarantine);
    print_failure_block(event);
  }
  quarantined_.push_back({result.outcome, id,
                          fmt::format("{}{}; {}", to_string(result.outcome),
                                      detail.empty() ? "" : " (" + shown(detail) + ")", quarantine)});
  return true;
}

void TerminalReporter::print_failure_block(const events::TestFinished& event) {
  const TestResult& result = event.result;
  const bool many_ranks = result.ranks.size() > 1;
  if (many_ranks) {
    // Every rank's ending on one line, then the root cause's details.
    std::string summary;
    for (const auto& rank : result.ranks) {
      summary += fmt::format("{}{} {}", summary.empty() ? "" : "; ", rank.rank,
                             to_string(rank.outcome));
      if (!rank.reason.empty() && rank.outcome != Outcome::passed)
        summary += " (" + rank.reason + ")";
    }
    fmt::print(out_, "{}ranks: {}\n", kIndent, shown(summary));
    if (result.root_cause_rank >= 0)
      fmt::print(out_, "{}rank {} failed first:\n", kIndent, result.root_cause_rank);
  }
  // A test that failed a thousand times leads with its first failures;
  // the events and JUnit keep them all (the report's first 100).
  constexpr std::size_t kFailuresShown = 10;
  std::size_t shown_failures = 0;
  for (const auto& failure : result.failures) {
    if (shown_failures++ == kFailuresShown) {
      fmt::print(out_, "{}…and {} more failure messages (in events.jsonl and JUnit)\n", kIndent,
                 result.failures.size() - kFailuresShown);
      // The reading's own note of what the report held beyond those.
      const auto& last = result.failures.back();
      if (!last.location && last.text.starts_with("…and "))
        fmt::print(out_, "{}{}\n", kIndent, shown(last.text));
      break;
    }
    std::string text = failure.text;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const auto location = where(failure.location);
    bool first = true;
    for (auto line : text::last_lines(text, 40)) {
      fmt::print(out_, "{}{}{}\n", kIndent,
                 first && !location.empty() ? location + ": " : "", shown(line));
      first = false;
    }
    if (first && !location.empty()) fmt::print(out_, "{}{}\n", kIndent, location);
  }
  // With no root cause (a timeout, say) no rank comes first: all are merged.
  const bool lead_first = !many_ranks || result.root_cause_rank >= 0;
  const auto lines = lead_first ? text::last_lines(result.output_excerpt, options_.tail_lines)
                                : std::vector<std::string_view>{};
  if (!lines.empty()) {
    fmt::print(out_, "{}output{}{}:\n", kIndent,
               many_ranks ? fmt::format(" of rank {}", std::max(0, result.root_cause_rank))
                          : std::string(),
               lines.size() == options_.tail_lines
                   ? fmt::format(", last {} lines", lines.size())
                   : std::string());
    for (auto line : lines) fmt::print(out_, "{}| {}\n", kIndent, shown(line));
  }
  if (many_ranks) {
    std::vector<std::pair<int, std::string_view>> others;
    for (const auto& rank : result.ranks)
      if (!lead_first || rank.rank != result.root_cause_rank)
        others.emplace_back(rank.rank, rank.output_excerpt);
    auto merged = merge_rank_outputs(others);
    if (merged.size() > options_.tail_lines)
      merged.erase(merged.begin(), merged.end() - static_cast<long>(options_.tail_lines));
    if (!merged.empty()) {
      fmt::print(out_, "{}output of {} ranks:\n", kIndent, lead_first ? "the other" : "all");
      for (const auto& line : merged) fmt::print(out_, "{}| {}\n", kIndent, shown(line));
    }
  }
  if (!result.stacks.empty()) {
    // Which rank waited where when the timeout struck.
    fmt::print(out_, "{}stacks at the timeout:\n", kIndent);
    for (const auto& stack : result.stacks)
      fmt::print(out_, "{}  {} (pid {}): {}\n", kIndent,
                 stack.rank >= 0 ? fmt::format("rank {}", stack.rank) : std::string("process"),
                 stack.pid,
                 stack.summary.empty() ? "no stack (see " + display_path(stack.path) + ")"
                                       : shown(stack.summary));
  }
  print_hints(result);
  if (!result.log_path.empty()) {
    const std::string log = display_path(result.log_path);
    fmt::print(out_, "{}log{}: {}\n", kIndent, many_ranks ? "s" : "",
               shown(many_ranks ? std::filesystem::path(log).parent_path().string() + "/"
                                : log));
  }
  fmt::print(out_, "{}rerun: {}\n", kIndent, rerun_command_for(options_.rerun_command, event));
}

void TerminalReporter::print_hints(const TestResult& result) {
  for (const auto& hint : result.hints) {
    fmt::print(out_, "{}hint: \"{}\": {}\n", kIndent, shown(hint.match), shown(hint.explanation));
    if (!hint.fix.empty()) fmt::print(out_, "{}  fix: {}\n", kIndent, shown(hint.fix));
  }
}


}  // namespace ranktest::report
