#include "config/duration.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace ranktest::config {
namespace {

std::optional<double> unit_in_ms(std::string_view unit) {
  if (unit == "ms") return 1.0;
  if (unit == "s" || unit.empty()) return 1000.0;
  if (unit == "m") return 60'000.0;
  if (unit == "h") return 3'600'000.0;
  return std::nullopt;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double total_ms = 0;
  std::size_t parts = 0;
  // "1h30m", "1m30s": each unit smaller than the one before ("5m5m" and
  // "30s1m" are typos, not durations).
  double previous_scale = INFINITY;
  while (!text.empty()) {
    double number = 0;
    const auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    if (number < 0 || !std::isfinite(number)) return std::nullopt;
    text.remove_prefix(end - text.data());
    std::size_t unit_length = 0;
    while (unit_length < text.size() && text[unit_length] >= 'a' &&
           text[unit_length] <= 'z')
      ++unit_length;
    const auto scale = unit_in_ms(text.substr(0, unit_length));
    if (!scale) return std::nullopt;
    if (unit_length == 0 && (parts > 0 || !text.empty())) return std::nullopt;
    if (!(*scale < previous_scale)) return std::nullopt;
    previous_scale = *scale;
    total_ms += number * *scale;
    if (!(total_ms <= static_cast<double>(kLongestDuration.count()))) return std::nullopt;
    text.remove_prefix(unit_length);
    ++parts;
  }
  return Duration(static_cast<Duration::rep>(std::llround(total_ms)));
}

std::optional<Duration> duration_from_seconds(double seconds) {
  // Written so that NaN fails too.
  if (!(seconds >= 0 && seconds * 1000 <= static_cast<double>(kLongestDuration.count())))
    return std::nullopt;
  return Duration(static_cast<Duration::rep>(std::llround(seconds * 1000)));
}

std::string format_duration(Duration duration) {
  const auto ms = duration.count();
  if (ms < 1000) return fmt::format("{}ms", ms);
  if (ms < 60'000) {
    if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
    return fmt::format("{:.1f}s", ms / 1000.0);
  }
  const auto minutes = ms / 60'000;
  const auto seconds = (ms % 60'000) / 1000;
  if (minutes < 60)
    return seconds ? fmt::format("{}m{}s", minutes, seconds)
                   : fmt::format("{}m", minutes);
  return fmt::format("{}h{}m", minutes / 60, minutes % 60);
}

}  // namespace ranktest::config
