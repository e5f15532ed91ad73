#include "execute/suspicious_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {
constexpr std::uintmax_t kWhole = 8u << 20;
constexpr std::size_t kPart = 4u << 20;
}  // namespace

std::vector<std::string> find_signatures(std::string_view output,
                                         const std::vector<std::string>& signatures,
                                         std::size_t limit) {
  std::vector<std::string> found;
  while (!output.empty() && found.size() < limit) {
    const auto newline = output.find('\n');
    const auto line = output.substr(0, newline);
    for (const auto& signature : signatures)
      if (!signature.empty() && line.find(signature) != std::string_view::npos) {
        found.push_back(text::truncate_utf8(line, 300));
        break;
      }
    if (newline == std::string_view::npos) break;
    output.remove_prefix(newline + 1);
  }
  return found;
}

std::vector<std::string> find_signatures_in_log(const std::filesystem::path& log,
                                                const std::vector<std::string>& signatures) {
  if (signatures.empty() || log.empty()) return {};
  // open, fstat, pread, close: read once per passing test, so no stream.
  const int fd = ::open(log.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat info{};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return {};
  }
  const auto size = static_cast<std::uintmax_t>(info.st_size);
  const auto read = [&](std::uintmax_t from, std::size_t bytes) {
    return text::read_at(fd, from, bytes);
  };
  std::vector<std::string> found;
  if (size <= kWhole) {
    found = find_signatures(read(0, static_cast<std::size_t>(size)), signatures);
  } else {
    found = find_signatures(read(0, kPart), signatures);
    for (auto& line : find_signatures(read(size - kPart, kPart), signatures,
                                      3 - std::min<std::size_t>(3, found.size())))
      found.push_back(std::move(line));
  }
  ::close(fd);
  return found;
}

}  // namespace ranktest::execute
