#include "select/test_plan.h"

#include "text/glob.h"

namespace ranktest::select {

bool glob_matches_test(const std::string& glob, const TestCase& test) {
  return text::glob_match(glob, test.id) || text::glob_match(glob, test.name);
}

bool selection_matches(const Selection& selection, const TestCase& test) {
  if (selection.empty()) return true;
  for (const auto& glob : selection.globs)
    if (glob_matches_test(glob, test)) return true;
  for (const auto& name : selection.exact)
    if (name == test.id || name == test.name) return true;
  return false;
}

ResolvedSettings resolve_settings(const config::Config& config,
                                  const TestCase& test) {
  ResolvedSettings settings{config.timeout};
  bool timeout_set = false;
  for (const auto& entry : config.overrides) {
    if (!glob_matches_test(entry.filter, test)) continue;
    if (!timeout_set && entry.settings.timeout) {
      settings.timeout = *entry.settings.timeout;
      timeout_set = true;
    }
  }
  return settings;
}

TestPlan plan_tests(const std::vector<TestCase>& tests,
                    const Selection& selection, const config::Config& config) {
  TestPlan plan;
  for (const auto& test : tests) {
    if (!selection_matches(selection, test)) {
      ++plan.filtered_out;
    } else if (test.skip_reason) {
      plan.to_skip.push_back(test);
    } else {
      plan.to_run.push_back(PlannedTest{test, resolve_settings(config, test)});
    }
  }
  return plan;
}

}  // namespace ranktest::select
