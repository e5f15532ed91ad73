// Events the unit tests feed reporters, built as run_command builds them.
#pragma once

#include <cstddef>

#include "events/event.h"

namespace ranktest::testing {

// A run of `tests` tests on 2 jobs.
inline events::RunStarted started_run(std::size_t tests) {
  events::RunStarted started;
  started.run_id = "r";
  started.run_dir = "runs/r";
  started.tests_to_run = tests;
  started.jobs = 2;
  return started;
}

}  // namespace ranktest::testing
