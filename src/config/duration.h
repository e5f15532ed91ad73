#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ranktest::config {

using Duration = std::chrono::milliseconds;

// The longest duration ranktest takes (30 days): anything longer is a
// mistake (and "1e300s" would overflow the clock).
inline constexpr Duration kLongestDuration = std::chrono::hours(24 * 30);

// Parses "90s", "1.5m", "1h30m", "250ms" or a bare number of seconds;
// nullopt for anything else, negative, not finite or over kLongestDuration.
std::optional<Duration> parse_duration(std::string_view text);

// A number of seconds as a Duration, under the same bounds.
std::optional<Duration> duration_from_seconds(double seconds);

// "250ms", "2s", "1.5s", "3m20s": how a duration is shown to a person.
std::string format_duration(Duration duration);

}  // namespace ranktest::config
