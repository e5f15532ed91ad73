// CTest: a test runs as the command CTest would run, in its working
// directory with its environment (the test's TestSource holds all three);
// its verdict is its exit, read with CTest's rules; the devices its
// RESOURCE_GROUPS were granted are told as ctest tells them. No result file
// and no fork server: the command may be anything.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "frameworks/ctest/ctest_result.h"
#include "frameworks/framework_adapter.h"

namespace ranktest::execute {
namespace {

std::string upper(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

class CtestAdapter final : public FrameworkAdapter {
 public:
  std::string_view report_stem() const override { return "ctest"; }

  void add_command(const TestCase& test, const std::filesystem::path&,
                   const std::filesystem::path&, RankPlan& plan) const override {
    const TestSource& source = *test.source;
    plan.argv.push_back(source.executable.string());
    plan.argv.insert(plan.argv.end(), source.extra_args.begin(), source.extra_args.end());
  }

  // CTest's resource allocation environment, as ctest sets it with a
  // resource spec file: CTEST_RESOURCE_GROUP_COUNT, CTEST_RESOURCE_GROUP_<n>
  // (the group's types) and CTEST_RESOURCE_GROUP_<n>_<TYPE> ("id:<id>,
  // slots:<slots>"). Each requirement holds a device of its own, in order.
  void add_device_environment(const TestCase& test,
                              const std::map<std::string, std::vector<std::string>>& devices,
                              RankPlan& plan) const override {
    const auto& groups = test.detail().resource_groups;
    std::map<std::string, std::size_t> next;  // type -> its next granted id
    std::size_t count = 0;
    for (const auto& group : groups) {
      std::vector<std::string> types;
      std::map<std::string, std::vector<std::string>> held;  // type -> "id:..,slots:.."
      for (const auto& requirement : group) {
        const auto granted = devices.find(requirement.type);
        auto& taken = next[requirement.type];
        if (granted == devices.end() || taken >= granted->second.size()) continue;
        if (!held.contains(requirement.type)) types.push_back(requirement.type);
        held[requirement.type].push_back(
            fmt::format("id:{},slots:{}", granted->second[taken++], requirement.slots));
      }
      if (types.empty()) continue;  // none of its types is among the devices
      const auto prefix = fmt::format("CTEST_RESOURCE_GROUP_{}", count++);
      plan.set.emplace_back(prefix, fmt::format("{}", fmt::join(types, ",")));
      for (const auto& type : types)
        plan.set.emplace_back(prefix + "_" + upper(type),
                              fmt::format("{}", fmt::join(held[type], ";")));
    }
    if (count > 0) plan.set.emplace_back("CTEST_RESOURCE_GROUP_COUNT", std::to_string(count));
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
