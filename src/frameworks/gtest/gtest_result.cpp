#include "frameworks/gtest/gtest_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "frameworks/gtest/gtest_invocation.h"
#include "process/exit_status.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

std::optional<std::string> string_field(const nlohmann::json& object,
                                        const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// Messages: gtest's byte escapes undone, then made valid UTF-8 for people.
std::string undo_byte_escapes(const std::string& text) {
  return text::repair_utf8(framework::undo_gtest_byte_escapes(text));
}

bool is_ascii(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

GtestVerdict verdict_of(const nlohmann::json& test, bool bytes_escaped) {
  GtestVerdict verdict;
  const auto status = string_field(test, "status").value_or("");
  const auto result = string_field(test, "result").value_or("");
  if (const auto failures = test.find("failures");
      failures != test.end() && failures->is_array()) {
    for (const auto& failure : *failures)
      if (auto text = string_field(failure, "failure"))
        verdict.failures.push_back(parse_gtest_failure(
            bytes_escaped ? undo_byte_escapes(*text) : *text));
  }
  // Newer gtest versions carry the skip message in the report.
  if (const auto skipped = test.find("skipped");
      skipped != test.end() && skipped->is_object())
    verdict.skip_message = string_field(*skipped, "message").value_or("");

  if (status == "NOTRUN" || result == "SUPPRESSED")
    verdict.status = GtestVerdict::Status::not_run;
  else if (!verdict.failures.empty())
    verdict.status = GtestVerdict::Status::failed;
  else if (result == "SKIPPED")
    verdict.status = GtestVerdict::Status::skipped;
  else
    verdict.status = GtestVerdict::Status::passed;
  return verdict;
}

// GoogleTest 1.12's JSON report puts its environment's failures after the
// last suite without a comma ("}    {"), which no JSON reader takes: a '}'
// followed, outside any string, by only spaces and a '{' gets its comma.
std::string with_missing_commas(const std::string& json) {
  std::string fixed;
  fixed.reserve(json.size() + 8);
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    fixed += c;
    if (in_string) {
      if (c == '\\') {
        if (i + 1 < json.size()) fixed += json[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c != '}') continue;
    const auto next = json.find_first_not_of(" \t\r\n", i + 1);
    if (next != std::string::npos && json[next] == '{') fixed += ',';
  }
  return fixed;
}

// Why a test fails for its binary's global test environment: where the
// printer wrote the environment's failures says whether its SetUp or its
// TearDown failed (after "Global test environment tear-down"); a fatal
// failure in SetUp makes gtest skip every test.
std::string environment_failure_reason(const GtestVerdict& verdict, std::string_view output) {
  using Status = GtestVerdict::Status;
  const auto teardown = output.rfind("[----------] Global test environment tear-down");
  bool in_teardown = false;
  if (teardown != std::string_view::npos)
    for (const auto& failure : verdict.environment_failures)
      if (failure.location &&
          output.find(fmt::format("{}:{}: Failure", failure.location->file, failure.location->line),
                      teardown) != std::string_view::npos)
        in_teardown = true;
  const std::string_view test = verdict.status == Status::failed    ? "failed too"
                                : verdict.status == Status::skipped ? "was skipped"
                                                                    : "passed";
  if (in_teardown)
    return fmt::format("gtest's global test environment failed in its TearDown (a "
                       "::testing::Environment's), after the test; the test itself {}",
                       test);
  if (verdict.status == Status::skipped)
    return "gtest's global test environment failed in its SetUp (a ::testing::Environment's), "
           "so gtest did not run the test";
  return fmt::format("gtest's global test environment failed outside the test (a "
                     "::testing::Environment's SetUp or TearDown); the test itself {}",
                     test);
}

}  // namespace

FailureMessage parse_gtest_failure(std::string_view failure) {
  FailureMessage message;
  const auto newline = failure.find('\n');
  const auto first = failure.substr(0, newline);
  const auto colon = first.rfind(':');
  int line = 0;
  if (colon != std::string_view::npos && colon > 0) {
    const auto digits = first.substr(colon + 1);
    const auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), line);
    if (ec == std::errc() && end == digits.data() + digits.size() && line > 0) {
      message.location =
          SourceLocation{std::string(first.substr(0, colon)), line};
      message.text = newline == std::string_view::npos
                         ? std::string()
                         : std::string(failure.substr(newline + 1));
      return message;
    }
  }
  message.text = std::string(failure);
  return message;
}

std::optional<GtestVerdict> read_gtest_verdict(std::string_view json,
                                               const std::string& test_name) {
  // gtest writes bytes above 0x7F as \u00XX escapes, but be safe with
  // reports from other writers: repair first, never throw.
  auto document = nlohmann::json::parse(text::repair_utf8(json), nullptr, false);
  if (document.is_discarded())
    document = nlohmann::json::parse(with_missing_commas(text::repair_utf8(json)), nullptr, false);
  if (document.is_discarded() || !document.is_object()) return std::nullopt;
  const auto suites = document.find("testsuites");
  if (suites == document.end() || !suites->is_array()) return std::nullopt;
  const bool escaped = is_ascii(json);
  std::vector<FailureMessage> environment;
  for (const auto& suite : *suites)
    if (string_field(suite, "name") == "NonTestSuiteFailure")
      if (const auto tests = suite.find("testsuite"); tests != suite.end() && tests->is_array())
        for (const auto& test : *tests) {
          auto verdict = verdict_of(test, escaped);
          environment.insert(environment.end(), verdict.failures.begin(), verdict.failures.end());
        }
  for (const auto& suite : *suites) {
    const auto suite_name = string_field(suite, "name");
    const auto tests = suite.find("testsuite");
    if (!suite_name || tests == suite.end() || !tests->is_array()) continue;
    for (const auto& test : *tests) {
      const auto name = string_field(test, "name");
      if (!name) continue;
      // Names compare as bytes: undo the escapes of a byte-escaped report.
      const auto full = escaped ? framework::undo_gtest_byte_escapes(*suite_name + "." + *name)
                                : *suite_name + "." + *name;
      if (full != test_name) continue;
      auto verdict = verdict_of(test, escaped);
      verdict.environment_failures = std::move(environment);
      return verdict;
    }
  }
  GtestVerdict absent;
  absent.status = GtestVerdict::Status::not_in_report;
  absent.environment_failures = std::move(environment);
  return absent;
}

std::string find_skip_message(std::string_view output) {
  const auto marker = output.rfind(": Skipped\n");
  if (marker == std::string_view::npos) return {};
  auto rest = output.substr(marker + std::string_view(": Skipped\n").size());
  const auto end = rest.find("[  SKIPPED ]");
  rest = rest.substr(0, end);
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r'))
    rest.remove_suffix(1);
  return std::string(rest);
}

std::string gtest_test_output(std::string_view output,
                              const std::string& test_name,
                              const std::vector<FailureMessage>& failures) {
  const std::string run_line = "[ RUN      ] " + test_name + "\n";
  const auto start = output.rfind(run_line);
  if (start == std::string_view::npos) return std::string(output);
  std::string_view body = output.substr(start + run_line.size());
  for (const std::string_view marker : {"[       OK ] ", "[  FAILED  ] ", "[  SKIPPED ] "}) {
    const auto end = body.find(std::string(marker) + test_name);
    if (end != std::string_view::npos) body = body.substr(0, end);
  }
  // Drop each "file:line: Failure" block: the failure list shows it already.
  std::string kept;
  std::size_t skip_lines = 0;
  while (!body.empty()) {
    const auto newline = body.find('\n');
    const auto line = body.substr(0, newline);
    body.remove_prefix(newline == std::string_view::npos ? body.size() : newline + 1);
    if (skip_lines > 0) {
      --skip_lines;
      continue;
    }
    bool failure_header = false;
    for (const auto& failure : failures) {
      if (!failure.location) continue;
      const auto header = fmt::format("{}:{}: Failure", failure.location->file,
                                      failure.location->line);
      if (line == header) {
        failure_header = true;
        skip_lines = static_cast<std::size_t>(
            std::count(failure.text.begin(), failure.text.end(), '\n') + 1);
        break;
      }
    }
    if (failure_header) continue;
    kept.append(line);
    kept += '\n';
  }
  return kept;
}

TestResult classify_gtest_test(const ProcessEnd& end,
                               const std::optional<GtestVerdict>& verdict,
                               std::string_view output_tail) {
  using Status = GtestVerdict::Status;
  if (auto stopped = classify_stopped_process(end)) {
    if (verdict) stopped->failures = verdict->failures;
    return *stopped;
  }
  TestResult result;
  result.exit = end.exit;
  if (verdict) result.failures = verdict->failures;
  const ProcessExit& exit = *end.exit;
  if (exit.signaled) {
    result.outcome = Outcome::crashed;
    result.reason = process::describe(exit);
    return result;
  }
  if (!verdict) {
    result.outcome = Outcome::failed;
    result.reason = fmt::format(
        "{} before gtest wrote its result (did the test call exit()?)",
        process::describe(exit));
    return result;
  }
  if (!verdict->environment_failures.empty()) {
    // The binary alone fails for it too (exit code 1), whatever its tests did.
    result.outcome = Outcome::failed;
    result.failures = verdict->environment_failures;
    result.failures.insert(result.failures.end(), verdict->failures.begin(),
                           verdict->failures.end());
    result.reason = environment_failure_reason(*verdict, output_tail);
    return result;
  }
  switch (verdict->status) {
    case Status::not_in_report:
      result.outcome = Outcome::error;
      result.reason = fmt::format(
          "gtest wrote its report without the test ({}): the binary's main() did not run it "
          "(does a custom main() set its own --gtest_filter?)",
          process::describe(exit));
      return result;
    case Status::not_run:
      result.outcome = Outcome::error;
      result.reason = fmt::format("gtest did not run the test ({})",
                                  process::describe(exit));
      return result;
    case Status::failed:
      result.outcome = Outcome::failed;
      if (exit.code != 1) result.reason = process::describe(exit);
      return result;
    case Status::skipped:
      if (exit.code != 0) {
        result.outcome = Outcome::failed;
        result.reason = fmt::format("{} after gtest reported the test skipped",
                                    process::describe(exit));
        return result;
      }
      result.outcome = Outcome::skipped;
      result.reason = verdict->skip_message.empty()
                          ? find_skip_message(output_tail)
                          : verdict->skip_message;
      return result;
    case Status::passed:
      if (exit.code != 0) {
        result.outcome = Outcome::failed;
        result.reason = fmt::format(
            "{} although gtest reported success", process::describe(exit));
        return result;
      }
      result.outcome = Outcome::passed;
      return result;
  }
  return result;
}

std::optional<bool> exit_agrees_with_report(const ProcessExit& exit,
                                            const std::optional<GtestVerdict>& verdict) {
  if (!verdict || verdict->status == GtestVerdict::Status::not_run ||
      verdict->status == GtestVerdict::Status::not_in_report)
    return std::nullopt;
  if (exit.signaled) return false;
  const int expected = verdict->status == GtestVerdict::Status::failed ? 1 : 0;
  return exit.code == expected;
}

}  // namespace ranktest::execute
