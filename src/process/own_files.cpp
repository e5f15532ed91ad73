#include "process/own_files.h"

namespace ranktest::process {

// Beside the binary in a build folder; in <prefix>/libexec/ranktest when
// installed (cmake --install: <prefix>/bin/ranktest).
std::filesystem::path beside_own_binary(std::string_view name) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return std::filesystem::path(name);
  const auto beside = self.parent_path() / name;
  if (std::filesystem::exists(beside, error)) return beside;
  const auto installed = self.parent_path().parent_path() / "libexec" / "ranktest" / name;
  if (std::filesystem::exists(installed, error)) return installed;
  return beside;  // missing either way: named where a build puts it
}

}  // namespace ranktest::process
