#include "frameworks/pytest/pytest_collection_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "frameworks/pytest/pytest_discoverer.h"
#include "frameworks/pytest/pytest_invocation.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::discover {
namespace fs = std::filesystem;
using Json = nlohmann::json;

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash) {
  for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

namespace {

std::string stamp(const fs::path& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) return path.string() + " missing\n";
  const auto time = fs::last_write_time(path, error).time_since_epoch().count();
  return fmt::format("{} {} {}\n", path.string(), size, time);
}

bool matters_to_collection(const fs::path& path) {
  static const std::vector<std::string> extensions{".py", ".ini", ".toml", ".cfg", ".json",
                                                   ".yaml", ".yml", ".txt", ".pth"};
  const auto extension = path.extension().string();
  return std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
}

void stamp_tree(const fs::path& root, std::vector<std::string>& stamps) {
  std::error_code error;
  if (fs::is_regular_file(root, error)) {
    stamps.push_back(stamp(root));
    return;
  }
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error);
  for (const fs::recursive_directory_iterator end; !error && it != end; it.increment(error)) {
    const auto name = it->path().filename().string();
    if (it->is_directory(error)) {
      if (name.starts_with(".") || name == "__pycache__" || name == "node_modules")
        it.disable_recursion_pending();
      // A folder's time changes when files are added or removed in it.
      stamps.push_back(stamp(it->path()) + "dir");
    } else if (matters_to_collection(it->path())) {
      stamps.push_back(stamp(it->path()));
    }
  }
}

}  // namespace

std::string collection_fingerprint(const config::SourceConfig& source,
                                   const std::vector<fs::path>& paths,
                                   const fs::path& working_directory) {
  std::vector<std::string> stamps{source.python + "\n"};
  for (const auto& arg : source.args) stamps.push_back("arg " + arg + "\n");
  for (const auto& [name, value] : source.env) stamps.push_back("env " + name + "=" + value + "\n");
  // Every file of ranktest's plugin, in name order: the collection is its.
  if (const auto plugin = framework::pytest_plugin_path()) {
    std::vector<fs::path> files;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(*plugin / "ranktest_pytest", error))
      if (entry.path().extension() == ".py") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) stamps.push_back(stamp(file));
  }
  for (const auto& path : paths) stamp_tree(fs::absolute(path), stamps);
  for (auto dir = fs::absolute(working_directory); ; dir = dir.parent_path()) {
    for (const char* name : {"conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"})
      if (fs::exists(dir / name)) stamps.push_back(stamp(dir / name));
    if (dir == dir.parent_path()) break;
  }
  std::uint64_t hash = 1469598103934665603ull;
  for (const auto& line : stamps) hash = fnv1a(line, hash);
  return fmt::format("{:016x}", hash);
}

std::string collection_inputs_stamp(const Json& inputs, const std::vector<std::string>& environment,
                                    fs::file_time_type& newest) {
  newest = fs::file_time_type::min();
  std::string stamp_text;
  const auto stamp_path = [&](const Json& entry, bool folder) {
    if (!entry.is_string()) return;
    const auto path = entry.get<std::string>();
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
      stamp_text += fmt::format("{} missing\n", path);
      return;
    }
    stamp_text += fmt::format("{} {} {}.{}{}\n", path, folder ? 0 : info.st_size,
                              info.st_mtim.tv_sec, info.st_mtim.tv_nsec, folder ? " dir" : "");
    std::error_code error;
    const auto time = fs::last_write_time(path, error);
    if (!error) newest = std::max(newest, time);
  };
  if (!inputs.is_object()) return {};
  for (const auto& file : inputs.value("files", Json::array())) stamp_path(file, false);
  for (const auto& folder : inputs.value("folders", Json::array())) stamp_path(folder, true);

  std::map<std::string, std::string> values;  // the collection's environment
  for (const auto& entry : environment) {
    const auto equals = entry.find('=');
    values[entry.substr(0, equals)] = equals == std::string::npos ? "" : entry.substr(equals + 1);
  }
  // Never part of what was collected: ranktest's own (the collection's
  // scratch file), and the shell's bookkeeping.
  const auto volatile_name = [](const std::string& name) {
    return name.starts_with("RANKTEST_") || name == "_" || name == "OLDPWD" || name == "PWD" ||
           name == "SHLVL";
  };
  std::set<std::string> names;
  const auto& read = inputs.contains("variables") ? inputs["variables"] : Json();
  for (const auto& [name, value] : values)
    if ((read == "*" || name.starts_with("PYTHON") || name.starts_with("PYTEST")) &&
        !volatile_name(name))
      names.insert(name);
  if (read.is_array())
    for (const auto& name : read)
      if (name.is_string() && !volatile_name(name.get<std::string>()))
        names.insert(name.get<std::string>());
  for (const auto& name : names) {
    const auto found = values.find(name);
    stamp_text += found == values.end() ? fmt::format("{} unset\n", name)
                                        : fmt::format("{}={}\n", name, found->second);
  }
  return fmt::format("{:016x}", fnv1a(stamp_text));
}

void keep_collection(const fs::path& cache_path, const std::string& fingerprint,
                     const Json& inputs, const std::string& inputs_stamp,
                     const std::string& collection) {
  std::error_code error;
  fs::create_directories(cache_path.parent_path(), error);
  if (error) return;
  std::ofstream out(cache_path.string() + ".tmp", std::ios::binary | std::ios::trunc);
  out << Json{{"fingerprint", fingerprint},
              {"inputs", inputs},
              {"inputs_stamp", inputs_stamp},
              {"collection", text::repair_utf8(collection)}}
             .dump();
  out.close();
  if (out) fs::rename(cache_path.string() + ".tmp", cache_path, error);
}

std::optional<CachedCollection> cached_collection(const fs::path& cache_path,
                                                  const std::string& fingerprint,
                                                  const std::vector<std::string>& environment) {
  const auto cached = Json::parse(text::read_file(cache_path), nullptr, false);
  fs::file_time_type newest;
  if (cached.is_discarded() || !cached.is_object() ||
      cached.value("fingerprint", std::string()) != fingerprint ||
      !cached.contains("collection") || !cached["collection"].is_string() ||
      !cached.contains("inputs") || !cached.contains("inputs_stamp") ||
      cached["inputs_stamp"] != collection_inputs_stamp(cached["inputs"], environment, newest))
    return std::nullopt;
  return CachedCollection{cached["collection"].get<std::string>(),
                          cached["inputs_stamp"].get<std::string>()};
}

}  // namespace ranktest::discover
