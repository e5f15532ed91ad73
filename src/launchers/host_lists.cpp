#include "launchers/host_lists.h"

#include <algorithm>
#include <charconv>

namespace ranktest::launchers {

std::optional<int> whole_number(std::string_view text) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

std::string first_host_of(std::string_view host_list) {
  const auto comma = host_list.find(',');
  const auto bracket = host_list.find('[');
  if (bracket == std::string_view::npos || (comma != std::string_view::npos && comma < bracket))
    return std::string(host_list.substr(0, comma));
  // prefix[07-09,12]suffix: the prefix, the first number of the range as
  // written (its zero padding kept), then what follows the brackets.
  const auto close = host_list.find(']', bracket);
  const auto inside = host_list.substr(bracket + 1, close == std::string_view::npos
                                                        ? std::string_view::npos
                                                        : close - bracket - 1);
  const auto first = inside.substr(0, inside.find_first_of("-,"));
  std::string host(host_list.substr(0, bracket));
  host += first;
  if (close != std::string_view::npos) {
    const auto rest = host_list.substr(close + 1);
    host += rest.substr(0, rest.find(','));
  }
  return host;
}

std::optional<std::vector<std::string>> hosts_of(std::string_view host_list) {
  std::vector<std::string> hosts;
  while (!host_list.empty()) {
    // One item: up to the first comma outside brackets.
    std::size_t end = 0;
    int depth = 0;
    for (; end < host_list.size(); ++end) {
      if (host_list[end] == '[') ++depth;
      if (host_list[end] == ']') --depth;
      if (host_list[end] == ',' && depth == 0) break;
    }
    if (depth != 0) return std::nullopt;
    const auto item = host_list.substr(0, end);
    host_list.remove_prefix(std::min(host_list.size(), end + 1));
    const auto open = item.find('[');
    if (open == std::string_view::npos) {
      if (item.empty()) return std::nullopt;
      hosts.emplace_back(item);
      continue;
    }
    const auto close = item.find(']', open);
    const auto prefix = item.substr(0, open);
    const auto suffix = item.substr(close + 1);
    auto ranges = item.substr(open + 1, close - open - 1);
    while (!ranges.empty()) {
      const auto range = ranges.substr(0, ranges.find(','));
      ranges.remove_prefix(std::min(ranges.size(), range.size() + 1));
      const auto dash = range.find('-');
      const auto low_text = range.substr(0, dash);
      const auto low = whole_number(low_text);
      const auto high = dash == std::string_view::npos ? low : whole_number(range.substr(dash + 1));
      if (!low || !high || *high < *low) return std::nullopt;
      for (int number = *low; number <= *high; ++number) {
        // The range's zero padding, as written ("07-09": 07, 08, 09).
        auto digits = std::to_string(number);
        if (digits.size() < low_text.size())
          digits.insert(0, low_text.size() - digits.size(), '0');
        hosts.push_back(std::string(prefix) + digits + std::string(suffix));
      }
    }
  }
  return hosts;
}

std::optional<int> tasks_on_node(std::string_view tasks_per_node, int node) {
  int seen = 0;
  while (!tasks_per_node.empty()) {
    const auto item = tasks_per_node.substr(0, tasks_per_node.find(','));
    tasks_per_node.remove_prefix(std::min(tasks_per_node.size(), item.size() + 1));
    const auto paren = item.find("(x");
    const auto tasks = whole_number(item.substr(0, paren));
    if (!tasks) return std::nullopt;
    int repeat = 1;
    if (paren != std::string_view::npos) {
      const auto count = item.substr(paren + 2, item.size() - paren - 3);
      if (!item.ends_with(")") || !whole_number(count)) return std::nullopt;
      repeat = *whole_number(count);
    }
    if (node < seen + repeat) return *tasks;
    seen += repeat;
  }
  return std::nullopt;
}

}  // namespace ranktest::launchers
