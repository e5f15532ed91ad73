#include "frameworks/gtest/gtest_stream.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

// GoogleTest's UrlEncode writes '%', '=', '&' and '\n' as %XX.
std::string url_decode(std::string_view text) {
  std::string decoded;
  decoded.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int value = 0;
      const auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (ec == std::errc() && end == text.data() + i + 3) {
        decoded += static_cast<char>(value);
        i += 2;
        continue;
      }
    }
    decoded += text[i];
  }
  return decoded;
}

template <typename Number>
Number number(std::string_view text) {
  Number value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

}  // namespace

GtestStreamEvent parse_gtest_stream_line(std::string_view line) {
  GtestStreamEvent event;
  std::string_view kind;
  // A test's or suite's name is sent as it is (never encoded), so it is
  // the rest of the line after "name=", '&' and '=' included.
  while (!line.empty()) {
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) break;
    const auto key = line.substr(0, equals);
    auto rest = line.substr(equals + 1);
    std::string_view value;
    if (key == "name") {
      value = rest;
      rest = {};
    } else {
      const auto amp = rest.find('&');
      value = rest.substr(0, amp);
      rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    }
    if (key == "event") kind = value;
    else if (key == "name") event.name = std::string(value);
    else if (key == "file") event.file = url_decode(value);
    else if (key == "line") event.line = number<int>(value);
    else if (key == "message") event.message = url_decode(value);
    else if (key == "passed") event.passed = value == "1";
    else if (key == "elapsed_time") event.elapsed_ms = number<std::int64_t>(value);
    line = rest;
  }
  using Kind = GtestStreamEvent::Kind;
  event.kind = kind == "TestCaseStart"    ? Kind::suite_start
               : kind == "TestStart"      ? Kind::test_start
               : kind == "TestPartResult" ? Kind::part_result
               : kind == "TestEnd"        ? Kind::test_end
                                          : Kind::other;
  return event;
}

std::vector<GtestStreamEvent> GtestStreamReader::feed(std::string_view bytes) {
  buffered_.append(bytes);
  std::vector<GtestStreamEvent> events;
  std::size_t from = 0;
  for (;;) {
    const auto newline = buffered_.find('\n', from);
    if (newline == std::string::npos) break;
    std::string_view line(buffered_.data() + from, newline - from);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    events.push_back(parse_gtest_stream_line(line));
    from = newline + 1;
  }
  buffered_.erase(0, from);
  // A line no end ever comes for is not kept without bound.
  if (buffered_.size() > (1u << 20)) buffered_.clear();
  return events;
}

namespace {

// Where GoogleTest's printer says a part happened (FormatFileLocation):
// "file:line:", "file:" without a line, "unknown file:" without a file.
std::string printed_location(const GtestStreamedTest::Part& part) {
  const std::string file = part.file.empty() ? "unknown file" : part.file;
  return part.line < 0 ? file + ":" : file + ":" + std::to_string(part.line) + ":";
}

// A string as GoogleTest's JSON report writes it: every byte above 0x7F
// its own code point (U+0080..U+00FF), so a name or message that is not
// UTF-8 survives, and the reader undoes it as it does gtest's.
std::string as_gtest_writes(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size());
  for (const unsigned char c : bytes) {
    if (c < 0x80) {
      text += static_cast<char>(c);
    } else {
      text += static_cast<char>(0xC0 | (c >> 6));
      text += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return text;
}

// gtest's own form in its JSON report: "file:line\nmessage".
nlohmann::json failures_of(const std::vector<GtestStreamedTest::Part>& parts) {
  auto failures = nlohmann::json::array();
  for (const auto& part : parts) {
    if (part.kind != GtestStreamedTest::Part::Kind::failure) continue;
    const std::string where =
        part.file.empty() ? "unknown file"
                          : part.line > 0 ? part.file + ":" + std::to_string(part.line) : part.file;
    failures.push_back({{"failure", as_gtest_writes(where + "\n" + part.message)}, {"type", ""}});
  }
  return failures;
}

}  // namespace

void classify_gtest_parts(GtestStreamedTest& test, std::string_view log) {
  using Kind = GtestStreamedTest::Part::Kind;
  if (test.passed) {
    for (auto& part : test.parts) part.kind = Kind::success;
    return;
  }
  std::vector<Kind> kinds;
  bool printed_any = false;
  std::size_t cursor = 0;
  for (const auto& part : test.parts) {
    const auto where = printed_location(part);
    const auto failure = log.find(where + " Failure\n" + part.message, cursor);
    const auto skip = log.find(where + " Skipped\n" + part.message, cursor);
    if (failure == std::string_view::npos && skip == std::string_view::npos) {
      kinds.push_back(Kind::success);
      continue;
    }
    printed_any = true;
    const bool is_skip = skip < failure;
    kinds.push_back(is_skip ? Kind::skip : Kind::failure);
    cursor = std::min(skip, failure) + where.size();
  }
  if (!printed_any) return;
  for (std::size_t i = 0; i < kinds.size(); ++i) test.parts[i].kind = kinds[i];
}

bool has_part(const GtestStreamedTest& test, GtestStreamedTest::Part::Kind kind) {
  return std::any_of(test.parts.begin(), test.parts.end(),
                     [&](const auto& part) { return part.kind == kind; });
}

std::string gtest_report_for(const GtestStreamedTest& test, bool skipped,
                             const std::vector<GtestStreamedTest::Part>& environment) {
  using Kind = GtestStreamedTest::Part::Kind;
  const std::string& suite = test.suite;
  nlohmann::json entry{{"name", as_gtest_writes(test.test)},
                       {"status", "RUN"},
                       {"result", skipped ? "SKIPPED" : "COMPLETED"},
                       {"time", std::to_string(test.elapsed_ms / 1000.0) + "s"}};
  if (skipped) {
    std::string message;
    for (const auto& part : test.parts)
      if (part.kind == Kind::skip || (part.kind == Kind::failure && message.empty()))
        message = part.message;
    entry["skipped"] = {{"message", as_gtest_writes(message)}};
  } else if (auto failures = failures_of(test.parts); !failures.empty()) {
    entry["failures"] = std::move(failures);
  }
  auto suites = nlohmann::json::array({{{"name", as_gtest_writes(suite)}, {"testsuite", {entry}}}});
  if (auto failures = failures_of(environment); !failures.empty())
    suites.push_back({{"name", "NonTestSuiteFailure"},
                      {"testsuite", {{{"name", ""},
                                      {"status", "RUN"},
                                      {"result", "COMPLETED"},
                                      {"failures", std::move(failures)}}}}});
  nlohmann::json report{{"testsuites", std::move(suites)}};
  // Names and messages are bytes; the report is read as gtest's is.
  // ASCII, as gtest's own: the reader then undoes the byte escapes.
  return report.dump(-1, ' ', true);
}

std::string gtest_run_line(const std::string& name) { return "[ RUN      ] " + name + "\n"; }

bool gtest_log_says_skipping(std::string_view log) {
  return log.find(": Skipped\n") != std::string_view::npos &&
         log.find(": Failure\n") == std::string_view::npos;
}

bool gtest_log_says_skipped(std::string_view log, const std::string& name) {
  const std::string line = "[  SKIPPED ] " + name + " (";
  return log.find(line) != std::string_view::npos;
}

}  // namespace ranktest::execute
