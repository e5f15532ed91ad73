// GoogleTest binaries as a framework: listed with --gtest_list_tests
// (gtest_discoverer.cpp), run one test per process with --gtest_filter
// (gtest_adapter.cpp) or a share per worker through GoogleTest's own loop.
#include <fmt/format.h>

#include "config/config.h"
#include "frameworks/framework_adapter.h"
#include "frameworks/framework_kind.h"
#include "frameworks/gtest/gtest_discoverer.h"

namespace ranktest::execute {
const FrameworkAdapter& gtest_adapter();
}

namespace ranktest::frameworks {
namespace {

class GtestFramework final : public FrameworkKind {
 public:
  SuiteKind id() const override { return SuiteKind::gtest; }
  std::string_view name() const override { return "gtest"; }

  SourceRules source_rules() const override {
    return {{{"python", "is for kind = \"pytest\" sources only"}},
            false,
            "[[source]] needs 'paths', e.g. paths = [\"build/tests/*_test\"]"};
  }

  // Any file that no other framework took: the discoverer says if it is no
  // test binary. Test binaries on the command line share one source.
  std::optional<Expected<config::SourceConfig>> source_of_path(
      const std::string& path) const override {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) return std::nullopt;
    config::SourceConfig source;
    source.paths = {path};
    source.place = config::Place{"command line"};
    return source;
  }
  std::string_view command_line_path() const override { return "a test binary"; }

  // Every gtest source's binaries are listed together, `jobs` at a time,
  // unchanged ones from the listing cache.
  Expected<Discovered> discover(const std::vector<const config::SourceConfig*>& sources,
                                DiscoveryContext& context) const override {
    auto binaries = discover::resolve_gtest_binaries(sources, context.config);
    if (!binaries) return binaries.error();
    auto listed = discover::discover_gtest_binaries(
        *binaries, context.signals,
        discover::ListingOptions{
            static_cast<std::size_t>(std::max(1, context.config.jobs)),
            context.recollect ? std::filesystem::path()
                              : context.config.state_dir / "gtest-listings",
            context.progress});
    if (!listed) return listed.error();
    Discovered found;
    for (std::size_t i = 0; i < listed->size(); ++i) {
      auto& binary = (*listed)[i];
      if (binary.interrupted_by) {
        found.interrupted_by = binary.interrupted_by;
        found.interrupted_while = "listing " + (*binaries)[i].executable.string();
        return found;
      }
      found.warnings.insert(found.warnings.end(), binary.warnings.begin(),
                            binary.warnings.end());
      if (found.tests.empty()) {
        found.tests = std::move(binary.tests);
      } else {
        found.tests.reserve(found.tests.size() + binary.tests.size());
        std::move(binary.tests.begin(), binary.tests.end(), std::back_inserter(found.tests));
      }
    }
    return found;
  }

  WorkerStyle worker_style(const TestSource&) const override { return WorkerStyle::own_loop; }
  // One rule for every framework (docs/configuration.md, isolation): a
  // binary's tests run as the binary alone runs them, through GoogleTest's
  // own loop, unless they need a process of their own.
  bool worker_isolation_by_default() const override { return true; }

  // --gtest_output=xml: the suite, and the test.
  JunitName junit_name(const std::string& name, const std::string& source) const override {
    const auto dot = name.find('.');
    if (dot == std::string::npos) return {source, name};
    return {name.substr(0, dot), name.substr(dot + 1)};
  }

  const execute::FrameworkAdapter& adapter() const override { return execute::gtest_adapter(); }
};

}  // namespace

const FrameworkKind& gtest_framework() {
  static const GtestFramework framework;
  return framework;
}

}  // namespace ranktest::frameworks
