#include "config/byte_size.h"

#include <fmt/format.h>

#include <charconv>
#include <utility>

namespace ranktest::config {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  constexpr std::pair<std::string_view, std::uint64_t> kUnits[] = {
      {"", 1},           {"B", 1},          {"KB", 1000},        {"MB", 1000'000},
      {"GB", 1000'000'000}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}};
  for (const auto& [name, scale] : kUnits)
    if (unit == name) return number * scale;
  return std::nullopt;
}

std::string format_size(std::uint64_t bytes) {
  if (bytes < (1ull << 10)) return fmt::format("{} B", bytes);
  if (bytes < (1ull << 20)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  if (bytes < (1ull << 30)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

}  // namespace ranktest::config
