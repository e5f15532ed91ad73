#include "text/file_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fstream>
#include <iterator>

namespace ranktest::text {

namespace {

// A tail that had to cut starts at a line boundary.
void start_at_a_line(FileTail& tail) {
  if (tail.skipped == 0) return;
  const auto newline = tail.bytes.find('\n');
  if (newline != std::string::npos && newline + 1 < tail.bytes.size()) {
    tail.bytes.erase(0, newline + 1);
    tail.skipped += newline + 1;
  }
}

}  // namespace

// open, fstat, pread, close: a stream's opening at the end and seeking
// back took three more system calls, once per test.
FileTail read_file_tail(const std::filesystem::path& path,
                        std::size_t max_bytes) {
  FileTail tail;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tail;
  struct stat info{};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return tail;
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  const std::uint64_t start = size > max_bytes ? size - max_bytes : 0;
  tail.bytes = read_at(fd, start, static_cast<std::size_t>(size - start));
  ::close(fd);
  tail.skipped = start;
  start_at_a_line(tail);
  return tail;
}

std::string read_at(int fd, std::uint64_t from, std::size_t count) {
  std::string bytes(count, '\0');
  std::size_t got = 0;
  while (got < count) {
    const auto read = ::pread(fd, bytes.data() + got, count - got, static_cast<off_t>(from + got));
    if (read < 0 && errno == EINTR) continue;
    if (read <= 0) break;
    got += static_cast<std::size_t>(read);
  }
  bytes.resize(got);
  return bytes;
}

FileTail tail_of(std::string bytes, std::size_t max_bytes) {
  FileTail tail;
  tail.skipped = bytes.size() > max_bytes ? bytes.size() - max_bytes : 0;
  if (tail.skipped > 0) bytes.erase(0, static_cast<std::size_t>(tail.skipped));
  tail.bytes = std::move(bytes);
  start_at_a_line(tail);
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
