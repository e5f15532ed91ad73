#include "execute/old_run_folders.h"

#include "execute/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ranktest::execute {
namespace fs = std::filesystem;

namespace {

process::Descriptor open_folder(const fs::path& folder) {
  return process::Descriptor(
      ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
}

// When a run last wrote: its journal, else the folder itself.
fs::file_time_type last_written(const fs::path& folder) {
  std::error_code error;
  auto time = fs::last_write_time(folder / "events.jsonl", error);
  if (error) time = fs::last_write_time(folder, error);
  return error ? fs::file_time_type::min() : time;
}

}  // namespace

RunFolderLock RunFolderLock::hold(const fs::path& folder) {
  auto fd = open_folder(folder);
  if (fd && ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0) fd.reset();
  return RunFolderLock(std::move(fd));
}

std::size_t remove_old_run_folders(const fs::path& runs, const fs::path& current,
                                   std::size_t keep) {
  std::error_code error;
  const auto latest = fs::read_symlink(runs / "latest", error);
  std::vector<std::pair<fs::file_time_type, fs::path>> others;
  for (const auto& entry : fs::directory_iterator(runs, error)) {
    const auto name = entry.path().filename().string();
    std::error_code type_error;
    if (!is_run_id(name) || entry.is_symlink(type_error) ||
        !entry.is_directory(type_error) || entry.path() == current)
      continue;
    others.emplace_back(last_written(entry.path()), entry.path());
  }
  // The current run is one of the `keep`.
  const std::size_t others_kept = keep > 0 ? keep - 1 : 0;
  if (others.size() <= others_kept) return 0;
  std::sort(others.begin(), others.end(), [](const auto& a, const auto& b) {
    return a.first > b.first;  // newest first
  });
  std::size_t removed = 0;
  for (std::size_t i = others_kept; i < others.size(); ++i) {
    const auto& folder = others[i].second;
    if (!latest.empty() && folder.filename() == latest.filename()) continue;
    // A running ranktest holds its folder: no exclusive lock then.
    const auto fd = open_folder(folder);
    if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
    std::error_code remove_error;
    fs::remove_all(folder, remove_error);
    if (!remove_error) ++removed;
  }
  return removed;
}

}  // namespace ranktest::execute
