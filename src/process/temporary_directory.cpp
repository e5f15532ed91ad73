#include "process/temporary_directory.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>

namespace ranktest::process {

Expected<TemporaryDirectory> TemporaryDirectory::create(const char* prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      fmt::format("{}/{}XXXXXX", base && *base ? base : "/tmp", prefix);
  if (!mkdtemp(pattern.data()))
    return Error{fmt::format("cannot create a temporary folder {}: {}; check "
                             "that TMPDIR is writable",
                             pattern, std::strerror(errno))};
  return TemporaryDirectory(pattern);
}

TemporaryDirectory::TemporaryDirectory(TemporaryDirectory&& other) noexcept
    : path_(std::exchange(other.path_, {})) {}

TemporaryDirectory::~TemporaryDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace ranktest::process
