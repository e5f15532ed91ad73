#include "process/own_files.h"

namespace ranktest::process {

std::filesystem::path beside_own_binary(std::string_view name) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return std::filesystem::path(name);
  return self.parent_path() / name;
}

}  // namespace ranktest::process
