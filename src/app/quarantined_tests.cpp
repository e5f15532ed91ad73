#include "app/quarantined_tests.h"

namespace ranktest::app {

std::map<const TestCase*, events::Quarantine> quarantined_tests(
    const select::TestPlan& plan, const std::vector<config::QuarantineEntry>& entries) {
  std::map<const TestCase*, events::Quarantine> quarantined;
  if (entries.empty()) return quarantined;
  const auto consider = [&](const TestCase& test) {
    for (const auto& entry : entries)
      if (select::glob_matches_test(entry.test, test)) {
        quarantined.emplace(&test, events::Quarantine{entry.reason, entry.until,
                                                      entry.place.to_string()});
        return;
      }
  };
  for (const auto& test : plan.to_run) consider(*test.test);
  for (const auto* test : plan.to_skip) consider(*test);
  for (const auto& entry : plan.cannot_run) consider(*entry.test);
  return quarantined;
}

}  // namespace ranktest::app
