// pytest: one test runs as pytest given that test alone, with ranktest's
// plugin writing how each phase went; its fork server is pytest that
// collects once, then forks a process per test (the plugin's _serve).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frameworks/framework_adapter.h"
#include "frameworks/pytest/pytest_result.h"
#include "frameworks/pytest/pytest_invocation.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

class PytestAdapter final : public FrameworkAdapter {
 public:
  std::string_view report_stem() const override { return "pytest"; }

  void add_command(const TestCase& test, const std::filesystem::path& report,
                   const std::filesystem::path& attempt_folder, RankPlan& plan) const override {
    const TestSource& source = *test.source;
    plan.argv = framework::pytest_base_args(source.executable.string());
    // -s: the test's output goes to its log as it is written (a hung
    // rank's last words matter); the plugin reports the result.
    plan.argv.push_back("-s");
    plan.argv.insert(plan.argv.end(), source.extra_args.begin(), source.extra_args.end());
    const auto& run_argument = test.detail().run_argument;
    plan.argv.push_back(run_argument.empty() ? std::string(test.name()) : run_argument);
    if (const auto plugin = framework::pytest_plugin_path())
      framework::put_plugin_on_python_path(plan.set, *plugin);
    plan.set.emplace_back("PYTHONUNBUFFERED", "1");
    plan.set.emplace_back("RANKTEST_RESULT_FILE", report.string());
    plan.set.emplace_back("RANKTEST_STACK_DIR", attempt_folder.string());
  }

  RankReading read(const TestCase& test, const ProcessEnd& end,
                   const std::optional<std::string>& report,
                   std::string_view log_tail) const override {
    std::optional<PytestVerdict> verdict;
    if (report) verdict = read_pytest_verdict(*report, std::string(test.name()));
    RankReading reading;
    reading.result = classify_pytest_test(end, verdict);
    if (verdict) reading.failed_at = verdict->failed_at;
    // What the test printed, less the failure report the plugin appends.
    reading.excerpt = std::string(log_tail.substr(0, log_tail.find("\n" + std::string(test.name()) + " FAILED in ")));
    return reading;
  }

  std::string fork_server_name(const TestSource& source) const override {
    if (source.collect_arguments.empty()) return source.label;
    return fmt::format("pytest {}", fmt::join(source.collect_arguments, " "));
  }

  Expected<RankPlan> fork_server_command(const TestSource& source,
                                         const std::filesystem::path& library) const override {
    const auto plugin = framework::pytest_plugin_path();
    if (!plugin) return Error{"cannot find ranktest's pytest plugin"};
    RankPlan plan;
    plan.argv = framework::pytest_base_args(source.executable.string());
    plan.argv.push_back("-s");
    plan.argv.insert(plan.argv.end(), source.collect_arguments.begin(),
                     source.collect_arguments.end());
    // The server's environment is the source's with this on top.
    plan.set.assign(source.env.begin(), source.env.end());
    framework::put_plugin_on_python_path(plan.set, *plugin);
    plan.set.emplace_back("PYTHONUNBUFFERED", "1");
    // How its tests become the runner's children (one fork each, not two).
    plan.set.emplace_back("RANKTEST_FORK_LIBRARY", library.string());
    return plan;
  }

  void add_fork_request(const TestCase& test, const std::vector<std::string>& argv,
                        const std::vector<std::string>& environment, bool,
                        nlohmann::json& message) const override {
    message["nodeid"] = std::string(test.name());
    // pytest's arguments as a fresh process gets them (python -m pytest
    // ARGS): the forked test's sys.argv, which a test that starts pytest
    // again for another rank (Lightning's launcher) passes on.
    auto arguments = nlohmann::json::array();
    for (std::size_t i = 3; i < argv.size(); ++i) arguments.push_back(text::repair_utf8(argv[i]));
    message["argv"] = std::move(arguments);
    auto env = nlohmann::json::object();
    for (const auto& entry : environment) {
      const auto equals = entry.find('=');
      if (equals != std::string::npos)
        env[text::repair_utf8(entry.substr(0, equals))] = text::repair_utf8(entry.substr(equals + 1));
    }
    message["env"] = std::move(env);
  }

  std::vector<std::string> collecting_worker_argv(const TestCase& test,
                                                  std::vector<std::string> argv) const override {
    // The test's argument is last (add_command): the source's instead.
    if (!argv.empty()) argv.pop_back();
    argv.insert(argv.end(), test.source->collect_arguments.begin(),
                test.source->collect_arguments.end());
    return argv;
  }

  bool dumps_stacks_on_signal() const override { return true; }
  bool watches_workers() const override { return true; }
  bool says_when_it_begins() const override { return true; }
};

}  // namespace

const FrameworkAdapter& pytest_adapter() {
  static const PytestAdapter adapter;
  return adapter;
}

}  // namespace ranktest::execute
