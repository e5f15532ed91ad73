#include "execute/file_range.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "text/file_tail.h"

namespace ranktest::execute {

std::optional<std::uintmax_t> find_in_file(const std::filesystem::path& path, std::uintmax_t from,
                                           const std::string& needle) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(static_cast<std::streamoff>(from));
  std::string carried;
  std::uintmax_t at = from;  // file offset of carried[0]
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    carried.append(chunk, static_cast<std::size_t>(in.gcount()));
    const auto found = carried.find(needle);
    if (found != std::string::npos) return at + found;
    // Keep what could begin a match across the chunk's end.
    const std::size_t keep = std::min(carried.size(), needle.size());
    at += carried.size() - keep;
    carried.erase(0, carried.size() - keep);
  }
  return std::nullopt;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const auto wrote = ::write(fd, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(wrote));
  }
  return true;
}

// The bytes [from, to) of a file (fewer where it is shorter): three system
// calls, where a stream took five.
std::string read_range(const std::filesystem::path& path, std::uintmax_t from, std::uintmax_t to) {
  if (to <= from) return {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  auto bytes = text::read_at(fd, from, static_cast<std::size_t>(to - from));
  ::close(fd);
  return bytes;
}

}  // namespace ranktest::execute
