#include "frameworks/gtest/gtest_invocation.h"

namespace ranktest::framework {

const std::vector<std::string>& gtest_variables_to_remove() {
  static const std::vector<std::string> names{
      "GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", "GTEST_SHARD_STATUS_FILE",
      "GTEST_FILTER",      "GTEST_OUTPUT",       "GTEST_REPEAT",
      "GTEST_SHUFFLE",     "GTEST_LIST_TESTS",   "GTEST_ALSO_RUN_DISABLED_TESTS",
      "GTEST_FAIL_FAST",   "GTEST_BRIEF",        "GTEST_COLOR"};
  return names;
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

std::string gtest_filter_selecting(const std::string& name) {
  std::string pattern = name;
  for (char& c : pattern)
    if (c == ':' || c == '-' || c == '*' || c == '?') c = '?';
  return pattern;
}

}  // namespace ranktest::framework
