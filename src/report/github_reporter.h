// GitHub Actions (GITHUB_ACTIONS=true): an ::error annotation per failed
// test, placed at its failure's file:line in the pull request's diff, a
// ::warning per suspicious pass, and a Markdown summary of the run appended
// to $GITHUB_STEP_SUMMARY.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/reporter.h"

namespace ranktest::report {

// Escapes for workflow commands: the message (%, CR, LF) and the
// properties (also : and ,).
std::string github_escape_data(std::string_view text);
std::string github_escape_property(std::string_view text);

// A Markdown table cell showing `text` verbatim as code: fenced with more
// backticks than any run inside it (padded with spaces where it starts or
// ends with one), pipes escaped, one line. A test name with backticks,
// pipes or HTML stays one cell and reads as written.
std::string markdown_code_cell(std::string_view text);

class GithubReporter final : public events::Reporter {
 public:
  // `summary_path`: $GITHUB_STEP_SUMMARY, when set.
  GithubReporter(std::FILE* out, std::optional<std::filesystem::path> summary_path)
      : out_(out), summary_path_(std::move(summary_path)) {}
  std::string_view name() const override { return "github"; }
  void report(const events::Event& event) override;

 private:
  struct Row {
    std::string outcome, id, reason;
  };
  std::FILE* out_;
  std::optional<std::filesystem::path> summary_path_;
  std::vector<Row> not_passed_;
};

// A GithubReporter when running in GitHub Actions (GITHUB_ACTIONS=true),
// writing the summary to $GITHUB_STEP_SUMMARY if set; else nullptr.
std::unique_ptr<GithubReporter> github_reporter_from_environment(std::FILE* out);

}  // namespace ranktest::report
