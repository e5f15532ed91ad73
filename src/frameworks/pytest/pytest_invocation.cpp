#include "frameworks/pytest/pytest_invocation.h"

#include <cstdlib>

namespace ranktest::framework {
namespace fs = std::filesystem;

namespace {

// Beside the running ranktest: in its source tree (a build folder's
// parent) or where it is installed.
std::optional<fs::path> installed_plugin_path() {
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  if (error) return std::nullopt;
  for (const auto& candidate : {self.parent_path().parent_path() / "python",
                                self.parent_path().parent_path().parent_path() / "python",
                                self.parent_path().parent_path() / "share" / "ranktest" / "python"})
    if (fs::exists(candidate / "ranktest_pytest" / "plugin.py", error)) return candidate;
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> pytest_plugin_path() {
  if (const char* set = std::getenv("RANKTEST_PYTHONPATH"); set && *set) return fs::path(set);
  // Looked for once: every test started in a pytest worker asks.
  static const auto found = installed_plugin_path();
  return found;
}

std::vector<std::string> pytest_base_args(const std::string& python) {
  return {python, "-m", "pytest", "-p", "ranktest_pytest.plugin", "-p", "no:cacheprovider"};
}

void put_plugin_on_python_path(std::vector<std::pair<std::string, std::string>>& env,
                               const fs::path& plugin) {
  for (auto& [name, value] : env)
    if (name == "PYTHONPATH") {
      value = value.empty() ? plugin.string() : plugin.string() + ":" + value;
      return;
    }
  const char* existing = std::getenv("PYTHONPATH");
  env.emplace_back("PYTHONPATH",
                   existing && *existing ? plugin.string() + ":" + existing : plugin.string());
}

}  // namespace ranktest::framework
