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

std::optional<std::vector<std::string_view>> split_outside(std::string_view list, char open,
                                                           char close) {
  std::vector<std::string_view> items;
  while (!list.empty()) {
    std::size_t end = 0;
    int depth = 0;
    for (; end < list.size(); ++end) {
      if (list[end] == open) ++depth;
      if (list[end] == close) --depth;
      if (list[end] == ',' && depth == 0) break;
    }
    if (depth != 0) return std::nullopt;
    items.push_back(list.substr(0, end));
    list.remove_prefix(std::min(list.size(), end + 1));
  }
  return items;
}

std::optional<std::pair<int, int>> number_range(std::string_view item) {
  const auto dash = item.find('-');
  const auto low = whole_number(item.substr(0, dash));
  const auto high = dash == std::string_view::npos ? low : whole_number(item.substr(dash + 1));
  if (!low || !high || *high < *low) return std::nullopt;
  return std::pair(*low, *high);
}

std::string first_host_of(std::string_view host_list) {
  if (const auto hosts = hosts_of(host_list); hosts && !hosts->empty()) return hosts->front();
  return std::string(host_list.substr(0, host_list.find(',')));  // not a host list: as written
}

std::optional<std::vector<std::string>> hosts_of(std::string_view host_list) {
  const auto items = split_outside(host_list, '[', ']');
  if (!items) return std::nullopt;
  std::vector<std::string> hosts;
  for (const auto item : *items) {
    const auto open = item.find('[');
    if (open == std::string_view::npos) {
      if (item.empty()) return std::nullopt;
      hosts.emplace_back(item);
      continue;
    }
    // prefix[07-09,12]suffix
    const auto close = item.find(']', open);
    const auto prefix = item.substr(0, open);
    const auto suffix = item.substr(close + 1);
    const auto ranges = split_outside(item.substr(open + 1, close - open - 1), '[', ']');
    if (!ranges) return std::nullopt;
    for (const auto range : *ranges) {
      const auto numbers = number_range(range);
      if (!numbers) return std::nullopt;
      // The range's zero padding, as written ("07-09": 07, 08, 09).
      const auto width = range.substr(0, range.find('-')).size();
      for (int number = numbers->first; number <= numbers->second; ++number) {
        auto digits = std::to_string(number);
        if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
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
