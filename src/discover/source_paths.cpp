#include "discover/source_paths.h"

#include <fmt/format.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>

#include "text/glob.h"

namespace ranktest::discover {

Expected<std::vector<std::filesystem::path>> expand_source_paths(
    const std::vector<std::string>& patterns,
    const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  for (const auto& pattern : patterns) {
    const std::filesystem::path full =
        std::filesystem::path(pattern).is_absolute() ? std::filesystem::path(pattern)
                                                     : root / pattern;
    if (!text::has_glob_characters(pattern)) {
      files.push_back(full.lexically_normal());
      continue;
    }
    glob_t matches{};
    const int status = glob(full.c_str(), 0, nullptr, &matches);
    if (status == 0)
      for (std::size_t i = 0; i < matches.gl_pathc; ++i)
        files.emplace_back(matches.gl_pathv[i]);
    globfree(&matches);
    if (status != 0)
      return Error{fmt::format("{}: the pattern matches no file; build the "
                               "tests first, or correct the pattern",
                               full.string())};
  }
  for (auto& file : files) file = file.lexically_normal();
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

Expected<Done> check_executable(const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status))
    return Error{fmt::format("{}: no such test binary; build it first, or "
                             "correct the path",
                             path.string())};
  if (!std::filesystem::is_regular_file(status))
    return Error{fmt::format("{}: not a test binary (not a regular file)",
                             path.string())};
  if (access(path.c_str(), X_OK) != 0)
    return Error{fmt::format("{}: the file is not executable; chmod +x it, "
                             "or point ranktest at the built binary",
                             path.string())};
  return Done{};
}

}  // namespace ranktest::discover
