#include "frameworks/pytest/pytest_project.h"

#include <fstream>
#include <map>
#include <sstream>
#include <toml++/toml.h>

namespace ranktest::discover {
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

}  // namespace

std::vector<std::string> pytest_testpaths(const fs::path& folder) {
  const auto found = pytest_config_file(folder);
  return found ? found->testpaths : std::vector<std::string>{};
}

std::optional<PytestProject> pytest_project_in(const fs::path& folder) {
  const auto config_file = pytest_config_file(folder);
  if (!config_file && !fs::exists(folder / "conftest.py") && !holds_python_tests(folder))
    return std::nullopt;
  PytestProject project;
  project.testpaths = config_file && !config_file->testpaths.empty()
                          ? config_file->testpaths
                          : std::vector<std::string>{"."};
  project.found_by = config_file ? config_file->file
                     : fs::exists(folder / "conftest.py") ? std::string("conftest.py")
                                                          : std::string("test_*.py files");
  return project;
}

}  // namespace ranktest::discover
