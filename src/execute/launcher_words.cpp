#include "execute/launcher_words.h"

#include <vector>

#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

// OpenMPI's frame: a line of dashes only (74 of them in 4.x and 5.x).
bool is_frame(std::string_view line) {
  return line.size() >= 20 && line.find_first_not_of('-') == std::string_view::npos;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    auto line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return lines;
}

std::string joined(const std::vector<std::string_view>& lines) {
  std::string out;
  for (const auto line : lines)
    out += (out.empty() ? "" : "\n") + text::terminal_safe(text::truncate_utf8(line, 300));
  return out;
}

}  // namespace

std::string launcher_refusal(std::string_view output, std::size_t max_lines) {
  const auto lines = lines_of(output);
  // The last framed block: between the last two frames.
  std::size_t close = lines.size();
  while (close > 0 && !is_frame(lines[close - 1])) --close;
  std::size_t open = close > 0 ? close - 1 : 0;
  while (open > 0 && !is_frame(lines[open - 1])) --open;
  if (close > 0 && open > 0) {
    std::vector<std::string_view> reason;
    for (std::size_t i = open; i + 1 < close && reason.size() < max_lines; ++i) {
      if (lines[i].empty()) {
        if (reason.empty()) continue;  // blank lines before the reason
        break;                         // the end of its first paragraph
      }
      reason.push_back(lines[i]);
    }
    // An internal failure's detail is further down the block, as
    // "  X failed" over "  --> Returned value ... instead of ..._SUCCESS":
    // what failed is the part a person can search for (orte_init's first
    // paragraph is the same whatever failed).
    std::size_t details = 0;
    for (std::size_t i = open + 1; i + 1 < close && details < 2; ++i) {
      const auto trimmed = lines[i].substr(std::min(lines[i].find_first_not_of(' '), lines[i].size()));
      if (!trimmed.starts_with("-->")) continue;
      const auto above = lines[i - 1].substr(
          std::min(lines[i - 1].find_first_not_of(' '), lines[i - 1].size()));
      if (!above.empty()) reason.push_back(above);
      reason.push_back(trimmed);
      ++details;
    }
    if (!reason.empty()) return joined(reason);
  }
  std::vector<std::string_view> last;
  for (const auto line : text::last_lines(output, max_lines)) last.push_back(line);
  return joined(last);
}

}  // namespace ranktest::execute
