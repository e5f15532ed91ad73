#include "frameworks/pytest/python_with_pytest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "process/run_to_completion.h"

namespace ranktest::discover {
namespace fs = std::filesystem;
namespace {

bool is_executable_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// The file a program resolves to: one interpreter under several names
// (/bin/python3, /usr/bin/python3 -> python3.11) is tried once.
fs::path resolved(const fs::path& path) {
  std::error_code error;
  auto canonical = fs::canonical(path, error);
  return error ? path : canonical;
}

std::vector<fs::path> path_folders(std::string_view path_variable) {
  std::vector<fs::path> folders;
  while (!path_variable.empty()) {
    const auto colon = path_variable.find(':');
    const auto folder = path_variable.substr(0, colon);
    if (!folder.empty()) folders.emplace_back(folder);
    path_variable.remove_prefix(colon == std::string_view::npos ? path_variable.size()
                                                                : colon + 1);
  }
  return folders;
}

}  // namespace

std::vector<fs::path> other_python3s(std::string_view path_variable, const std::string& python) {
  const auto folders = path_folders(path_variable);
  // What `python` runs: a path as it is, a name as PATH finds it.
  fs::path configured = python;
  if (python.find('/') == std::string::npos)
    for (const auto& folder : folders)
      if (is_executable_file(folder / python)) {
        configured = folder / python;
        break;
      }
  std::vector<fs::path> seen{resolved(configured)};
  std::vector<fs::path> candidates;
  auto consider = [&](const fs::path& candidate) {
    if (!is_executable_file(candidate)) return;
    const auto file = resolved(candidate);
    if (std::find(seen.begin(), seen.end(), file) != seen.end()) return;
    seen.push_back(file);
    candidates.push_back(candidate);
  };
  for (const auto& folder : folders) consider(folder / "python3");
  for (const char* usual : {"/usr/bin/python3", "/usr/local/bin/python3"}) consider(usual);
  return candidates;
}

std::vector<fs::path> python3s_with_pytest(const std::string& python,
                                           process::SignalWatch& signals) {
  const char* path_variable = std::getenv("PATH");
  const auto candidates = other_python3s(path_variable ? path_variable : "", python);
  std::vector<process::SpawnRequest> requests;
  for (const auto& candidate : candidates) {
    process::SpawnRequest request;
    request.argv = {candidate.string(), "-c", "import pytest"};
    request.environment = process::make_environment({}, {});
    request.stdout_path = "/dev/null";
    requests.push_back(std::move(request));
  }
  // An interpreter that takes longer than this to import pytest would not
  // be the advice a person wants anyway.
  const auto runs = process::run_all_to_completion(
      requests, requests.size(), signals,
      std::vector<std::chrono::milliseconds>(requests.size(), std::chrono::seconds(10)));
  std::vector<fs::path> found;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i] && !runs[i]->timed_out && !runs[i]->interrupted_by && !runs[i]->exit.signaled &&
        runs[i]->exit.code == 0)
      found.push_back(candidates[i]);
  return found;
}

// What to do when `python` has no pytest, given the interpreters on this
// machine that have it.
std::string missing_pytest_advice(const config::SourceConfig& source,
                                  const std::vector<std::filesystem::path>& others) {
  const auto& python = source.python;
  if (others.empty())
    return fmt::format(" ({} has no pytest, nor has any other python3 in PATH or /usr/bin: "
                       "install pytest (Debian: python3-pytest){})",
                       python,
                       source.place.in_a_file()
                           ? ", then set python = \"...\" in this [[source]] if it is another "
                             "interpreter"
                           : "");
  std::vector<std::string> names;
  for (const auto& other : others) names.push_back(other.string());
  return fmt::format(" ({} has no pytest; {} {} it: {}, or install pytest for {})", python,
                     fmt::join(names, " and "), others.size() == 1 ? "has" : "have",
                     config::how_to_set(source.place.in_a_file(), "pytest", source.paths,
                                        fmt::format("python = \"{}\"", names.front())),
                     python);
}

}  // namespace ranktest::discover
