#include "report/github_reporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "model/overloaded.h"
#include "text/sanitize.h"

namespace ranktest::report {
namespace {

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text::truncate_utf8(text::terminal_safe(text), 300)) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string markdown_code_cell(std::string_view text) {
  std::string body;
  std::size_t run = 0, longest = 0;
  for (const char c : text::truncate_utf8(text::terminal_safe(text), 300)) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '|') body += "\\|";  // GitHub splits cells on pipes even in code
    else if (c == '\n' || c == '\r') body += ' ';
    else body += c;
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string github_escape_data(std::string_view text) {
  std::string out;
  for (const char c : text::terminal_safe(text)) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      default: out += c;
    }
  }
  return out;
}

std::string github_escape_property(std::string_view text) {
  std::string out;
  for (const char c : github_escape_data(text)) {
    switch (c) {
      case ':': out += "%3A"; break;
      case ',': out += "%2C"; break;
      default: out += c;
    }
  }
  return out;
}

void GithubReporter::report(const events::Event& event) {
  std::visit(
      Overloaded{
          [](const events::RunStarted&) {}, [](const events::TestStarted&) {},
          [](const events::TestSlow&) {},
          [this](const events::RunWarning& e) {
            fmt::print(out_, "::warning title=ranktest::{}\n", github_escape_data(e.message));
            std::fflush(out_);
          },
          [this](const events::TestFinished& e) {
            const auto& result = e.result;
            if (e.retrying) return;  // the verdict comes with the last attempt
            if (e.quarantined && result.outcome != Outcome::interrupted) {
              // A warning, never an error: it cannot fail the run.
              const auto& entry = *e.quarantined;
              const bool passes = ended_cleanly(result.outcome);
              const auto what =
                  passes ? fmt::format("passes again: remove it from the quarantine ({})",
                                       entry.place)
                         : fmt::format("{}: {}; quarantined until {}: {}",
                                       to_string(result.outcome), result.reason, entry.until,
                                       entry.reason);
              fmt::print(out_, "::warning title={}::{}\n",
                         github_escape_property("quarantined " + e.test.id),
                         github_escape_data(what));
              not_passed_.push_back({"quarantined", e.test.id, what});
              std::fflush(out_);
              return;
            }
            if (e.fork_only) {
              fmt::print(out_, "::warning title={}::{}\n",
                         github_escape_property("fails only when forked " + e.test.id),
                         github_escape_data("failed when forked from the fork server, passed "
                                            "as a fresh process"));
              not_passed_.push_back({"fork-only", e.test.id, "passed as a fresh process"});
              std::fflush(out_);
              return;
            }
            if (events::is_flaky(e)) {
              fmt::print(out_, "::warning title={}::{}\n",
                         github_escape_property("flaky " + e.test.id),
                         github_escape_data(fmt::format(
                             "failed, then passed on attempt {}", e.attempt)));
              not_passed_.push_back({"flaky", e.test.id,
                                     fmt::format("passed on attempt {}", e.attempt)});
              std::fflush(out_);
              return;
            }
            const bool failed = is_failure(result.outcome);
            if (!failed && result.suspicious.empty()) return;
            std::string properties;
            const auto* located = result.failures.empty() || !result.failures.front().location
                                      ? nullptr
                                      : &*result.failures.front().location;
            if (!located && e.test.location) located = &*e.test.location;
            if (located && !located->file.empty())
              properties = fmt::format("file={},line={},", github_escape_property(located->file),
                                       located->line);
            const auto outcome = std::string(to_string(result.outcome));
            std::string message = result.reason;
            if (!result.failures.empty())
              message += (message.empty() ? "" : "\n") +
                         text::truncate_utf8(result.failures.front().text, 2000);
            for (const auto& hint : result.hints)
              message += "\nhint: " + hint.explanation + " Fix: " + hint.fix;
            if (failed) {
              fmt::print(out_, "::error {}title={}::{}\n", properties,
                         github_escape_property(fmt::format("{} {}", outcome, e.test.id)),
                         github_escape_data(message.empty() ? outcome : message));
              not_passed_.push_back({outcome, e.test.id, result.reason});
            } else {
              fmt::print(out_, "::warning {}title={}::{}\n", properties,
                         github_escape_property("may have swallowed a failure: " + e.test.id),
                         github_escape_data(fmt::format("{}", fmt::join(result.suspicious, "\n"))));
            }
            std::fflush(out_);
          },
          [this](const events::RunFinished& e) {
            if (!summary_path_) return;
            std::ofstream summary(*summary_path_, std::ios::app);
            summary << fmt::format("### ranktest: {} passed, {} failed, {} skipped\n\n",
                                   e.counts.passed, e.counts.failed, e.counts.skipped);
            if (e.counts.flaky)
              summary << fmt::format("{} flaky (failed, then passed on a retry)\n\n",
                                     e.counts.flaky);
            if (e.counts.quarantined)
              summary << fmt::format("{} quarantined (did not pass; listed below, not counted)\n\n",
                                     e.counts.quarantined);
            if (e.counts.fork_only)
              summary << fmt::format("{} failed only when forked (passed as a fresh process)\n\n",
                                     e.counts.fork_only);
            if (e.counts.not_run + e.counts.interrupted > 0)
              summary << fmt::format("{} not run, {} interrupted{}\n\n", e.counts.not_run,
                                     e.counts.interrupted,
                                     e.cancel_reason.empty() ? "" : " (" + e.cancel_reason + ")");
            if (!not_passed_.empty()) {
              summary << "| outcome | test | reason |\n| --- | --- | --- |\n";
              for (const auto& row : not_passed_)
                summary << fmt::format("| {} | {} | {} |\n", row.outcome,
                                       markdown_code_cell(row.id), markdown_cell(row.reason));
              summary << "\n";
            }
          }},
      event);
}

std::unique_ptr<GithubReporter> github_reporter_from_environment(std::FILE* out) {
  const char* github = std::getenv("GITHUB_ACTIONS");
  if (!github || std::string_view(github) != "true") return nullptr;
  const char* summary = std::getenv("GITHUB_STEP_SUMMARY");
  return std::make_unique<GithubReporter>(
      out, summary && *summary ? std::optional<std::filesystem::path>(summary) : std::nullopt);
}

}  // namespace ranktest::report
