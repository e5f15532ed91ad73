#include "framework/pytest_invocation.h"

#include <cstdlib>

namespace ranktest::framework {
namespace fs = std::filesystem;

std::optional<fs::path> pytest_plugin_path() {
  if (const char* set = std::getenv("RANKTEST_PYTHONPATH"); set && *set) return fs::path(set);
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  if (error) return std::nullopt;
  for (const auto& candidate : {self.parent_path().parent_path() / "python",
                                self.parent_path().parent_path().parent_path() / "python",
                                self.parent_path().parent_path() / "share" / "ranktest" / "python"})
    if (fs::exists(candidate / "ranktest_pytest" / "plugin.py", error)) return candidate;
  return std::nullopt;
}

std::vector<std::string> pytest_base_args(const std::string& python) {
  return {python, "-m", "pytest", "-p", "ranktest_pytest.plugin", "-p", "no:cacheprovider"};
}

std::string pytest_python_path(const fs::path& plugin) {
  const char* existing = std::getenv("PYTHONPATH");
  return existing && *existing ? plugin.string() + ":" + existing : plugin.string();
}

}  // namespace ranktest::framework
