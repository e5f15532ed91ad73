// How many run folders a state directory keeps (`run-folders`): each run's
// logs stay readable after it, but a machine that runs a suite every hour
// must not fill its disk with them (pyflakes' 741 tests leave 7 MB a run).
#pragma once

#include <cstddef>
#include <filesystem>

#include "process/descriptor.h"

namespace ranktest::execute {

// A shared lock on a run's folder, held while the run runs: another
// runner's clean-up never deletes a run still going, whatever its age. A
// runner that dies lets go of it with its descriptors.
class RunFolderLock {
 public:
  // Unlocked (nothing held) where the folder cannot be opened or locked.
  static RunFolderLock hold(const std::filesystem::path& folder);

 private:
  explicit RunFolderLock(process::Descriptor fd) : fd_(std::move(fd)) {}
  process::Descriptor fd_;
};

// Deletes the run folders under `runs` beyond the newest `keep` (by when
// each was last written to: its journal, else the folder), never
// `current`, the one `runs/latest` names, nor one a running ranktest
// holds. Only folders named as ranktest names them. How many it deleted.
std::size_t remove_old_run_folders(const std::filesystem::path& runs,
                                   const std::filesystem::path& current, std::size_t keep);

}  // namespace ranktest::execute
