#include "discover/source_paths.h"

#include <fmt/format.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>

#include "text/glob.h"

namespace ranktest::discover {

namespace {

std::filesystem::path resolve(const std::string& pattern, const std::filesystem::path& root) {
  const std::filesystem::path path(pattern);
  return path.is_absolute() ? path : root / path;
}

}  // namespace

bool is_excluded(const std::filesystem::path& file, const std::vector<std::string>& exclude,
                 const std::filesystem::path& root) {
  // Both absolute: `root` may be relative ("."), a glob absolute.
  const auto normal = std::filesystem::absolute(file).lexically_normal();
  for (const auto& glob : exclude) {
    const bool by_name = glob.find('/') == std::string::npos;
    if (by_name ? text::glob_match(glob, normal.filename().string())
                : text::glob_match(
                      std::filesystem::absolute(resolve(glob, root)).lexically_normal().string(),
                      normal.string()))
      return true;
  }
  return false;
}

Expected<std::vector<std::filesystem::path>> expand_source_paths(
    const std::vector<std::string>& patterns, const std::vector<std::string>& exclude,
    const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  for (const auto& pattern : patterns) {
    const std::filesystem::path full = resolve(pattern, root);
    std::vector<std::filesystem::path> matched;
    if (!text::has_glob_characters(pattern)) {
      matched.push_back(full.lexically_normal());
    } else {
      glob_t matches{};
      const int status = glob(full.c_str(), 0, nullptr, &matches);
      if (status == 0)
        for (std::size_t i = 0; i < matches.gl_pathc; ++i)
          matched.emplace_back(std::filesystem::path(matches.gl_pathv[i]).lexically_normal());
      globfree(&matches);
      if (status != 0)
        return Error{fmt::format("{}: the pattern matches no file; build the "
                                 "tests first, or correct the pattern",
                                 full.string())};
    }
    const auto before = matched.size();
    std::erase_if(matched, [&](const auto& file) { return is_excluded(file, exclude, root); });
    if (before > 0 && matched.empty())
      return Error{fmt::format("{}: exclude leaves out every file it matches; correct "
                               "paths or exclude",
                               full.string())};
    files.insert(files.end(), matched.begin(), matched.end());
  }
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
