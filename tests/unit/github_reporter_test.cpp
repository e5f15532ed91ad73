// The GitHub step summary's test names: one Markdown cell each, shown as
// written, whatever characters the name holds.
#include "report/github_reporter.h"

#include <gtest/gtest.h>

namespace ranktest::report {
namespace {

TEST(MarkdownCodeCell, APlainNameIsACodeSpan) {
  EXPECT_EQ(markdown_code_cell("suite::Net.Reconnects"), "`suite::Net.Reconnects`");
}

TEST(MarkdownCodeCell, BackticksInsideNeverCloseTheSpan) {
  EXPECT_EQ(markdown_code_cell("test_x[a`b]"), "``test_x[a`b]``");
  EXPECT_EQ(markdown_code_cell("t[``]"), "```t[``]```");
  // A backtick at either end needs a space between it and the fence.
  EXPECT_EQ(markdown_code_cell("`quoted`"), "`` `quoted` ``");
}

// A test name's escape sequences reach neither the step summary nor the
// annotations that GitHub's log viewer renders.
TEST(MarkdownCodeCell, ControlBytesAreWrittenAsEscapes) {
  EXPECT_EQ(markdown_code_cell("t\r\x1b[2Kx"), "`t\\x0D\\x1B[2Kx`");
  EXPECT_EQ(github_escape_property("t\x1b[31m:x"), "t\\x1B[31m%3Ax");
}

TEST(MarkdownCodeCell, PipesAndLineBreaksStayInTheCell) {
  EXPECT_EQ(markdown_code_cell("a|b\nc"), "`a\\|b c`");
  // HTML inside a code span is shown as written, not escaped twice.
  EXPECT_EQ(markdown_code_cell("<script>&"), "`<script>&`");
}

}  // namespace
}  // namespace ranktest::report
