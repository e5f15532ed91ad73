#include "report/rank_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ranktest::report {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    lines.push_back(text.substr(0, newline));
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return lines;
}

}  // namespace

std::string format_ranks(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::vector<std::string> fold_repeats(const std::vector<std::string_view>& lines) {
  std::vector<std::string> folded;
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[i]) ++j;
    const std::size_t count = j - i + 1;
    folded.push_back(count == 1 ? std::string(lines[i])
                                : fmt::format("{}  [×{}]", lines[i], count));
    i = j + 1;
  }
  return folded;
}

std::vector<std::string> merge_rank_outputs(
    const std::vector<std::pair<int, std::string_view>>& outputs) {
  std::vector<std::pair<int, std::vector<std::string>>> folded;
  std::size_t longest = 0;
  for (const auto& [rank, text] : outputs) {
    folded.emplace_back(rank, fold_repeats(split_lines(text)));
    longest = std::max(longest, folded.back().second.size());
  }
  std::vector<std::string> merged;
  for (std::size_t line = 0; line < longest; ++line) {
    // Ranks grouped by the text of their line at this position, in order of
    // first appearance.
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    for (const auto& [rank, lines] : folded) {
      if (line >= lines.size()) continue;
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto& g) { return g.first == lines[line]; });
      if (it == groups.end()) groups.push_back({lines[line], {rank}});
      else it->second.push_back(rank);
    }
    for (const auto& [text, ranks] : groups)
      merged.push_back(fmt::format("[{} {}] {}", ranks.size() == 1 ? "rank" : "ranks",
                                   format_ranks(ranks), text));
  }
  return merged;
}

}  // namespace ranktest::report
