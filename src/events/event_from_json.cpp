#include <ctime>
#include <iomanip>
#include <sstream>

#include "events/event_json.h"

namespace ranktest::events {
namespace {

using Json = nlohmann::json;

std::string text(const Json& json, const char* key) {
  const auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long number(const Json& json, const char* key, long fallback = 0) {
  const auto it = json.find(key);
  return it != json.end() && it->is_number_integer() ? it->get<long>() : fallback;
}

// "2026-12-02T14:03:12.345Z"
TimePoint parse_time(const std::string& value) {
  std::tm tm{};
  std::istringstream in(value);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return {};
  int ms = 0;
  if (in.peek() == '.') {
    in.get();
    in >> ms;
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm)) + std::chrono::milliseconds(ms);
}

std::optional<SourceLocation> location_of(const Json& json) {
  if (!json.is_object()) return std::nullopt;
  return SourceLocation{text(json, "file"), static_cast<int>(number(json, "line"))};
}

TestInfo test_of(const Json& json) {
  if (!json.is_object()) return {};
  return TestInfo{text(json, "id"), text(json, "name"), text(json, "source"),
                  json.contains("location") ? location_of(json["location"]) : std::nullopt,
                  text(json, "kind")};
}

Placement placement_of(const Json& json) {
  Placement placement;
  if (!json.is_object()) return placement;
  if (json.contains("slots") && json["slots"].is_array())
    for (const auto& slot : json["slots"])
      if (slot.is_number_integer()) placement.slots.push_back(slot.get<int>());
  if (json.contains("devices") && json["devices"].is_object())
    for (const auto& [kind, ids] : json["devices"].items())
      if (ids.is_array())
        for (const auto& id : ids)
          if (id.is_string()) placement.devices[kind].push_back(id.get<std::string>());
  placement.port = static_cast<int>(number(json, "port"));
  if (json.contains("nodes") && json["nodes"].is_array())
    for (const auto& node : json["nodes"])
      if (node.is_string()) placement.nodes.push_back(node.get<std::string>());
  return placement;
}

std::optional<ProcessExit> exit_of(const Json& json) {
  if (!json.is_object()) return std::nullopt;
  ProcessExit exit;
  exit.signaled = json.contains("signal") && json["signal"].is_number_integer();
  exit.signal = static_cast<int>(number(json, "signal"));
  exit.code = static_cast<int>(number(json, "code"));
  exit.core_dumped = json.value("core_dumped", false);
  return exit;
}

TestResult result_of(const Json& json) {
  TestResult result;
  if (!json.is_object()) return result;
  result.outcome = outcome_from_string(text(json, "outcome")).value_or(Outcome::error);
  result.reason = text(json, "reason");
  if (json.contains("failures") && json["failures"].is_array())
    for (const auto& failure : json["failures"])
      if (failure.is_object())
        result.failures.push_back(
            {failure.contains("location") ? location_of(failure["location"]) : std::nullopt,
             text(failure, "message")});
  if (json.contains("exit")) result.exit = exit_of(json["exit"]);
  result.duration = std::chrono::milliseconds(number(json, "duration_ms"));
  result.log_path = text(json, "log");
  result.output_excerpt = text(json, "output_excerpt");
  result.root_cause_rank = static_cast<int>(number(json, "root_cause_rank", -1));
  if (json.contains("ranks") && json["ranks"].is_array())
    for (const auto& rank : json["ranks"]) {
      if (!rank.is_object()) continue;
      RankResult entry;
      entry.rank = static_cast<int>(number(rank, "rank"));
      entry.outcome = outcome_from_string(text(rank, "outcome")).value_or(Outcome::error);
      entry.reason = text(rank, "reason");
      if (rank.contains("exit")) entry.exit = exit_of(rank["exit"]);
      entry.duration = std::chrono::milliseconds(number(rank, "duration_ms"));
      entry.log_path = text(rank, "log");
      result.ranks.push_back(std::move(entry));
    }
  if (json.contains("suspicious") && json["suspicious"].is_array())
    for (const auto& line : json["suspicious"])
      if (line.is_string()) result.suspicious.push_back(line.get<std::string>());
  if (json.contains("stacks") && json["stacks"].is_array())
    for (const auto& stack : json["stacks"])
      if (stack.is_object())
        result.stacks.push_back(StackDump{static_cast<int>(number(stack, "pid")),
                                          static_cast<int>(number(stack, "rank", -1)),
                                          text(stack, "file"), text(stack, "summary")});
  if (json.contains("hints") && json["hints"].is_array())
    for (const auto& hint : json["hints"])
      if (hint.is_object())
        result.hints.push_back(
            TestResult::Hint{text(hint, "match"), text(hint, "explanation"), text(hint, "fix")});
  if (json.contains("peak_memory_bytes") && json["peak_memory_bytes"].is_number_unsigned())
    result.peak_memory = json["peak_memory_bytes"].get<std::uint64_t>();
  if (json.contains("peak_processes") && json["peak_processes"].is_number_integer())
    result.peak_processes = json["peak_processes"].get<int>();
  return result;
}

}  // namespace

namespace {

Invocation invocation_of(const Json& json) {
  Invocation invocation;
  if (!json.is_object()) return invocation;
  const auto text_or_none = [&](const char* key) -> std::optional<std::string> {
    if (json.contains(key) && json[key].is_string()) return json[key].get<std::string>();
    return std::nullopt;
  };
  const auto number_or_none = [&](const char* key) -> std::optional<std::int64_t> {
    if (json.contains(key) && json[key].is_number_integer()) return json[key].get<std::int64_t>();
    return std::nullopt;
  };
  invocation.config_file = text_or_none("config_file");
  if (json.contains("paths") && json["paths"].is_array())
    for (const auto& path : json["paths"])
      if (path.is_string()) invocation.paths.push_back(path.get<std::string>());
  invocation.working_directory = text(json, "working_directory");
  invocation.state_dir = text_or_none("state_dir");
  if (const auto jobs = number_or_none("jobs")) invocation.jobs = static_cast<int>(*jobs);
  invocation.timeout_ms = number_or_none("timeout_ms");
  if (const auto retries = number_or_none("retries")) invocation.retries = static_cast<int>(*retries);
  invocation.fail_fast = json.value("fail_fast", false);
  invocation.audit_children = json.value("audit_children", false);
  invocation.recollect = json.value("recollect", false);
  invocation.allocation = text_or_none("allocation");
  invocation.markers = text_or_none("markers");
  invocation.keyword = text_or_none("keyword");
  return invocation;
}

}  // namespace

std::optional<Event> event_from_json(const nlohmann::json& json) {
  if (!json.is_object()) return std::nullopt;
  const std::string kind = text(json, "event");
  const std::string run_id = text(json, "run_id");
  const TimePoint time = parse_time(text(json, "time"));
  if (kind == "run-started") {
    RunStarted started{run_id,
                      time,
                      text(json, "run_dir"),
                      static_cast<std::size_t>(number(json, "tests_to_run")),
                      static_cast<std::size_t>(number(json, "tests_to_skip")),
                      static_cast<std::size_t>(number(json, "filtered_out")),
                      static_cast<int>(number(json, "jobs", 1)),
                      text(json, "isolation"),
                      [&] {
                        std::vector<TestInfo> planned;
                        if (json.contains("planned") && json["planned"].is_array())
                          for (const auto& test : json["planned"]) planned.push_back(test_of(test));
                        return planned;
                      }(),
                      text(json, "flaky") == "fail",
                      [&] {
                        std::vector<std::string> ids;
                        if (json.contains("network_isolated") && json["network_isolated"].is_array())
                          for (const auto& id : json["network_isolated"])
                            if (id.is_string()) ids.push_back(id.get<std::string>());
                        return ids;
                      }(),
                      static_cast<std::size_t>(number(json, "in_workers")),
                      text(json, "allocation")};
    started.invocation = invocation_of(json.value("invocation", Json::object()));
    return started;
  }
  if (kind == "test-started") {
    return TestStarted{run_id, time, test_of(json.value("test", Json())),
                       static_cast<int>(number(json, "attempt", 1)),
                       placement_of(json.value("placement", Json()))};
  }
  if (kind == "run-warning") return RunWarning{run_id, time, text(json, "message")};
  if (kind == "test-slow") {
    return TestSlow{run_id, time, test_of(json.value("test", Json())),
                    static_cast<int>(number(json, "attempt", 1)),
                    std::chrono::milliseconds(number(json, "elapsed_ms"))};
  }
  if (kind == "test-finished") {
    TestFinished finished{run_id, time, test_of(json.value("test", Json())),
                          static_cast<int>(number(json, "attempt", 1)),
                          placement_of(json.value("placement", Json())),
                          result_of(json.value("result", Json())),
                          json.value("retrying", false), json.value("fork_only", false),
                          json.value("forked", false), text(json, "retry_note"),
                          static_cast<std::size_t>(number(json, "ran_before"))};
    if (const auto quarantine = json.value("quarantined", Json()); quarantine.is_object())
      finished.quarantined =
          Quarantine{text(quarantine, "reason"), text(quarantine, "until"), text(quarantine, "place")};
    return finished;
  }
  if (kind == "run-finished") {
    RunFinished finished{run_id, time, {}, std::chrono::milliseconds(number(json, "duration_ms")),
                         text(json, "cancel_reason"), static_cast<int>(number(json, "exit_code"))};
    const Json counts = json.value("counts", Json::object());
    finished.counts.passed = static_cast<std::size_t>(number(counts, "passed"));
    finished.counts.failed = static_cast<std::size_t>(number(counts, "failed"));
    finished.counts.skipped = static_cast<std::size_t>(number(counts, "skipped"));
    finished.counts.not_run = static_cast<std::size_t>(number(counts, "not_run"));
    finished.counts.interrupted = static_cast<std::size_t>(number(counts, "interrupted"));
    finished.counts.flaky = static_cast<std::size_t>(number(counts, "flaky"));
    finished.counts.fork_only = static_cast<std::size_t>(number(counts, "fork_only"));
    finished.counts.quarantined = static_cast<std::size_t>(number(counts, "quarantined"));
    finished.runner_cpu = std::chrono::milliseconds(number(json, "runner_cpu_ms"));
    finished.runner_peak_memory = static_cast<std::uint64_t>(number(json, "runner_peak_memory_bytes"));
    return finished;
  }
  return std::nullopt;
}

}  // namespace ranktest::events
