#pragma once

#include <filesystem>

#include "model/expected.h"

namespace ranktest::process {

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it when
// this object goes away.
class TemporaryDirectory {
 public:
  static Expected<TemporaryDirectory> create(const char* prefix);
  TemporaryDirectory(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory& operator=(TemporaryDirectory&&) = delete;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  ~TemporaryDirectory();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TemporaryDirectory(std::filesystem::path path)
      : path_(std::move(path)) {}
  std::filesystem::path path_;  // empty once moved from
};

}  // namespace ranktest::process
