#include "report/html_reporter.h"

#include <fstream>
#include <stdexcept>

#include "events/event_json.h"
#include "model/overloaded.h"
#include "report/terminal_reporter.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::report {

extern const char* const kReportPageHtml;  // generated from data/report.html

namespace {

constexpr std::string_view kDataMarker = "/*RANKTEST-DATA*/";

bool passed_quietly(const TestResult& result) {
  return ((result.outcome == Outcome::passed || result.outcome == Outcome::xpassed) &&
          result.suspicious.empty()) ||
         result.outcome == Outcome::skipped || result.outcome == Outcome::xfailed ||
         result.outcome == Outcome::not_run;
}

}  // namespace

std::string render_html_report(const nlohmann::ordered_json& data) {
  const std::string safe = text::script_safe_json(
      data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::string page = kReportPageHtml;
  const auto at = page.find(kDataMarker);
  if (at == std::string::npos) throw std::logic_error("data/report.html has no data marker");
  page.replace(at, kDataMarker.size(), safe);
  return page;
}

// The end of each rank's log (and of each stack dump), as text a browser
// shows: escape sequences and invalid bytes written as \xNN.
nlohmann::ordered_json HtmlReporter::logs_of(const events::TestFinished& event) {
  const TestResult& result = event.result;
  const std::size_t limit =
      passed_quietly(result) ? options_.passed_log_bytes : options_.failed_log_bytes;
  auto embed = [&](const std::string& path) {
    nlohmann::ordered_json log{{"path", text::repair_utf8(path)}, {"text", nullptr},
                               {"skipped_bytes", 0}};
    if (path.empty() || log_bytes_ >= options_.total_log_bytes) return log;
    const auto tail = text::read_file_tail(path, limit);
    log_bytes_ += tail.bytes.size();
    log["text"] = text::terminal_safe(tail.bytes);
    log["skipped_bytes"] = tail.skipped;
    return log;
  };
  nlohmann::ordered_json logs = nlohmann::ordered_json::array();
  for (const auto& rank : result.ranks) {
    auto log = embed(rank.log_path);
    log["rank"] = rank.rank;
    logs.push_back(std::move(log));
  }
  if (result.ranks.empty() && !result.log_path.empty()) {
    auto log = embed(result.log_path);
    log["rank"] = nullptr;
    logs.push_back(std::move(log));
  }
  return logs;
}

void HtmlReporter::report(const events::Event& event) {
  std::visit(
      Overloaded{
          [this, &event](const events::RunStarted&) {
            run_ = events::to_json(event);
            run_.erase("planned");  // every test is in `tests` once it ends
          },
          [this](const events::TestStarted& e) {
            started_[{e.test.id, e.attempt}] = events::format_time(e.time);
          },
          [](const events::TestSlow&) {}, [](const events::RunWarning&) {},
          [this, &event](const events::TestFinished& e) {
            nlohmann::ordered_json test;
            const auto started = started_.find({e.test.id, e.attempt});
            test["started"] = started == started_.end() ? nlohmann::ordered_json(nullptr)
                                                        : nlohmann::ordered_json(started->second);
            if (started != started_.end()) started_.erase(started);
            test["finished"] = events::to_json(event);
            test["logs"] = logs_of(e);
            nlohmann::ordered_json stacks = nlohmann::ordered_json::array();
            for (const auto& stack : e.result.stacks)
              stacks.push_back(text::terminal_safe(
                  text::read_file_tail(stack.path, options_.failed_log_bytes / 4).bytes));
            test["stack_texts"] = std::move(stacks);
            test["rerun"] = passed_quietly(e.result)
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json(text::repair_utf8(
                                      rerun_command_for(options_.rerun_command, e)));
            const auto before = options_.history.find(e.test.id);
            test["history"] = before == options_.history.end()
                                  ? nlohmann::ordered_json::array()
                                  : nlohmann::ordered_json(before->second);
            tests_.push_back(std::move(test));
          },
          [this, &event](const events::RunFinished&) { write(events::to_json(event)); }},
      event);
}

void HtmlReporter::write(const nlohmann::ordered_json& end) const {
  const nlohmann::ordered_json data{{"run", run_}, {"tests", tests_}, {"end", end}};
  const std::string page = render_html_report(data);
  // Written beside and renamed over: a reader never sees half a report.
  const auto partial = std::filesystem::path(path_.string() + ".partial");
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << page;
    if (!out.flush()) throw std::runtime_error(path_.string() + ": cannot write the HTML report");
  }
  std::error_code error;
  std::filesystem::rename(partial, path_, error);
  if (error)
    throw std::runtime_error(path_.string() + ": cannot write the HTML report: " +
                             error.message());
}

}  // namespace ranktest::report
