#include "select/test_order.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "select/test_plan.h"

namespace ranktest::select {
namespace {

bool orders_anything(const TestDetails& details) {
  return !details.depends.empty() || !details.fixtures_setup.empty() ||
         !details.fixtures_cleanup.empty() || !details.fixtures_required.empty();
}

}  // namespace

std::string scoped_name(const TestCase& test, const std::string& name) {
  return test.source->label + "::" + name;
}

std::vector<std::vector<Prerequisite>> prerequisites_among(
    const std::vector<const TestCase*>& tests) {
  struct Fixture {
    std::vector<std::size_t> setups, cleanups, requirers;
  };
  std::map<std::string, Fixture> fixtures;  // scoped name -> its tests
  bool depends = false;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const auto& details = tests[i]->detail();
    if (!orders_anything(details)) continue;
    depends = depends || !details.depends.empty();
    for (const auto& name : details.fixtures_setup)
      fixtures[scoped_name(*tests[i], name)].setups.push_back(i);
    for (const auto& name : details.fixtures_cleanup)
      fixtures[scoped_name(*tests[i], name)].cleanups.push_back(i);
    for (const auto& name : details.fixtures_required)
      fixtures[scoped_name(*tests[i], name)].requirers.push_back(i);
  }
  if (fixtures.empty() && !depends) return {};

  std::vector<std::vector<Prerequisite>> before(tests.size());
  if (depends) {
    std::unordered_map<std::string, std::size_t> by_id;
    for (std::size_t i = 0; i < tests.size(); ++i) by_id.emplace(tests[i]->id, i);
    for (std::size_t i = 0; i < tests.size(); ++i)
      for (const auto& name : tests[i]->detail().depends)
        if (const auto found = by_id.find(scoped_name(*tests[i], name));
            found != by_id.end() && found->second != i)
          before[i].push_back(Prerequisite{found->second, false, {}});
  }
  for (const auto& [scoped_name, fixture] : fixtures) {
    const auto name = scoped_name.substr(scoped_name.find("::") + 2);
    for (const auto requirer : fixture.requirers) {
      for (const auto setup : fixture.setups)
        if (setup != requirer) before[requirer].push_back(Prerequisite{setup, true, name});
      for (const auto cleanup : fixture.cleanups)
        if (cleanup != requirer) before[cleanup].push_back(Prerequisite{requirer, false, {}});
    }
    for (const auto cleanup : fixture.cleanups)
      for (const auto setup : fixture.setups)
        if (setup != cleanup) before[cleanup].push_back(Prerequisite{setup, false, {}});
  }
  return before;
}

std::optional<std::vector<std::size_t>> find_cycle(
    const std::vector<std::vector<Prerequisite>>& before) {
  // Take away every test whose prerequisites are all taken: what is left
  // waits, each of it, for another test that is left.
  const auto count = before.size();
  std::vector<std::size_t> waiting(count, 0);
  std::vector<std::vector<std::size_t>> after(count);
  for (std::size_t test = 0; test < count; ++test)
    for (const auto& prerequisite : before[test]) {
      ++waiting[test];
      after[prerequisite.index].push_back(test);
    }
  std::vector<std::size_t> free;
  for (std::size_t test = 0; test < count; ++test)
    if (waiting[test] == 0) free.push_back(test);
  while (!free.empty()) {
    const auto test = free.back();
    free.pop_back();
    for (const auto next : after[test])
      if (--waiting[next] == 0) free.push_back(next);
  }
  std::size_t start = count;
  for (std::size_t test = 0; test < count && start == count; ++test)
    if (waiting[test] > 0) start = test;
  if (start == count) return std::nullopt;
  // Walk from a test left to one it waits for that is left too, until a
  // test comes again: from there on, the walk is the circle.
  std::vector<std::size_t> walk;
  std::vector<std::size_t> position(count, count);
  auto test = start;
  while (position[test] == count) {
    position[test] = walk.size();
    walk.push_back(test);
    for (const auto& prerequisite : before[test])
      if (waiting[prerequisite.index] > 0) {
        test = prerequisite.index;
        break;
      }
  }
  return std::vector<std::size_t>(walk.begin() + static_cast<std::ptrdiff_t>(position[test]),
                                  walk.end());
}

std::size_t add_fixture_tests(const std::vector<TestCase>& tests, std::vector<bool>& runs) {
  std::map<std::string, std::vector<std::size_t>> providers;  // scoped fixture -> tests
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const auto& details = tests[i].detail();
    for (const auto& name : details.fixtures_setup) providers[scoped_name(tests[i], name)].push_back(i);
    for (const auto& name : details.fixtures_cleanup)
      providers[scoped_name(tests[i], name)].push_back(i);
  }
  if (providers.empty()) return 0;
  std::vector<std::size_t> work;
  for (std::size_t i = 0; i < tests.size(); ++i)
    if (runs[i]) work.push_back(i);
  std::size_t added = 0;
  while (!work.empty()) {
    const auto test = work.back();
    work.pop_back();
    for (const auto& name : tests[test].detail().fixtures_required) {
      const auto found = providers.find(scoped_name(tests[test], name));
      if (found == providers.end()) continue;
      for (const auto provider : found->second)
        if (!runs[provider]) {
          runs[provider] = true;
          ++added;
          work.push_back(provider);
        }
    }
  }
  return added;
}

RunOrder run_order(const TestPlan& plan) {
  RunOrder order;
  std::vector<const TestCase*> tests;
  tests.reserve(plan.to_run.size());
  for (const auto& planned : plan.to_run) tests.push_back(planned.test);
  order.before = prerequisites_among(tests);
  // A fixture whose setup can never run here (it needs devices the machine
  // lacks): the tests requiring it cannot run either.
  std::map<std::string, const NotRunnable*> unrunnable_setups;
  for (const auto& entry : plan.cannot_run)
    for (const auto& name : entry.test->detail().fixtures_setup)
      unrunnable_setups.emplace(scoped_name(*entry.test, name), &entry);
  if (unrunnable_setups.empty()) return order;
  for (std::size_t i = 0; i < tests.size(); ++i)
    for (const auto& name : tests[i]->detail().fixtures_required) {
      const auto found = unrunnable_setups.find(scoped_name(*tests[i], name));
      if (found == unrunnable_setups.end()) continue;
      order.blocked.resize(tests.size());
      order.blocked[i] = fmt::format("the setup test {} of its fixture {} cannot run here: {}",
                                     found->second->test->id, name, found->second->reason);
      break;
    }
  return order;
}

}  // namespace ranktest::select
