#include "process/own_files.h"

#include <map>
#include <mutex>
#include <string>

namespace ranktest::process {

namespace {

// Beside the binary in a build folder; in <prefix>/libexec/ranktest when
// installed (cmake --install: <prefix>/bin/ranktest).
std::filesystem::path look_for(std::string_view name) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return std::filesystem::path(name);
  const auto beside = self.parent_path() / name;
  if (std::filesystem::exists(beside, error)) return beside;
  const auto installed = self.parent_path().parent_path() / "libexec" / "ranktest" / name;
  if (std::filesystem::exists(installed, error)) return installed;
  return beside;  // missing either way: named where a build puts it
}

}  // namespace

// Looked up once per name: a gtest worker's every test asks for its gate
// (three system calls each time, on a VM dearer than the test itself).
std::filesystem::path beside_own_binary(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::filesystem::path, std::less<>> found;
  const std::lock_guard lock(mutex);
  if (const auto known = found.find(name); known != found.end()) return known->second;
  return found.emplace(std::string(name), look_for(name)).first->second;
}

}  // namespace ranktest::process
