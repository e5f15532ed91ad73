// A finished (or cut short) run read back from its folder's events.jsonl,
// for `ranktest report` and `ranktest merge`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "app/prepare.h"
#include "events/event.h"

namespace ranktest::app {

struct StoredRun {
  // Complete, whatever the journal holds: run-started first, run-finished
  // last; a test that started and never finished (the runner was killed),
  // a planned test that never started and a retry that never ran each get a
  // test-finished `not-run: runner died`.
  std::vector<events::Event> events;
  bool runner_died = false;
  // Lines of the journal that were skipped, said to the person once each
  // ("events.jsonl:12: ...").
  std::vector<std::string> warnings;
};

std::variant<StoredRun, Failure> load_stored_run(const std::filesystem::path& run_dir);

}  // namespace ranktest::app
