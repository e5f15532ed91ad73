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

TEST(MarkdownCodeCell, PipesAndLineBreaksStayInTheCell) {
  EXPECT_EQ(markdown_code_cell("a|b\nc"), "`a\\|b c`");
  // HTML inside a code span is shown as written, not escaped twice.
  EXPECT_EQ(markdown_code_cell("<script>&"), "`<script>&`");
}

}  // namespace
}  // namespace ranktest::report
