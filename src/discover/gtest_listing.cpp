#include "discover/gtest_listing.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "text/glob.h"
#include "text/sanitize.h"

namespace ranktest::discover {
namespace {

constexpr std::string_view kTypeParamMarker = "  # TypeParam = ";
constexpr std::string_view kValueParamMarker = "  # GetParam() = ";
constexpr std::string_view kGtestMainBanner = "Running main() from ";

bool matches_disabled_pattern(const std::string& name) {
  return text::glob_match("DISABLED_*", name) ||
         text::glob_match("*/DISABLED_*", name);
}

bool is_name(std::string_view name) {
  return !name.empty() && name.find_first_of(" \t") == std::string_view::npos;
}

// Splits "head<marker>tail" into head and tail; tail is empty without marker.
std::pair<std::string_view, std::string_view> split_comment(
    std::string_view line, std::string_view marker) {
  const auto at = line.find(marker);
  if (at == std::string_view::npos) return {line, {}};
  return {line.substr(0, at), line.substr(at + marker.size())};
}

Error unparsable(std::size_t line_number, std::string_view line,
                 std::string_view why) {
  return Error{fmt::format("line {} of the listing {}: \"{}\"", line_number,
                           why, text::terminal_safe(text::truncate_utf8(line, 200)))};
}

}  // namespace

bool ListedTest::disabled() const {
  return matches_disabled_pattern(suite) || matches_disabled_pattern(name);
}

Expected<std::vector<ListedTest>> parse_listing_text(std::string_view text) {
  std::vector<ListedTest> tests;
  std::string suite, type_param;
  std::size_t suite_line = 0, tests_in_suite = 0;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line_number == 1 && line.starts_with(kGtestMainBanner)) continue;

    if (line.starts_with("  ")) {
      if (suite.empty())
        return unparsable(line_number, line, "is a test outside any suite");
      auto [name, param] = split_comment(line.substr(2), kValueParamMarker);
      if (!is_name(name))
        return unparsable(line_number, line, "is not a test name");
      tests.push_back(ListedTest{suite, std::string(name), type_param,
                                 std::string(param), std::nullopt});
      ++tests_in_suite;
      continue;
    }
    if (!suite.empty() && tests_in_suite == 0)
      return unparsable(suite_line, suite + ".", "names a suite with no tests");
    auto [head, param] = split_comment(line, kTypeParamMarker);
    if (!head.ends_with('.') || !is_name(head.substr(0, head.size() - 1)))
      return unparsable(line_number, line,
                        "is neither \"Suite.\" nor an indented test name");
    suite = std::string(head.substr(0, head.size() - 1));
    type_param = std::string(param);
    suite_line = line_number;
    tests_in_suite = 0;
  }
  if (!suite.empty() && tests_in_suite == 0)
    return unparsable(suite_line, suite + ".", "names a suite with no tests");
  return tests;
}

std::string undo_gtest_byte_escapes(const std::string& text) {
  std::string bytes;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if ((lead == 0xC2 || lead == 0xC3) && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      bytes += static_cast<char>(((lead & 0x03) << 6) | (next & 0x3F));
      ++i;
    } else if (lead >= 0x80) {
      return text;  // a code point above U+00FF: not gtest's byte escapes
    } else {
      bytes += static_cast<char>(lead);
    }
  }
  return bytes;
}

Expected<std::vector<ListedTest>> parse_listing_json(std::string_view json) {
  // A pure-ASCII listing is gtest's byte-escaped JSON: names are its bytes.
  const bool escaped = std::all_of(json.begin(), json.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x80;
  });
  const auto bytes = [&](std::string text) {
    return escaped ? undo_gtest_byte_escapes(text) : text;
  };
  const auto document =
      nlohmann::json::parse(text::repair_utf8(json), nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return Error{"the JSON listing is not a JSON object"};
  const auto suites = document.find("testsuites");
  if (suites == document.end() || !suites->is_array())
    return Error{"the JSON listing has no \"testsuites\" array"};
  std::vector<ListedTest> tests;
  for (const auto& suite : *suites) {
    const auto suite_name = bytes(suite.value("name", std::string()));
    const auto members = suite.find("testsuite");
    if (suite_name.empty() || members == suite.end() || !members->is_array())
      return Error{"the JSON listing has a test suite without a name or tests"};
    for (const auto& test : *members) {
      ListedTest listed;
      listed.suite = suite_name;
      listed.name = bytes(test.value("name", std::string()));
      if (listed.name.empty())
        return Error{fmt::format("the JSON listing has a test without a name "
                                 "in suite {}", suite_name)};
      listed.type_param = bytes(test.value("type_param", std::string()));
      listed.value_param = bytes(test.value("value_param", std::string()));
      if (test.contains("file") && test["file"].is_string())
        listed.location = SourceLocation{bytes(test["file"].get<std::string>()),
                                         test.value("line", 0)};
      tests.push_back(std::move(listed));
    }
  }
  return tests;
}

}  // namespace ranktest::discover
