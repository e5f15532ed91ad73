#include "frameworks/gtest/gtest_listing.h"
#include "frameworks/gtest/gtest_invocation.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

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

Expected<Done> read_listing_text(std::string_view text, const ListingSink& sink) {
  if (sink.expect) {
    std::size_t indented = text.starts_with("  ") ? 1 : 0;
    for (auto at = text.find("\n  "); at != std::string_view::npos; at = text.find("\n  ", at + 1))
      ++indented;
    sink.expect(indented);
  }
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
      sink.take(ListedTest{suite, std::string(name), type_param, std::string(param),
                           std::nullopt});
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
  return Done{};
}


namespace {

// Reads a JSON listing through `parse` (nlohmann's parse of the input, with
// the callback given). `escaped`: the listing is pure ASCII, gtest's
// byte-escaped JSON, whose names are its bytes.
template <class Parse>
Expected<Done> read_json_listing(Parse parse, bool escaped, const ListingSink& sink) {
  const auto bytes = [&](std::string text) {
    return escaped ? framework::undo_gtest_byte_escapes(text) : text;
  };
  // The document is never held whole (a binary may list 100,000 tests):
  // each test is taken when its object ends and then dropped from it.
  // Depths: the document 0, its keys and "testsuites" 1, a suite 2, its keys
  // and "testsuite" 3, a test 4.
  using Json = nlohmann::json;
  std::vector<ListedTest> suite_tests;  // of the suite being read
  std::string key_at_depth_1, key_at_depth_3;
  bool saw_suites = false, saw_members = false;
  std::optional<std::string> problem;
  const auto fail = [&](std::string why) {
    if (!problem) problem = std::move(why);
    return false;
  };
  const Json::parser_callback_t take = [&](int depth, Json::parse_event_t event,
                                           Json& parsed) {
    if (problem) return false;
    switch (event) {
      case Json::parse_event_t::key:
        if (depth == 1) key_at_depth_1 = parsed.get<std::string>();
        if (depth == 3) key_at_depth_3 = parsed.get<std::string>();
        return true;
      case Json::parse_event_t::value:
        // gtest says how many tests it lists before listing them.
        if (depth == 1 && key_at_depth_1 == "tests" && parsed.is_number_unsigned() &&
            sink.expect)
          sink.expect(parsed.get<std::size_t>());
        return true;
      case Json::parse_event_t::array_start:
        if (depth == 1 && key_at_depth_1 == "testsuites") saw_suites = true;
        if (depth == 3 && key_at_depth_3 == "testsuite") saw_members = true;
        return true;
      case Json::parse_event_t::object_start:
        if (depth == 2) {
          suite_tests.clear();
          saw_members = false;
          key_at_depth_3.clear();
        }
        return true;
      case Json::parse_event_t::object_end:
        if (depth == 4 && key_at_depth_3 == "testsuite") {
          ListedTest listed;
          listed.name = bytes(parsed.value("name", std::string()));
          listed.type_param = bytes(parsed.value("type_param", std::string()));
          listed.value_param = bytes(parsed.value("value_param", std::string()));
          if (parsed.contains("file") && parsed["file"].is_string())
            listed.location = SourceLocation{bytes(parsed["file"].get<std::string>()),
                                             parsed.value("line", 0)};
          suite_tests.push_back(std::move(listed));
          return false;
        }
        if (depth == 2 && key_at_depth_1 == "testsuites") {
          const auto suite_name = bytes(parsed.value("name", std::string()));
          if (suite_name.empty() || !saw_members)
            return fail("the JSON listing has a test suite without a name or tests");
          for (auto& listed : suite_tests) {
            if (listed.name.empty())
              return fail(fmt::format("the JSON listing has a test without a name in suite {}",
                                      suite_name));
            listed.suite = suite_name;
            sink.take(std::move(listed));
          }
          suite_tests.clear();
          return false;
        }
        return true;
      default:
        return true;
    }
  };
  const Json document = parse(take);
  if (problem) return Error{*problem};
  if (document.is_discarded() || !document.is_object())
    return Error{"the JSON listing is not a JSON object"};
  if (!saw_suites) return Error{"the JSON listing has no \"testsuites\" array"};
  return Done{};
}

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

}  // namespace

Expected<Done> read_listing_json(std::string_view json, const ListingSink& sink) {
  using Json = nlohmann::json;
  const bool escaped = is_ascii(json);
  return read_json_listing(
      [&](const Json::parser_callback_t& take) {
        // ASCII is valid UTF-8: only other listings need a repaired copy.
        return escaped ? Json::parse(json.begin(), json.end(), take, false)
                       : Json::parse(text::repair_utf8(json), take, false);
      },
      escaped, sink);
}

Expected<Done> read_listing_json_file(const std::filesystem::path& file, std::streamoff from,
                                      const ListingSink& sink) {
  using Json = nlohmann::json;
  std::ifstream in(file, std::ios::binary);
  const auto unreadable = [&] {
    return Error{fmt::format("the JSON listing {} cannot be read: {}", file.string(),
                             std::strerror(errno))};
  };
  if (!in || !in.seekg(from)) return unreadable();
  // gtest escapes every byte it writes beyond ASCII: such a listing is
  // read as it streams by. Any other is read whole, to repair its UTF-8.
  std::string chunk(1 << 16, '\0');
  bool escaped = true;
  while (escaped && in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    escaped = is_ascii(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return unreadable();
  in.clear();
  if (!in.seekg(from)) return unreadable();
  if (!escaped) {
    const std::string whole{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return read_listing_json(whole, sink);
  }
  return read_json_listing(
      [&](const Json::parser_callback_t& take) { return Json::parse(in, take, false); }, true,
      sink);
}

namespace {

Expected<std::vector<ListedTest>> collect(
    Expected<Done> (*read)(std::string_view, const ListingSink&), std::string_view listing) {
  std::vector<ListedTest> tests;
  auto read_all = read(listing, ListingSink{{}, [&](ListedTest&& test) {
                                              tests.push_back(std::move(test));
                                            }});
  if (!read_all) return read_all.error();
  return tests;
}

}  // namespace

Expected<std::vector<ListedTest>> parse_listing_text(std::string_view text) {
  return collect(read_listing_text, text);
}

Expected<std::vector<ListedTest>> parse_listing_json(std::string_view json) {
  return collect(read_listing_json, json);
}

}  // namespace ranktest::discover
