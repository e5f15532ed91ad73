#pragma once

#include <filesystem>
#include <vector>

#include "app/options.h"

namespace ranktest::app {

// `ranktest report RUN_DIR`: rebuilds the terminal summary (and with
// --junit, the JUnit file) of a run from its events.jsonl alone, even when
// the runner was killed in the middle: tests that had started but never
// finished are reported `not-run: runner died`.
int report_command(const CommandLine& cli, const std::filesystem::path& run_dir);

// `ranktest merge RUN_DIR...`: one summary (and --junit, --html, --trace)
// of several runs, such as the partitions of one suite run by a CI matrix.
// Slots are renumbered per run so the timeline keeps them apart; exits 1
// when any test failed or any run's runner died.
int merge_command(const CommandLine& cli, const std::vector<std::filesystem::path>& run_dirs);

}  // namespace ranktest::app
