// CTest's tests as a framework: read from `ctest --show-only=json-v1` of a
// build folder (ctest_discoverer.cpp) and run as CTest would, each its own
// command, with CTest's rules for its result (ctest_adapter.cpp).
#include <fmt/format.h>

#include "config/config.h"
#include "frameworks/ctest/ctest_discoverer.h"
#include "frameworks/framework_adapter.h"
#include "frameworks/framework_kind.h"

namespace ranktest::execute {
const FrameworkAdapter& ctest_adapter();
}

namespace ranktest::frameworks {
namespace {

// A ctest source runs each test exactly as CTest would: its command,
// working directory and arguments are CTest's, and there is no fork
// server, so keys that would change them are refused, not ignored.
constexpr std::string_view kCtestSays =
    "is not for kind = \"ctest\" sources (CTest says how each test runs); select tests "
    "with --filter instead";

class CtestFramework final : public FrameworkKind {
  static config::SourceConfig source(const std::string& folder, std::string place) {
    config::SourceConfig source;
    source.kind = SuiteKind::ctest;
    source.paths = {folder};
    source.place = config::Place{std::move(place)};
    return source;
  }

 public:
  SuiteKind id() const override { return SuiteKind::ctest; }
  std::string_view name() const override { return "ctest"; }

  SourceRules source_rules() const override {
    return {{{"args", kCtestSays},
             {"cwd", kCtestSays},
             {"mode", kCtestSays},
             {"fork-exit", kCtestSays},
             {"exclude", kCtestSays},
             {"python", "is for kind = \"pytest\" sources only"},
             {"isolation",
              "is for kind = \"pytest\" and \"gtest\" sources (ctest runs a process per "
              "test)"}},
            false,
            "[[source]] of kind = \"ctest\" needs 'paths': the build folders, e.g. "
            "paths = [\"build\"]"};
  }

  std::optional<ImpliedSource> implied_by_folder(
      const std::filesystem::path& folder) const override {
    if (!std::filesystem::exists(folder / "CTestTestfile.cmake")) return std::nullopt;
    return ImpliedSource{source(".", "a CMake build folder"),
                         "a CMake build folder (CTestTestfile.cmake)"};
  }
  std::optional<Expected<config::SourceConfig>> source_of_path(
      const std::string& path) const override {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error) ||
        !std::filesystem::exists(std::filesystem::path(path) / "CTestTestfile.cmake"))
      return std::nullopt;
    return source(path, fmt::format("{} on the command line (a CMake build folder)", path));
  }
  std::string_view command_line_path() const override { return "a CMake build folder"; }
  std::string_view folder_marks() const override {
    return "CMake build folder (CTestTestfile.cmake)";
  }

  Expected<Discovered> discover(const std::vector<const config::SourceConfig*>& sources,
                                DiscoveryContext& context) const override {
    Discovered found;
    for (const auto* source : sources) {
      auto listed = discover::discover_ctest_source(*source, context.config, context.signals);
      if (!listed) return listed.error();
      if (listed->interrupted_by) {
        found.interrupted_by = listed->interrupted_by;
        found.interrupted_while = "listing " + source->place.to_string();
        return found;
      }
      found.warnings.insert(found.warnings.end(), listed->warnings.begin(),
                            listed->warnings.end());
      std::move(listed->tests.begin(), listed->tests.end(), std::back_inserter(found.tests));
    }
    return found;
  }

  // ranktest refuses what it cannot judge as CTest would (a test whose
  // result rules it does not know).
  bool collection_error_is_refusal() const override { return true; }

  // ctest --output-junit: the test's name, twice.
  JunitName junit_name(const std::string& name, const std::string&) const override {
    return {name, name};
  }

  const execute::FrameworkAdapter& adapter() const override { return execute::ctest_adapter(); }
};

}  // namespace

const FrameworkKind& ctest_framework() {
  static const CtestFramework framework;
  return framework;
}

}  // namespace ranktest::frameworks
