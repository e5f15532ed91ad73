// GoogleTest: one test of a binary runs as the binary with --gtest_filter
// naming it and --gtest_output writing its JSON report; its fork server is
// the binary itself with libranktest-forkserver.so preloaded.
#include <fmt/format.h>

#include "frameworks/framework_adapter.h"
#include "frameworks/gtest/gtest_invocation.h"
#include "text/hex.h"

namespace ranktest::execute {
namespace {

// Argv and environment go to the gtest server byte for byte (a test name
// need not be UTF-8); JSON strings cannot carry that, so hex.
nlohmann::json hex(const std::vector<std::string>& strings) {
  auto list = nlohmann::json::array();
  for (const auto& bytes : strings) list.push_back(text::to_hex(bytes));
  return list;
}

class GtestAdapter final : public FrameworkAdapter {
 public:
  std::string_view report_stem() const override { return "gtest"; }

  void add_command(const TestCase& test, const std::filesystem::path& report,
                   const std::filesystem::path&, RankPlan& plan) const override {
    const TestSource& source = *test.source;
    plan.argv.push_back(source.executable.string());
    // The user's arguments first: gtest takes the last of a repeated flag,
    // so ranktest's own filter and report path win.
    plan.argv.insert(plan.argv.end(), source.extra_args.begin(), source.extra_args.end());
    plan.argv.push_back("--gtest_filter=" + framework::gtest_filter_selecting(std::string(test.name())));
    plan.argv.push_back("--gtest_output=json:" + report.string());
    plan.set.emplace_back("GTEST_COLOR", "no");
    plan.remove = framework::gtest_variables_to_remove();
  }

  RankReading read(const TestCase& test, const ProcessEnd& end,
                   const std::optional<std::string>& report,
                   std::string_view log_tail) const override {
    std::optional<GtestVerdict> verdict;
    if (report) verdict = read_gtest_verdict(*report, std::string(test.name()));
    RankReading reading;
    reading.result = classify_gtest_test(end, verdict, log_tail);
    reading.excerpt = gtest_test_output(log_tail, std::string(test.name()), reading.result.failures);
    return reading;
  }

  Expected<RankPlan> fork_server_command(const TestSource& source,
                                         const std::filesystem::path& library) const override {
    RankPlan plan;
    plan.argv = {source.executable.string()};
    plan.set.emplace_back("LD_PRELOAD", library.string());
    return plan;
  }

  void add_fork_request(const TestCase&, const std::vector<std::string>& argv,
                        const std::vector<std::string>& environment, bool full_exit,
                        nlohmann::json& message) const override {
    message["argv_hex"] = hex(argv);
    message["env_hex"] = hex(environment);
    message["exit"] = full_exit ? "full" : "fast";
  }

  bool has_fast_exit() const override { return true; }
  bool takes_the_gate() const override { return true; }

  std::optional<bool> exit_agrees(const TestCase& test, const ProcessExit& exit,
                                  const std::optional<std::string>& report) const override {
    if (!report) return std::nullopt;
    return exit_agrees_with_report(exit, read_gtest_verdict(*report, std::string(test.name())));
  }
};

}  // namespace

const FrameworkAdapter& gtest_adapter() {
  static const GtestAdapter adapter;
  return adapter;
}

}  // namespace ranktest::execute
