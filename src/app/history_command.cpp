#include "app/history_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/prepare.h"
#include "history/history_page.h"
#include "config/duration.h"
#include "text/sanitize.h"

namespace ranktest::app {
namespace {

std::string seconds(std::chrono::milliseconds duration) {
  return fmt::format("{:.3f}s", duration.count() / 1000.0);
}

// Flakiest first: passes on a retry, then flips between passing and failing.
bool flakier(const history::TestStats& a, const history::TestStats& b) {
  if (a.flaky + a.flips != b.flaky + b.flips) return a.flaky + a.flips > b.flaky + b.flips;
  return a.test_id < b.test_id;
}

nlohmann::ordered_json stats_json(const history::TestStats& test) {
  return {{"id", text::repair_utf8(test.test_id)}, {"runs", test.runs}, {"failed", test.failed},
          {"flaky", test.flaky}, {"flips", test.flips}, {"median_ms", test.median.count()},
          {"longest_ms", test.longest.count()}};
}

int show_test(const history::HistoryDb& db, const HistoryQuery& query) {
  const auto records = db.attempts_of(*query.test, query.window);
  if (records.empty()) {
    fmt::print(stderr, "ranktest: error: {}: no attempt of this test in {}; check the id "
               "(ranktest list shows them)\n", *query.test, db.path().string());
    return to_int(ExitCode::usage_error);
  }
  if (query.json) {
    nlohmann::ordered_json attempts = nlohmann::ordered_json::array();
    for (const auto& r : records)
      attempts.push_back({{"run_id", r.run_id}, {"finished_at", r.finished_at},
                          {"attempt", r.attempt}, {"outcome", r.outcome},
                          {"reason", text::repair_utf8(r.reason)},
                          {"duration_ms", r.duration.count()},
                          {"peak_memory_bytes", r.peak_memory ? nlohmann::ordered_json(*r.peak_memory)
                                                              : nlohmann::ordered_json(nullptr)},
                          {"retrying", r.retrying}, {"flaky", r.flaky}, {"host", r.host},
                          {"commit", r.commit}});
    fmt::print("{}\n", nlohmann::ordered_json{{"test", text::repair_utf8(*query.test)},
                                              {"attempts", attempts}}.dump(2));
    return to_int(ExitCode::success);
  }
  fmt::print("{}: the last {} attempts, newest first\n", text::terminal_safe(*query.test),
             records.size());
  for (const auto& r : records) {
    std::string outcome = r.outcome;
    if (r.flaky) outcome += " (flaky)";
    if (r.retrying) outcome += " (retried)";
    fmt::print("  {}  #{}  {:<22} {:>10}  {}  {}  {}\n", r.finished_at.substr(0, 19), r.attempt,
               outcome, seconds(r.duration), r.host.empty() ? "-" : r.host,
               r.commit.empty() ? "-" : r.commit.substr(0, 10),
               text::terminal_safe(text::truncate_utf8(r.reason, 100)));
  }
  return to_int(ExitCode::success);
}

// The page of the last `query.window` runs, written whole or not at all.
int write_page(const history::HistoryDb& db, const HistoryQuery& query) {
  const auto verdicts = db.verdicts_by_run(query.window);
  const auto page = history::history_page(
      verdicts, fmt::format("ranktest history: {} runs", verdicts.runs.size()));
  const auto temporary = query.html->string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << page;
    if (!out.flush()) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      fmt::print(stderr, "ranktest: error: {}: cannot write the history page; check the path "
                 "given to --html\n", query.html->string());
      return to_int(ExitCode::usage_error);
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, *query.html, error);
  if (error) {
    fmt::print(stderr, "ranktest: error: {}: cannot write the history page ({})\n",
               query.html->string(), error.message());
    return to_int(ExitCode::usage_error);
  }
  fmt::print("ranktest history: {} runs, {} tests: {}\n", verdicts.runs.size(),
             verdicts.tests.size(), query.html->string());
  return to_int(ExitCode::success);
}

}  // namespace

int history_command(const CommandLine& cli, const HistoryQuery& query) {
  auto loaded = load_configuration(cli, false);
  if (auto* failure = std::get_if<Failure>(&loaded)) {
    fmt::print(stderr, "ranktest: error: {}\n", failure->message);
    return failure->exit_code;
  }
  const auto& config = std::get<config::Config>(loaded);
  auto path = config.history_path();
  if (path) path = path->lexically_normal();
  if (!path) {
    fmt::print(stderr, "ranktest: error: history = false in the configuration: nothing is "
               "recorded\n");
    return to_int(ExitCode::usage_error);
  }
  std::error_code missing;
  if (!std::filesystem::exists(*path, missing)) {
    fmt::print(stderr, "ranktest: error: {}: no history yet; it is written by ranktest run\n",
               path->string());
    return to_int(ExitCode::usage_error);
  }
  // A file that is there but cannot be read is damaged, not absent: say
  // what SQLite said and what to do.
  auto opened = history::HistoryDb::open(*path);
  if (!opened) {
    fmt::print(stderr, "ranktest: error: {}\n", opened.error().message);
    return to_int(ExitCode::usage_error);
  }
  const std::shared_ptr<history::HistoryDb> db = std::move(*opened);
  if (query.test) return show_test(*db, query);
  if (query.html) return write_page(*db, query);

  auto stats = db->test_stats(query.window);
  auto slowest = stats;
  std::sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) {
    return a.median != b.median ? a.median > b.median : a.test_id < b.test_id;
  });
  slowest.resize(std::min(slowest.size(), query.slowest));
  std::vector<history::TestStats> flakiest;
  for (const auto& test : stats)
    if (test.flaky + test.flips > 0) flakiest.push_back(test);
  std::sort(flakiest.begin(), flakiest.end(), flakier);
  flakiest.resize(std::min(flakiest.size(), query.flakiest));

  if (query.json) {
    nlohmann::ordered_json out{{"database", path->string()}, {"runs", db->run_count()},
                               {"slowest", nlohmann::ordered_json::array()},
                               {"flakiest", nlohmann::ordered_json::array()}};
    for (const auto& test : slowest) out["slowest"].push_back(stats_json(test));
    for (const auto& test : flakiest) out["flakiest"].push_back(stats_json(test));
    fmt::print("{}\n", out.dump(2));
    return to_int(ExitCode::success);
  }
  fmt::print("ranktest history: {} runs, {} tests in {}\n", db->run_count(), stats.size(),
             path->string());
  fmt::print("slowest (median of the last {} runs of each):\n", query.window);
  for (const auto& test : slowest)
    fmt::print("  {:>10}  longest {:>10}  {}\n", seconds(test.median), seconds(test.longest),
               text::terminal_safe(test.test_id));
  if (flakiest.empty()) {
    fmt::print("flakiest: none: no test passed on a retry or changed between passing and "
               "failing\n");
  } else {
    fmt::print("flakiest (passed on a retry; flips between pass and fail; failed, of runs):\n");
    for (const auto& test : flakiest)
      fmt::print("  flaky {:>3}  flips {:>3}  failed {:>3}/{:<3}  {}\n", test.flaky, test.flips,
                 test.failed, test.runs, text::terminal_safe(test.test_id));
  }
  return to_int(ExitCode::success);
}

}  // namespace ranktest::app
