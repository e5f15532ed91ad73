#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ranktest::text {

struct FileTail {
  std::string bytes;            // the end of the file, as written
  std::uint64_t skipped = 0;    // bytes before it that were not read
};

// Reads at most the last `max_bytes` of a file (a test may print 50 MB);
// starts at a line boundary when it had to cut. A missing file reads empty.
FileTail read_file_tail(const std::filesystem::path& path,
                        std::size_t max_bytes);

// The last `max_bytes` of `bytes` as read_file_tail reads a file's (for
// bytes the runner holds already).
FileTail tail_of(std::string bytes, std::size_t max_bytes);

// Up to `count` bytes of the open file `fd` from offset `from` (fewer
// where it is shorter), by pread: no seek, no stream.
std::string read_at(int fd, std::uint64_t from, std::size_t count);

// The whole file as bytes; empty if it cannot be read.
std::string read_file(const std::filesystem::path& path);

// The last `count` lines of `text` (without their newlines).
std::vector<std::string_view> last_lines(std::string_view text,
                                         std::size_t count);

}  // namespace ranktest::text
