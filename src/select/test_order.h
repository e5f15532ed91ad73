// The order CTest's test properties put tests in: DEPENDS, and fixtures
// (FIXTURES_SETUP / _CLEANUP / _REQUIRED). Names are a build folder's own:
// a test's DEPENDS and fixtures reach only the tests of its source label.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/test_case.h"

namespace ranktest::select {

struct TestPlan;

// A fixture's or a test's name as `test`'s build folder knows it:
// "<source label>::<name>" (a test's id is its own scoped name).
std::string scoped_name(const TestCase& test, const std::string& name);

// A test that must end before another starts.
struct Prerequisite {
  std::size_t index = 0;  // into the same list as the test that waits
  // A setup of a fixture the waiting test requires: if it fails, the
  // waiting test does not run (a skipped setup lets it run, as in ctest).
  bool must_pass = false;
  std::string fixture;  // the fixture, where must_pass
};

// For each of `tests`, what must end before it starts: the tests it
// DEPENDS on; the setups of each fixture it requires; for a cleanup, every
// test requiring its fixture and the fixture's setups. Tests absent from
// `tests` order nothing.
std::vector<std::vector<Prerequisite>> prerequisites_among(
    const std::vector<const TestCase*>& tests);

// Indices of tests that wait for one another in a circle (each waits for
// the next, the last for the first), or nothing when there is none.
std::optional<std::vector<std::size_t>> find_cycle(
    const std::vector<std::vector<Prerequisite>>& before);

// Marks, besides the tests `runs` already marks, the setup and cleanup
// tests of every fixture a marked test requires, and theirs in turn: as
// ctest adds them to a selection (ctest -R). Returns how many it marked.
std::size_t add_fixture_tests(const std::vector<TestCase>& tests, std::vector<bool>& runs);

// What the scheduler needs to start the plan's tests in order.
struct RunOrder {
  // Per test of to_run, as prerequisites_among; empty when none has any.
  std::vector<std::vector<Prerequisite>> before;
  // Per test of to_run, why it cannot run whatever happens (a setup of a
  // fixture it requires cannot run here); empty strings otherwise, or an
  // empty vector when none is blocked.
  std::vector<std::string> blocked;
  bool empty() const { return before.empty() && blocked.empty(); }
};
RunOrder run_order(const TestPlan& plan);

}  // namespace ranktest::select
