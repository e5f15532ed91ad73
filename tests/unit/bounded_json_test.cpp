// Reading a test's JSON report bounded: each string and array cut, the
// result still the JSON it was, the cut said and where the whole is.
#include "text/bounded_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ranktest::text {
namespace {

const JsonBounds kSmall{.max_string_bytes = 8, .max_array_elements = 2};

TEST(BoundedJson, SmallDocumentsPassUnchanged) {
  const std::string json = R"({"a": [1, 2], "b": "short", "c": {"d": []}})";
  const auto bounded = bound_json(json, "/r.json", kSmall);
  EXPECT_EQ(bounded.text, json);
  EXPECT_EQ(bounded.strings_cut, 0u);
  EXPECT_EQ(bounded.elements_dropped, 0u);
}

TEST(BoundedJson, ALongStringIsCutAndSaysWhereTheWholeIs) {
  const auto bounded = bound_json(R"({"m": "0123456789abcdef", "k": 1})", "/run/\"x\".json", kSmall);
  const auto parsed = nlohmann::json::parse(bounded.text);
  EXPECT_EQ(parsed["m"], "01234567…[cut by ranktest; the whole is in /run/\"x\".json]");
  EXPECT_EQ(parsed["k"], 1);
  EXPECT_EQ(bounded.strings_cut, 1u);
}

TEST(BoundedJson, ACutNeverSplitsAnEscapeOrACharacter) {
  // Seven bytes, then an escape and a two-byte character at the limit.
  for (const std::string tail : {R"(\"\"\"\")", R"(\u00e9\u00e9\u00e9)", "ééééé"}) {
    const std::string json = "[\"1234567" + tail + "\"]";
    const auto bounded = bound_json(json, "f", kSmall);
    const auto parsed = nlohmann::json::parse(bounded.text, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << bounded.text;
    EXPECT_NE(parsed[0].get<std::string>().find("…[cut by ranktest"), std::string::npos);
  }
}

TEST(BoundedJson, AnArrayKeepsItsFirstEntriesAndCountsTheRest) {
  const auto bounded =
      bound_json(R"({"f": [{"x": [1, 2, 3]}, "]", {"y": "[,"}, 4, 5], "g": [6, 7, 8]})", "f", kSmall);
  const auto parsed = nlohmann::json::parse(bounded.text);
  EXPECT_EQ(parsed["f"].dump(), R"([{"x":[1,2]},"]"])");
  EXPECT_EQ(parsed["g"].dump(), "[6,7]");
  EXPECT_EQ(bounded.elements_dropped, 1u + 3u + 1u);
}

TEST(BoundedJson, AMissingFileReadsEmpty) {
  const auto bounded = read_json_bounded("/nonexistent/report.json");
  EXPECT_EQ(bounded.text, "");
  EXPECT_EQ(bounded.file_bytes, 0u);
}

}  // namespace
}  // namespace ranktest::text
