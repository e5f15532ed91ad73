// A function a reader can hold in mind: none in src/ is longer than 120
// lines. (The last ones longer were split on 2026-12-08: run_command into
// app/run_session.cpp's steps, main into a function per command,
// run_schedule into the Schedule and its policies, Prerequisites and
// FailureDiagnosis, discover_pytest_source with its cache apart,
// read_top_level and ranktest-audit's main.)
//
// A function is what starts at a line's first column with a '(' and opens
// its body with a '{' at a line's end, until the '}' at a line's first
// column that closes it (src/ is formatted so: namespaces do not indent).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace ranktest {
namespace {

constexpr std::size_t kMaxLines = 120;

bool starts_with_any(const std::string& line, std::initializer_list<const char*> prefixes) {
  for (const char* prefix : prefixes)
    if (line.rfind(prefix, 0) == 0) return true;
  return false;
}

bool ends_with(const std::string& line, char c) {
  const auto last = line.find_last_not_of(" \t\r");
  return last != std::string::npos && line[last] == c;
}

// "line name" -> length, for each function of `lines` longer than the limit.
std::map<std::string, std::size_t> long_functions_in(const std::vector<std::string>& lines) {
  std::map<std::string, std::size_t> found;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& line = lines[i];
    if (line.empty() || std::isspace(static_cast<unsigned char>(line[0])) ||
        line.find('(') == std::string::npos || ends_with(line, ';') ||
        starts_with_any(line, {"namespace", "struct", "class", "enum", "union", "extern", "#",
                               "}", "//", "using", "template"}))
      continue;
    std::size_t open = i;
    while (open < lines.size() && !ends_with(lines[open], '{') && !ends_with(lines[open], ';'))
      ++open;
    if (open == lines.size() || !ends_with(lines[open], '{')) continue;
    std::size_t close = open + 1;
    while (close < lines.size() && lines[close].rfind('}', 0) != 0) ++close;
    const std::size_t length = close - i + 1;
    if (length > kMaxLines) {
      auto name = line.substr(0, line.find('('));
      name = name.substr(name.rfind(' ') == std::string::npos ? 0 : name.rfind(' ') + 1);
      found[std::to_string(i + 1) + " " + name] = length;
    }
    i = close;
  }
  return found;
}

TEST(FunctionLength, TheScanFindsAFunctionLongerThanTheLimit) {
  const auto function = [](const std::string& signature, std::size_t body) {
    std::vector<std::string> lines{"// a comment (with parentheses)", signature};
    for (std::size_t i = 0; i < body; ++i) lines.push_back("  call(" + std::to_string(i) + ");");
    lines.push_back("}");
    return lines;
  };
  EXPECT_TRUE(long_functions_in(function("int short_one(int a) {", 100)).empty());
  const auto long_one = long_functions_in(function("int Class::long_one(int a) {", 130));
  ASSERT_EQ(long_one.size(), 1u);
  EXPECT_EQ(long_one.begin()->first, "2 Class::long_one");
  EXPECT_EQ(long_one.begin()->second, 132u);
  // A signature over several lines counts from its first.
  auto split = function("    int b) {", 119);
  split.insert(split.begin() + 1, "std::optional<int> spread_over(int a,");
  EXPECT_EQ(long_functions_in(split).size(), 1u);
}

TEST(FunctionLength, NoFunctionInSrcIsLongerThanTheLimit) {
  const std::filesystem::path root = RANKTEST_SOURCE_DIR;
  std::map<std::string, std::size_t> too_long;
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "src")) {
    const auto extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".h")) continue;
    ++files;
    std::vector<std::string> lines;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (const auto& [where, length] : long_functions_in(lines))
      too_long[std::filesystem::relative(entry.path(), root).string() + ":" + where] = length;
  }
  EXPECT_GT(files, 100);  // the walk found the code
  EXPECT_TRUE(too_long.empty()) << "functions over " << kMaxLines
                                << " lines (split each by what its parts do): "
                                << ::testing::PrintToString(too_long);
}

}  // namespace
}  // namespace ranktest
