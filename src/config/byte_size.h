#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ranktest::config {

// "100MiB", "64MB", "512KiB", "1GB", or a number of bytes; nullopt else.
std::optional<std::uint64_t> parse_size(std::string_view text);

// For people: "512 B", "64.0 MiB", "1.50 GiB".
std::string format_size(std::uint64_t bytes);

}  // namespace ranktest::config
