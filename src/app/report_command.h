#pragma once

#include <filesystem>

#include "app/options.h"

namespace ranktest::app {

// `ranktest report RUN_DIR`: rebuilds the terminal summary (and with
// --junit, the JUnit file) of a run from its events.jsonl alone, even when
// the runner was killed in the middle: tests that had started but never
// finished are reported `not-run: runner died`.
int report_command(const CommandLine& cli, const std::filesystem::path& run_dir);

}  // namespace ranktest::app
