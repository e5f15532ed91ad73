#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ranktest::config {

// "100MiB", "64MB", "512KiB", "1GB", or a number of bytes; nullopt else.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace ranktest::config
