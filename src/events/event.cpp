#include "events/event.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "events/event_json.h"
#include "model/overloaded.h"
#include "text/sanitize.h"

namespace ranktest::events {

using OrderedJson = nlohmann::ordered_json;

void Counts::add(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed:
    case Outcome::xpassed: ++passed; break;
    case Outcome::skipped:
    case Outcome::xfailed: ++skipped; break;
    case Outcome::interrupted: ++interrupted; break;
    case Outcome::not_run: ++not_run; break;
    case Outcome::failed:
    case Outcome::crashed:
    case Outcome::timed_out:
    case Outcome::leaked:
    case Outcome::child_failed:
    case Outcome::error: ++failed; break;
  }
}

bool is_flaky(const TestFinished& event) {
  return !event.retrying && !event.fork_only && event.attempt > 1 &&
         event.result.outcome == Outcome::passed;
}

void Counts::add(const TestFinished& event, bool flaky_fails) {
  if (event.retrying) return;
  if (event.quarantined && !ended_cleanly(event.result.outcome) &&
      event.result.outcome != Outcome::interrupted) {
    ++quarantined;
    return;
  }
  if (event.fork_only) ++fork_only;
  if (is_flaky(event)) {
    ++flaky;
    ++(flaky_fails ? failed : passed);
    return;
  }
  add(event.result.outcome);
}

std::string format_time(TimePoint time) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      time.time_since_epoch()) % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z",
                     std::chrono::floor<std::chrono::seconds>(time), ms.count());
}

namespace {

std::string utf8(std::string_view bytes) { return text::repair_utf8(bytes); }

OrderedJson location_json(const std::optional<SourceLocation>& location) {
  if (!location) return nullptr;
  return {{"file", utf8(location->file)}, {"line", location->line}};
}

template <typename T>
OrderedJson or_null(const std::optional<T>& value) {
  if (!value) return nullptr;
  if constexpr (std::is_same_v<T, std::string>) return utf8(*value);
  else return *value;
}

OrderedJson invocation_json(const Invocation& invocation) {
  OrderedJson paths = OrderedJson::array();
  for (const auto& path : invocation.paths) paths.push_back(utf8(path));
  return {{"config_file", or_null(invocation.config_file)},
          {"paths", std::move(paths)},
          {"working_directory", utf8(invocation.working_directory)},
          {"state_dir", or_null(invocation.state_dir)},
          {"jobs", or_null(invocation.jobs)},
          {"timeout_ms", or_null(invocation.timeout_ms)},
          {"retries", or_null(invocation.retries)},
          {"fail_fast", invocation.fail_fast},
          {"audit_children", invocation.audit_children},
          {"recollect", invocation.recollect},
          {"allocation", or_null(invocation.allocation)},
          {"markers", or_null(invocation.markers)},
          {"keyword", or_null(invocation.keyword)}};
}

OrderedJson test_json(const TestInfo& test) {
  return {{"id", utf8(test.id)},
          {"name", utf8(test.name)},
          {"source", utf8(test.source)},
          {"location", location_json(test.location)},
          {"kind", test.kind}};
}

OrderedJson placement_json(const Placement& placement) {
  OrderedJson devices = OrderedJson::object();
  for (const auto& [kind, ids] : placement.devices) devices[kind] = ids;
  return {{"slots", placement.slots},
          {"devices", devices},
          {"port", placement.port ? OrderedJson(placement.port) : OrderedJson(nullptr)},
          {"nodes", placement.nodes}};
}

OrderedJson exit_json(const std::optional<ProcessExit>& exit) {
  if (!exit) return nullptr;
  return {{"code", exit->signaled ? OrderedJson(nullptr) : OrderedJson(exit->code)},
          {"signal", exit->signaled ? OrderedJson(exit->signal) : OrderedJson(nullptr)},
          {"core_dumped", exit->core_dumped}};
}

OrderedJson result_json(const TestResult& result) {
  OrderedJson failures = OrderedJson::array();
  for (const auto& failure : result.failures)
    failures.push_back({{"location", location_json(failure.location)},
                        {"message", utf8(failure.text)}});
  OrderedJson ranks = OrderedJson::array();
  for (const auto& rank : result.ranks)
    ranks.push_back({{"rank", rank.rank},
                     {"outcome", to_string(rank.outcome)},
                     {"reason", utf8(rank.reason)},
                     {"exit", exit_json(rank.exit)},
                     {"duration_ms", rank.duration.count()},
                     {"log", rank.log_path.empty() ? OrderedJson(nullptr) : OrderedJson(utf8(rank.log_path))}});
  std::vector<std::string> suspicious;
  for (const auto& line : result.suspicious) suspicious.push_back(utf8(line));
  OrderedJson stacks = OrderedJson::array();
  for (const auto& stack : result.stacks)
    stacks.push_back({{"pid", stack.pid},
                      {"rank", stack.rank >= 0 ? OrderedJson(stack.rank) : OrderedJson(nullptr)},
                      {"file", utf8(stack.path)},
                      {"summary", utf8(stack.summary)}});
  return {{"outcome", to_string(result.outcome)},
          {"reason", utf8(result.reason)},
          {"failures", failures},
          {"exit", exit_json(result.exit)},
          {"duration_ms", result.duration.count()},
          {"output_excerpt", utf8(result.output_excerpt)},
          {"root_cause_rank", result.root_cause_rank >= 0 ? OrderedJson(result.root_cause_rank)
                                                          : OrderedJson(nullptr)},
          {"ranks", ranks},
          {"stacks", stacks},
          {"suspicious", result.suspicious.empty() ? OrderedJson::array() : OrderedJson(suspicious)},
          {"hints", [&] {
             OrderedJson hints = OrderedJson::array();
             for (const auto& hint : result.hints)
               hints.push_back({{"match", utf8(hint.match)},
                                {"explanation", utf8(hint.explanation)},
                                {"fix", utf8(hint.fix)}});
             return hints;
           }()},
          {"peak_memory_bytes", result.peak_memory ? OrderedJson(*result.peak_memory) : OrderedJson(nullptr)},
          {"peak_processes", result.peak_processes ? OrderedJson(*result.peak_processes) : OrderedJson(nullptr)},
          {"log", result.log_path.empty() ? OrderedJson(nullptr)
                                          : OrderedJson(utf8(result.log_path))}};
}

}  // namespace

std::string_view kind_name(const Event& event) {
  return std::visit(
      Overloaded{[](const RunStarted&) { return "run-started"; },
                 [](const RunWarning&) { return "run-warning"; },
                 [](const TestStarted&) { return "test-started"; },
                 [](const TestSlow&) { return "test-slow"; },
                 [](const TestFinished&) { return "test-finished"; },
                 [](const RunFinished&) { return "run-finished"; }},
      event);
}

OrderedJson to_json(const Event& event) {
  OrderedJson body = std::visit(
      Overloaded{
          [](const RunStarted& e) -> OrderedJson {
            return {{"run_id", e.run_id},
                    {"time", format_time(e.time)},
                    {"schema_version", kSchemaVersion},
                    {"ranktest_version", RANKTEST_VERSION},
                    {"run_dir", utf8(e.run_dir)},
                    {"tests_to_run", e.tests_to_run},
                    {"tests_to_skip", e.tests_to_skip},
                    {"filtered_out", e.filtered_out},
                    {"jobs", e.jobs},
                    {"isolation", utf8(e.isolation)},
                    {"flaky", e.flaky_fails ? "fail" : "pass"},
                    {"planned", [&] {
                       OrderedJson planned = OrderedJson::array();
                       for (const auto& test : e.planned) planned.push_back(test_json(test));
                       return planned;
                     }()},
                    {"network_isolated", [&] {
                       OrderedJson ids = OrderedJson::array();
                       for (const auto& id : e.network_isolated) ids.push_back(utf8(id));
                       return ids;
                     }()},
                    {"in_workers", e.in_workers},
                    {"allocation", utf8(e.allocation)},
                    {"invocation", invocation_json(e.invocation)}};
          },
          [](const RunWarning& e) -> OrderedJson {
            return {{"run_id", e.run_id}, {"time", format_time(e.time)},
                    {"message", utf8(e.message)}};
          },
          [](const TestStarted& e) -> OrderedJson {
            return {{"run_id", e.run_id},
                    {"time", format_time(e.time)},
                    {"test", test_json(e.test)},
                    {"attempt", e.attempt},
                    {"placement", placement_json(e.placement)}};
          },
          [](const TestSlow& e) -> OrderedJson {
            return {{"run_id", e.run_id},
                    {"time", format_time(e.time)},
                    {"test", test_json(e.test)},
                    {"attempt", e.attempt},
                    {"elapsed_ms", e.elapsed.count()}};
          },
          [](const TestFinished& e) -> OrderedJson {
            return {{"run_id", e.run_id},
                    {"time", format_time(e.time)},
                    {"test", test_json(e.test)},
                    {"attempt", e.attempt},
                    {"placement", placement_json(e.placement)},
                    {"retrying", e.retrying},
                    {"flaky", is_flaky(e)},
                    {"fork_only", e.fork_only},
                    {"forked", e.forked},
                    {"retry_note", utf8(e.retry_note)},
                    {"ran_before", e.ran_before},
                    {"quarantined", e.quarantined ? OrderedJson{{"reason", utf8(e.quarantined->reason)},
                                                                {"until", e.quarantined->until},
                                                                {"place", utf8(e.quarantined->place)}}
                                                  : OrderedJson(nullptr)},
                    {"result", result_json(e.result)}};
          },
          [](const RunFinished& e) -> OrderedJson {
            return {{"run_id", e.run_id},
                    {"time", format_time(e.time)},
                    {"counts",
                     {{"passed", e.counts.passed},
                      {"failed", e.counts.failed},
                      {"skipped", e.counts.skipped},
                      {"not_run", e.counts.not_run},
                      {"interrupted", e.counts.interrupted},
                      {"flaky", e.counts.flaky},
                      {"fork_only", e.counts.fork_only},
                      {"quarantined", e.counts.quarantined}}},
                    {"duration_ms", e.duration.count()},
                    {"cancel_reason", e.cancel_reason},
                    {"exit_code", e.exit_code},
                    {"runner_cpu_ms", e.runner_cpu.count()},
                    {"runner_peak_memory_bytes", e.runner_peak_memory}};
          }},
      event);
  OrderedJson json = {{"event", kind_name(event)}};
  json.update(body);
  return json;
}

}  // namespace ranktest::events
