#include "report/terminal_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "text/sanitize.h"

namespace ranktest::report::terminal_text {

std::string seconds(std::chrono::milliseconds duration) {
  return fmt::format("{:8.3f}s", duration.count() / 1000.0);
}

std::string shown(std::string_view bytes) {
  return text::terminal_safe(text::truncate_utf8(bytes, kMaxLineBytes));
}

std::string display_path(const std::string& file) {
  std::error_code error;
  const auto cwd = std::filesystem::current_path(error);
  const std::filesystem::path path(file);
  if (!error && path.is_absolute()) {
    const auto relative = path.lexically_relative(cwd);
    if (!relative.empty() && *relative.begin() != "..") return relative.string();
  }
  return file;
}

std::size_t characters(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string in_name_column(std::string_view name) {
  if (characters(name) <= kNameColumn) return std::string(name);
  std::size_t kept = 0, end = 0;
  for (; end < name.size(); ++end)
    if ((static_cast<unsigned char>(name[end]) & 0xC0) != 0x80 && kept++ == kNameColumn - 1)
      break;
  return std::string(name.substr(0, end)) + "…";
}

std::string where(const std::optional<SourceLocation>& location) {
  if (!location) return {};
  return fmt::format("{}:{}", display_path(location->file), location->line);
}

}  // namespace ranktest::report::terminal_text
