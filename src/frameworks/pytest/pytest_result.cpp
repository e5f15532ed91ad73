#include "frameworks/pytest/pytest_result.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "process/exit_status.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

using Json = nlohmann::json;

// A pytest failure: where it happened and the traceback's last lines (the
// "E   ..." lines and the code around them are at the end).
FailureMessage failure_of(const Json& phase) {
  FailureMessage failure;
  if (phase.contains("crash") && phase["crash"].is_object()) {
    const auto& crash = phase["crash"];
    if (crash.contains("path") && crash["path"].is_string() && crash.contains("line") &&
        crash["line"].is_number_integer())
      failure.location = SourceLocation{crash["path"].get<std::string>(), crash["line"].get<int>()};
  }
  const auto longrepr = phase.value("longrepr", Json()).is_string()
                            ? phase["longrepr"].get<std::string>()
                            : std::string("(pytest gave no details)");
  std::string text;
  for (const auto& line : text::last_lines(longrepr, 40)) text += std::string(line) + "\n";
  while (!text.empty() && text.back() == '\n') text.pop_back();
  failure.text = text;
  return failure;
}

// "Skipped: no GPU" -> "no GPU"
std::string skip_reason(const Json& phase) {
  auto text = phase.value("longrepr", Json()).is_string() ? phase["longrepr"].get<std::string>()
                                                         : std::string();
  if (text.rfind("Skipped: ", 0) == 0) text = text.substr(9);
  return text;
}

// pytest.xfail("why") leaves "reason: why" in wasxfail; the mark leaves "why".
std::string xfail_reason(const Json& phase) {
  auto text = phase["wasxfail"].get<std::string>();
  if (text.rfind("reason: ", 0) == 0) text = text.substr(8);
  return text;
}

std::string exit_code_name(int code) {
  switch (code) {
    case 2: return "exit code 2: pytest was interrupted";
    case 3: return "exit code 3: pytest's internal error";
    case 4: return "exit code 4: pytest's usage error";
    case 5: return "exit code 5: pytest found no such test";
    default: return fmt::format("exit code {}", code);
  }
}

}  // namespace

// The plugin appends one line per phase: {"version": 2, "nodeid": ...,
// "pid": ..., "phase": {...}}. A line that does not parse (torn by a kill
// mid-write) or is about another test is skipped.
std::optional<PytestVerdict> read_pytest_verdict(std::string_view text, const std::string& nodeid) {
  const auto wanted = text::repair_utf8(nodeid);
  std::vector<Json> phases;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto json = Json::parse(text::repair_utf8(line), nullptr, false);
    if (json.is_discarded() || !json.is_object() || !json.contains("phase") ||
        !json["phase"].is_object() || !json.contains("nodeid") || !json["nodeid"].is_string() ||
        text::repair_utf8(json["nodeid"].get<std::string>()) != wanted)
      continue;
    phases.push_back(std::move(json["phase"]));
  }
  if (phases.empty()) return std::nullopt;
  PytestVerdict verdict;
  bool call_seen = false, teardown_seen = false;
  for (const auto& phase : phases) {
    const auto when = phase.value("when", std::string());
    const auto outcome = phase.value("outcome", std::string());
    const bool xfail = phase.contains("wasxfail") && phase["wasxfail"].is_string();
    if (outcome == "failed") {
      verdict.failures.push_back(failure_of(phase));
      if (phase.contains("rerun") && phase["rerun"] == false) verdict.retry_refused = true;
      if (!verdict.failed_at && phase.contains("time") && phase["time"].is_number())
        verdict.failed_at = phase["time"].get<double>();
      if (when == "setup") verdict.status = PytestVerdict::Status::setup_error;
      else if (when == "call") verdict.status = PytestVerdict::Status::failed;
      else if (verdict.status == PytestVerdict::Status::passed ||
               verdict.status == PytestVerdict::Status::incomplete)
        verdict.status = PytestVerdict::Status::teardown_error;
    } else if (outcome == "skipped" && (when == "setup" || when == "call")) {
      verdict.status = xfail ? PytestVerdict::Status::xfailed : PytestVerdict::Status::skipped;
      verdict.reason = xfail ? xfail_reason(phase) : skip_reason(phase);
    } else if (outcome == "passed" && when == "call") {
      verdict.status = xfail ? PytestVerdict::Status::xpassed : PytestVerdict::Status::passed;
      if (xfail) verdict.reason = xfail_reason(phase);
    }
    call_seen |= when == "call" || (when == "setup" && outcome != "passed");
    teardown_seen |= when == "teardown";
  }
  // Setup passed and nothing after it: the process ended mid-test.
  if (!call_seen) verdict.status = PytestVerdict::Status::incomplete;
  if (!teardown_seen && verdict.status == PytestVerdict::Status::passed)
    verdict.status = PytestVerdict::Status::incomplete;
  return verdict;
}

TestResult classify_pytest_test(const ProcessEnd& end,
                                const std::optional<PytestVerdict>& verdict) {
  using Status = PytestVerdict::Status;
  if (auto stopped = classify_stopped_process(end)) {
    if (verdict) stopped->failures = verdict->failures;
    return *stopped;
  }
  TestResult result;
  result.exit = end.exit;
  if (verdict) {
    result.failures = verdict->failures;
    result.retry_refused = verdict->retry_refused;
  }
  const ProcessExit& exit = *end.exit;
  const bool reported = verdict && verdict->status != Status::incomplete;
  if (exit.signaled) {
    result.outcome = Outcome::crashed;
    result.reason = reported && (verdict->status == Status::passed)
                        ? fmt::format("{} after pytest reported the test passed (at interpreter exit)",
                                      process::describe(exit))
                        : process::describe(exit);
    return result;
  }
  if (!reported) {
    // pytest's own codes mean pytest's own ending only before the test
    // started: once its setup was reported, an exit code 3 is the test's
    // os._exit(3), not "pytest's internal error".
    const bool pytests_code = exit.code >= 2 && exit.code <= 5 && !verdict;
    result.outcome = pytests_code ? Outcome::error : Outcome::failed;
    result.reason = pytests_code
                        ? fmt::format("pytest did not run the test ({}, or a fixture's or plugin's "
                                      "os._exit({}) before the test started)",
                                      exit_code_name(exit.code), exit.code)
                        : fmt::format("{} before pytest reported a result (did the test call "
                                      "os._exit() or sys.exit()?)",
                                      process::describe(exit));
    return result;
  }
  switch (verdict->status) {
    case Status::failed:
      result.outcome = Outcome::failed;
      return result;
    case Status::setup_error:
      result.outcome = Outcome::failed;
      result.reason = "error in setup (a fixture failed)";
      return result;
    case Status::teardown_error:
      result.outcome = Outcome::failed;
      result.reason = "error in teardown";
      return result;
    case Status::skipped:
    case Status::xfailed:
    case Status::passed:
    case Status::xpassed:
      if (exit.code != 0) {
        result.outcome = Outcome::failed;
        // pytest had reported the test; the code was set after that, at
        // interpreter exit (an atexit handler, a plugin's session finish),
        // so pytest's own meaning of the code would mislead.
        result.reason = fmt::format("exit code {} at interpreter exit, although pytest reported "
                                    "the test {} (an atexit handler or a plugin's session-finish "
                                    "hook set it)",
                                    exit.code,
                                    verdict->status == Status::skipped ? "skipped" : "passed");
        return result;
      }
      result.outcome = verdict->status == Status::skipped   ? Outcome::skipped
                       : verdict->status == Status::xfailed ? Outcome::xfailed
                       : verdict->status == Status::xpassed ? Outcome::xpassed
                                                            : Outcome::passed;
      // "xfail: <why>", or "xfail" alone for a marker without a reason
      // (not "xfail: ", which every report would print with a dangling colon).
      if (verdict->status == Status::xfailed || verdict->status == Status::xpassed) {
        const std::string word = verdict->status == Status::xfailed ? "xfail" : "xpassed";
        result.reason = verdict->reason.empty() ? word : word + ": " + verdict->reason;
      } else {
        result.reason = verdict->reason;
      }
      // An xfail's traceback is expected; do not show it as a failure.
      result.failures.clear();
      return result;
    case Status::incomplete:
      break;
  }
  return result;
}

}  // namespace ranktest::execute
