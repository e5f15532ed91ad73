// Bytes as hex digits and back: how argv, environments and file names that
// need not be UTF-8 travel through JSON ("2f62696e" is "/bin").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ranktest::text {

std::string to_hex(std::string_view bytes);
// nullopt where `digits` is not an even number of hex digits.
std::optional<std::string> from_hex(std::string_view digits);

}  // namespace ranktest::text
