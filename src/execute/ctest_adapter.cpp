// CTest: a test runs as the command CTest would run, in its working
// directory with its environment (the test's TestSource holds all three);
// its verdict is its exit, read with CTest's rules. No result file and no
// fork server: the command may be anything.
#include "execute/ctest_result.h"
#include "execute/framework_adapter.h"

namespace ranktest::execute {
namespace {

class CtestAdapter final : public FrameworkAdapter {
 public:
  std::string_view report_stem() const override { return "ctest"; }

  void add_command(const TestCase& test, const std::filesystem::path&,
                   const std::filesystem::path&, RankPlan& plan) const override {
    const TestSource& source = *test.source;
    plan.argv.push_back(source.executable.string());
    plan.argv.insert(plan.argv.end(), source.extra_args.begin(), source.extra_args.end());
  }

  RankReading read(const TestCase& test, const ProcessEnd& end, const std::optional<std::string>&,
                   std::string_view log_tail) const override {
    RankReading reading;
    reading.result = classify_ctest_test(end, test.detail().exit_rules, log_tail);
    reading.excerpt = std::string(log_tail);
    return reading;
  }

  Expected<RankPlan> fork_server_command(const TestSource&,
                                         const std::filesystem::path&) const override {
    return Error{"a ctest source has no fork server (its tests are any commands)"};
  }

  void add_fork_request(const TestCase&, const std::vector<std::string>&,
                        const std::vector<std::string>&, bool, nlohmann::json&) const override {}
};

}  // namespace

const FrameworkAdapter& ctest_adapter() {
  static const CtestAdapter adapter;
  return adapter;
}

}  // namespace ranktest::execute
