// --html PATH: one self-contained HTML file a person opens after the run
// (data/report.html is its page; the run is embedded in it as JSON): the
// summary, a filterable table of every test, each test's failure messages,
// hints, stacks and log of every rank, and a timeline of which test held
// which slot and which devices when. It loads nothing from the network.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/reporter.h"

namespace ranktest::report {

struct HtmlOptions {
  // Prefix of the rerun command shown with each test that did not pass.
  std::string rerun_command = "ranktest run";
  // How much of each rank's log is embedded: the end of it, this many bytes.
  std::size_t failed_log_bytes = 256 * 1024;
  std::size_t passed_log_bytes = 8 * 1024;
  // All logs together; past it, a test's logs are named but not embedded,
  // so a run of 100k chatty tests still gives a file a browser can open.
  std::size_t total_log_bytes = 64 * 1024 * 1024;
  // Each test's verdicts in the runs before this one, oldest first, from
  // the history (empty without one, and in `ranktest report`): each test
  // shows them beside its own.
  std::map<std::string, std::vector<std::string>> history = {};
};

class HtmlReporter final : public events::Reporter {
 public:
  HtmlReporter(std::filesystem::path path, HtmlOptions options)
      : path_(std::move(path)), options_(std::move(options)) {}
  std::string_view name() const override { return "html"; }
  void report(const events::Event& event) override;

 private:
  nlohmann::ordered_json logs_of(const events::TestFinished& event);
  void write(const nlohmann::ordered_json& end) const;

  std::filesystem::path path_;
  HtmlOptions options_;
  nlohmann::ordered_json run_;
  nlohmann::ordered_json tests_ = nlohmann::ordered_json::array();
  std::map<std::pair<std::string, int>, std::string> started_;  // (id, attempt) -> time
  std::size_t log_bytes_ = 0;
};

// The page with `data` embedded: every '<' of the JSON is written \u003c, so
// no test name or output can close the script element it sits in.
std::string render_html_report(const nlohmann::ordered_json& data);

}  // namespace ranktest::report
