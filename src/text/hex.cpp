#include "text/hex.h"

#include <charconv>

namespace ranktest::text {

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string digits;
  digits.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    digits += kDigits[c >> 4];
    digits += kDigits[c & 0xF];
  }
  return digits;
}

std::optional<std::string> from_hex(std::string_view digits) {
  if (digits.size() % 2) return std::nullopt;
  std::string bytes;
  bytes.reserve(digits.size() / 2);
  for (std::size_t i = 0; i < digits.size(); i += 2) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(digits.data() + i, digits.data() + i + 2, value, 16);
    if (error != std::errc() || end != digits.data() + i + 2) return std::nullopt;
    bytes += static_cast<char>(value);
  }
  return bytes;
}

}  // namespace ranktest::text
