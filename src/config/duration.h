#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ranktest::config {

using Duration = std::chrono::milliseconds;

// Parses "90s", "1.5m", "1h30m", "250ms" or a bare number of seconds.
std::optional<Duration> parse_duration(std::string_view text);

// "250ms", "2s", "1.5s", "3m20s": how a duration is shown to a person.
std::string format_duration(Duration duration);

}  // namespace ranktest::config
