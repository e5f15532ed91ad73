#include "text/sanitize.h"

#include <gtest/gtest.h>

#include "text/file_tail.h"

namespace ranktest::text {
namespace {

TEST(RepairUtf8, KeepsValidTextAndEscapesInvalidBytes) {
  EXPECT_EQ(repair_utf8("plain"), "plain");
  EXPECT_EQ(repair_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(repair_utf8("a\xff" "b"), "a\\xFFb");
  EXPECT_EQ(repair_utf8("\xc3"), "\\xC3");                 // truncated sequence
  EXPECT_EQ(repair_utf8("\xc0\xaf"), "\\xC0\\xAF");        // overlong '/'
  EXPECT_EQ(repair_utf8("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // surrogate
  EXPECT_EQ(repair_utf8("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // emoji
}

TEST(XmlSafe, EscapesWhatXmlForbids) {
  EXPECT_EQ(xml_safe(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(xml_safe("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
  EXPECT_EQ(xml_safe("\x1b[31m"), "\\x1B[31m");
  EXPECT_EQ(xml_safe("\xef\xbf\xbe"), "\\xEF\\xBF\\xBE");  // U+FFFE
  EXPECT_EQ(xml_safe("]]> <a>"), "]]> <a>");  // the XML writer escapes these
}

TEST(TerminalSafe, EscapesControlSequences) {
  EXPECT_EQ(terminal_safe("\x1b]0;title\x07"), "\\x1B]0;title\\x07");
  EXPECT_EQ(terminal_safe("\xc2\x9b" "2J"), "\\xC2\\x9B2J");  // C1 CSI
  EXPECT_EQ(terminal_safe("ok\tline\n"), "ok\tline\n");
  EXPECT_EQ(terminal_safe("\x7f"), "\\x7F");
}

TEST(Truncate, NeverSplitsASequence) {
  EXPECT_EQ(truncate_utf8("abc", 5), "abc");
  EXPECT_EQ(truncate_utf8("ab\xc3\xa9", 3), "ab…");
  EXPECT_EQ(keep_end_utf8("line1\nline2\nline3", 8), "…\nline3");
}

TEST(LastLines, TakesTheEnd) {
  const auto lines = last_lines("a\nb\nc\n", 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "b");
  EXPECT_EQ(lines[1], "c");
  EXPECT_TRUE(last_lines("", 3).empty());
  EXPECT_EQ(last_lines("only", 3).size(), 1u);
}

}  // namespace
}  // namespace ranktest::text
