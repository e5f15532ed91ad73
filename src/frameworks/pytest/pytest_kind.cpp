// pytest suites as a framework: collected by pytest itself with ranktest's
// plugin (pytest_discoverer.cpp), each test forked from the source's fork
// server (or run in a fresh interpreter), read from the plugin's report
// (pytest_adapter.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "config/config.h"
#include "frameworks/framework_adapter.h"
#include "frameworks/framework_kind.h"
#include "frameworks/pytest/pytest_discoverer.h"
#include "frameworks/pytest/pytest_project.h"
#include "frameworks/pytest/python_with_pytest.h"

namespace ranktest::execute {
const FrameworkAdapter& pytest_adapter();
}

namespace ranktest::frameworks {
namespace {

// An implied pytest source (no ranktest.toml) runs with the first python3
// on PATH that can import pytest, as `pytest` itself would be found: the
// python3 first on PATH may be another interpreter, without it.
void choose_python(config::SourceConfig& source, process::SignalWatch& signals) {
  const auto with_pytest = discover::python3s_with_pytest("", signals);
  if (with_pytest.empty()) return;  // the discoverer says what to install
  const auto first = discover::other_python3s(std::getenv("PATH") ? std::getenv("PATH") : "", "");
  if (!first.empty() && first.front() != with_pytest.front())
    fmt::print(stderr, "ranktest: {} cannot import pytest; running pytest with {}\n",
               first.front().string(), with_pytest.front().string());
  source.python = with_pytest.front().string();
}

class PytestFramework final : public FrameworkKind {
  // With the first python3 on PATH that can import pytest (choose_python).
  config::SourceConfig source(std::vector<std::string> paths, std::string place) const {
    config::SourceConfig source;
    source.kind = SuiteKind::pytest;
    source.paths = std::move(paths);
    source.fork_server = source_rules().fork_server_by_default;
    source.python_implied = true;
    source.place = config::Place{std::move(place)};
    return source;
  }

 public:
  SuiteKind id() const override { return SuiteKind::pytest; }
  std::string_view name() const override { return "pytest"; }

  // pytest sources fork each test from a server by default: a fresh
  // interpreter per test re-imports the suite each time (14x xdist on
  // numpy). A failure seen only when forked is confirmed in a fresh process
  // before it is reported, so the default costs no truth.
  SourceRules source_rules() const override {
    return {{}, true, "[[source]] needs 'paths', e.g. paths = [\"tests\"]"};
  }

  // No ranktest.toml: pytest's own testpaths, else the folder.
  std::optional<ImpliedSource> implied_by_folder(
      const std::filesystem::path& folder) const override {
    auto project = discover::pytest_project_in(folder);
    if (!project) return std::nullopt;
    return ImpliedSource{
        source(project->testpaths, "a pytest project (" + project->found_by + ")"),
        fmt::format("a pytest project ({}; collecting {})", project->found_by,
                    fmt::join(project->testpaths, " "))};
  }
  std::optional<Expected<config::SourceConfig>> source_of_path(
      const std::string& path) const override {
    std::error_code error;
    const std::filesystem::path given(path);
    if (std::filesystem::is_directory(given, error)) {
      if (!discover::pytest_project_in(given)) return std::nullopt;
      return source({path}, fmt::format("{} on the command line (Python tests)", path));
    }
    if (given.extension() != ".py") return std::nullopt;
    if (!std::filesystem::exists(given, error))
      return Expected<config::SourceConfig>(
          Error{fmt::format("{}: no such file; name a Python test file that exists", path)});
    return source({path}, fmt::format("{} on the command line (a Python test file)", path));
  }
  std::string_view command_line_path() const override { return "a Python test file or folder"; }
  std::string_view folder_marks() const override {
    return "pytest project (pytest.ini, pyproject.toml, setup.cfg, tox.ini, conftest.py or "
           "test_*.py files)";
  }

  std::vector<std::string> selection_arguments(
      const std::optional<std::string>& markers,
      const std::optional<std::string>& keyword) const override {
    std::vector<std::string> arguments;
    if (markers) arguments.insert(arguments.end(), {"-m", *markers});
    if (keyword) arguments.insert(arguments.end(), {"-k", *keyword});
    return arguments;
  }

  Expected<Discovered> discover(const std::vector<const config::SourceConfig*>& sources,
                                DiscoveryContext& context) const override {
    Discovered found;
    for (const auto* configured : sources) {
      auto source = *configured;
      if (source.python_implied) choose_python(source, context.signals);
      auto collected = discover::discover_pytest_source(source, context.config, context.signals,
                                                        !context.recollect);
      if (!collected) return collected.error();
      if (collected->interrupted_by) {
        found.interrupted_by = collected->interrupted_by;
        found.interrupted_while = "collecting " + source.place.to_string();
        return found;
      }
      std::move(collected->tests.begin(), collected->tests.end(),
                std::back_inserter(found.tests));
    }
    return found;
  }

  // Its fork server forks the worker; a source run plain has none.
  WorkerStyle worker_style(const TestSource& source) const override {
    return source.fork_server          ? WorkerStyle::forked_from_server
           : source.collecting_workers ? WorkerStyle::collecting
                                       : WorkerStyle::none;
  }
  // xdist's speed on suites of quick tests (docs/benchmarks.md).
  bool worker_isolation_by_default() const override { return true; }

  // As pytest's --junitxml (its mangle_test_address):
  // "tests/test_a.py::TestB::test_c[x.y]" is classname "tests.test_a.TestB",
  // name "test_c[x.y]".
  JunitName junit_name(const std::string& name, const std::string&) const override {
    const auto bracket = name.find('[');
    const std::string path = name.substr(0, bracket);
    std::vector<std::string> parts;
    for (std::size_t at = 0;;) {
      const auto next = path.find("::", at);
      parts.push_back(path.substr(at, next == std::string::npos ? next : next - at));
      if (next == std::string::npos) break;
      at = next + 2;
    }
    std::replace(parts.front().begin(), parts.front().end(), '/', '.');
    if (parts.front().ends_with(".py")) parts.front().resize(parts.front().size() - 3);
    if (bracket != std::string::npos) parts.back() += name.substr(bracket);
    JunitName names{"", parts.back()};
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
      names.classname += (i ? "." : "") + parts[i];
    return names;
  }

  const execute::FrameworkAdapter& adapter() const override { return execute::pytest_adapter(); }
};

}  // namespace

const FrameworkKind& pytest_framework() {
  static const PytestFramework framework;
  return framework;
}

}  // namespace ranktest::frameworks
