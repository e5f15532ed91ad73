// The small text rules of the terminal's lines: how a name, a path, a
// duration is shown (shared by the per-test lines and the summary).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "model/test_case.h"

namespace ranktest::report::terminal_text {

constexpr std::size_t kMaxLineBytes = 400;
constexpr std::string_view kIndent = "      ";
// The summary's name column: a longer name is cut, marked with "…", so one
// very long name (a generated parametrised name of 5,000 characters) does
// not pad every line of the summary. The test's own line above the summary,
// its rerun command and every file report keep the whole name.
constexpr std::size_t kNameColumn = 80;
// How many of the tests not run for one reason the summary names.
constexpr std::size_t kNotRunNamed = 3;

std::string seconds(std::chrono::milliseconds duration);
// Valid UTF-8 without control characters, at most kMaxLineBytes.
std::string shown(std::string_view bytes);
// A path relative to the working directory when it lies under it:
// compilers and the run folder record absolute paths; people read short ones.
std::string display_path(const std::string& file);
// Characters, not bytes: what the terminal shows (names are made valid
// UTF-8 by shown()).
std::size_t characters(std::string_view text);
std::string in_name_column(std::string_view name);
std::string where(const std::optional<SourceLocation>& location);

}  // namespace ranktest::report::terminal_text
