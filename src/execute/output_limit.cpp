#include "execute/output_limit.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace ranktest::execute {
namespace {
constexpr std::uint64_t kBlock = 4096;
}

bool release_middle(const std::filesystem::path& log, std::uint64_t limit, std::uint64_t from) {
  std::error_code error;
  const auto size = std::filesystem::file_size(log, error);
  if (error || limit == 0 || size <= from || size - from <= limit) return false;
  // Whole blocks between the head and the tail that will be kept.
  const std::uint64_t first = (from + limit / 2 + kBlock - 1) / kBlock * kBlock;
  const std::uint64_t last = (size - limit / 2) / kBlock * kBlock;
  if (last <= first) return true;
  const int fd = open(log.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return true;
  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(first),
            static_cast<off_t>(last - first));
  close(fd);
  return true;
}

std::uint64_t copy_head_and_tail(const std::filesystem::path& log, std::uint64_t from,
                                 std::uint64_t to, std::ostream& out, std::uint64_t limit) {
  if (to <= from) return 0;
  std::ifstream in(log, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(from));
  // Copied through a small buffer: the runner's memory does not grow with
  // the limit.
  std::string buffer(1 << 16, '\0');
  const auto copy = [&](std::uint64_t bytes) {
    while (bytes > 0 && in) {
      const auto chunk = static_cast<std::streamsize>(std::min<std::uint64_t>(bytes, buffer.size()));
      in.read(buffer.data(), chunk);
      out.write(buffer.data(), in.gcount());
      bytes -= static_cast<std::uint64_t>(in.gcount());
    }
  };
  const std::uint64_t size = to - from;
  if (limit == 0 || size <= limit) {
    copy(size);
    return 0;
  }
  const std::uint64_t keep = limit / 2;
  const std::uint64_t dropped = size - 2 * keep;
  copy(keep);
  out << fmt::format("\n[ranktest: {} bytes of output dropped here; max-output keeps the "
                     "first and last {} bytes]\n",
                     dropped, keep);
  in.clear();
  in.seekg(static_cast<std::streamoff>(to - keep));
  copy(keep);
  return dropped;
}

std::uint64_t keep_head_and_tail(const std::filesystem::path& log, std::uint64_t limit) {
  std::error_code error;
  const auto size = std::filesystem::file_size(log, error);
  if (error || limit == 0 || size <= limit) return 0;
  const auto temporary = log.string() + ".limited";
  std::uint64_t dropped = 0;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    dropped = copy_head_and_tail(log, 0, size, out, limit);
    if (!out) return 0;
  }
  std::filesystem::rename(temporary, log, error);
  return error ? 0 : dropped;
}

}  // namespace ranktest::execute
