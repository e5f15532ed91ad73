// What a listing or collection command printed, as an error quotes it: its
// last 15 lines, each cut at 300 bytes and made safe for a terminal.
#pragma once

#include <string>

#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::discover {

inline std::string quote(const std::string& output) {
  std::string quoted;
  for (const auto& line : text::last_lines(output, 15))
    quoted += "\n    | " + text::terminal_safe(text::truncate_utf8(line, 300));
  return quoted.empty() ? "\n    (it printed nothing)" : quoted;
}

}  // namespace ranktest::discover
