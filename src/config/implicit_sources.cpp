#include "config/implicit_sources.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "text/file_tail.h"

namespace ranktest::config {
namespace fs = std::filesystem;
namespace {

bool is_python_test_file(const fs::path& path) {
  const auto name = path.filename().string();
  if (path.extension() != ".py") return false;
  return name.rfind("test_", 0) == 0 || name.ends_with("_test.py") || name == "conftest.py";
}

// Whether pytest, run in `folder` with no configuration, would find a test
// file: one in it or below it (a few levels, skipping what pytest's
// norecursedirs skips by default).
bool holds_python_tests(const fs::path& folder, int depth = 3) {
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const auto& entry = *it;
    const auto name = entry.path().filename().string();
    if (entry.is_regular_file(error) && is_python_test_file(entry.path())) return true;
    if (depth > 0 && entry.is_directory(error) && !name.starts_with(".") &&
        name != "node_modules" && name != "build" && name != "dist" && name != "venv" &&
        name != "__pycache__" && !name.ends_with(".egg-info") && !name.ends_with(".egg") &&
        holds_python_tests(entry.path(), depth - 1))
      return true;
  }
  return false;
}

// The lines of an ini file's section `[name]`, as key = value pairs with
// their continuation lines joined (testpaths may span several lines).
std::optional<std::map<std::string, std::string>> ini_section(const fs::path& file,
                                                              const std::string& name) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::optional<std::map<std::string, std::string>> section;
  std::string line, key;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[first] == ';') continue;
    if (line[0] == '[') {
      inside = line.substr(0, line.find(']') + 1) == "[" + name + "]";
      if (inside && !section) section.emplace();
      key.clear();
      continue;
    }
    if (!inside) continue;
    if (first > 0 && !key.empty()) {  // a continuation line
      (*section)[key] += " " + line.substr(first);
      continue;
    }
    const auto equals = line.find_first_of("=:");
    if (equals == std::string::npos) continue;
    key = line.substr(0, equals);
    key.erase(key.find_last_not_of(" \t") + 1);
    auto value = line.substr(equals + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    (*section)[key] = value;
  }
  return section;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// Which file configures pytest in `folder`, and its testpaths, in pytest's
// own order of precedence. nullopt: none does.
struct PytestConfigFile {
  std::string file;
  std::vector<std::string> testpaths;
};

std::optional<PytestConfigFile> pytest_config_file(const fs::path& folder) {
  for (const char* name : {"pytest.ini", ".pytest.ini"})
    if (fs::exists(folder / name)) {
      const auto section = ini_section(folder / name, "pytest");
      std::vector<std::string> paths;
      if (section && section->contains("testpaths")) paths = words(section->at("testpaths"));
      return PytestConfigFile{name, paths};
    }
  if (fs::exists(folder / "pyproject.toml")) {
    toml::table parsed;
    try {
      parsed = toml::parse_file((folder / "pyproject.toml").string());
    } catch (const toml::parse_error&) {
      // pytest would refuse it and say where; not ranktest's to judge.
    }
    if (const auto* options = parsed.at_path("tool.pytest.ini_options").as_table()) {
      std::vector<std::string> paths;
      if (const auto* list = (*options)["testpaths"].as_array())
        for (const auto& entry : *list)
          if (const auto* text = entry.as_string()) paths.push_back(text->get());
      if (const auto* text = (*options)["testpaths"].as_string()) paths = words(text->get());
      return PytestConfigFile{"pyproject.toml", paths};
    }
  }
  for (const auto& [name, section_name] :
       {std::pair{"tox.ini", "pytest"}, std::pair{"setup.cfg", "tool:pytest"}})
    if (const auto section = ini_section(folder / name, section_name)) {
      std::vector<std::string> paths;
      if (section->contains("testpaths")) paths = words(section->at("testpaths"));
      return PytestConfigFile{name, paths};
    }
  return std::nullopt;
}

SourceConfig pytest_source(std::vector<std::string> paths, std::string place) {
  SourceConfig source;
  source.kind = SuiteKind::pytest;
  source.paths = std::move(paths);
  source.fork_server = true;
  source.python_implied = true;
  source.place = Place{std::move(place)};
  return source;
}

SourceConfig ctest_source(const std::string& folder, std::string place) {
  SourceConfig source;
  source.kind = SuiteKind::ctest;
  source.paths = {folder};
  source.fork_server = false;
  source.place = Place{std::move(place)};
  return source;
}

}  // namespace

std::vector<std::string> pytest_testpaths(const fs::path& folder) {
  const auto found = pytest_config_file(folder);
  return found ? found->testpaths : std::vector<std::string>{};
}

ImpliedSources sources_of_folder(const fs::path& folder) {
  ImpliedSources implied;
  const auto config_file = pytest_config_file(folder);
  if (config_file || fs::exists(folder / "conftest.py") || holds_python_tests(folder)) {
    std::vector<std::string> paths =
        config_file && !config_file->testpaths.empty() ? config_file->testpaths
                                                        : std::vector<std::string>{"."};
    const auto why = config_file ? config_file->file
                     : fs::exists(folder / "conftest.py") ? std::string("conftest.py")
                                                          : std::string("test_*.py files");
    implied.found.push_back(
        fmt::format("a pytest project ({}; collecting {})", why, fmt::join(paths, " ")));
    implied.sources.push_back(pytest_source(std::move(paths), "a pytest project (" + why + ")"));
  }
  if (fs::exists(folder / "CTestTestfile.cmake")) {
    implied.found.push_back("a CMake build folder (CTestTestfile.cmake)");
    implied.sources.push_back(ctest_source(".", "a CMake build folder"));
  }
  return implied;
}

Expected<SourceConfig> source_of_path(const std::string& path) {
  std::error_code error;
  const fs::path given(path);
  if (fs::is_directory(given, error)) {
    if (fs::exists(given / "CTestTestfile.cmake"))
      return ctest_source(path, fmt::format("{} on the command line (a CMake build folder)", path));
    if (fs::exists(given / "conftest.py") || holds_python_tests(given))
      return pytest_source({path}, fmt::format("{} on the command line (Python tests)", path));
    return Error{fmt::format(
        "{}: a folder with neither Python tests (test_*.py, *_test.py, conftest.py) nor a "
        "CMake build's CTestTestfile.cmake; name a test binary, a Python test file or folder, "
        "or a CMake build folder",
        path)};
  }
  if (given.extension() == ".py") {
    if (!fs::exists(given, error))
      return Error{fmt::format("{}: no such file; name a Python test file that exists", path)};
    return pytest_source({path}, fmt::format("{} on the command line (a Python test file)", path));
  }
  SourceConfig source;  // a test binary: the gtest discoverer says if it is not one
  source.paths = {path};
  source.place = Place{"command line"};
  return source;
}

}  // namespace ranktest::config
