#include "text/file_tail.h"

#include <fstream>
#include <iterator>

namespace ranktest::text {

FileTail read_file_tail(const std::filesystem::path& path,
                        std::size_t max_bytes) {
  FileTail tail;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return tail;
  const auto size = static_cast<std::uint64_t>(in.tellg());
  const std::uint64_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  tail.bytes.resize(size - start);
  in.read(tail.bytes.data(), static_cast<std::streamsize>(tail.bytes.size()));
  tail.bytes.resize(static_cast<std::size_t>(in.gcount()));
  tail.skipped = start;
  if (start > 0) {
    const auto newline = tail.bytes.find('\n');
    if (newline != std::string::npos && newline + 1 < tail.bytes.size()) {
      tail.bytes.erase(0, newline + 1);
      tail.skipped += newline + 1;
    }
  }
  return tail;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string_view> last_lines(std::string_view text,
                                         std::size_t count) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::vector<std::string_view> lines;
  while (!text.empty() && lines.size() < count) {
    const auto newline = text.rfind('\n');
    if (newline == std::string_view::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.substr(newline + 1));
    text = text.substr(0, newline);
  }
  return {lines.rbegin(), lines.rend()};
}

}  // namespace ranktest::text
