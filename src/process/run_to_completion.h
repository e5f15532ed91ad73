#pragma once

#include <chrono>
#include <optional>

#include "model/expected.h"
#include "process/child_process.h"
#include "process/signal_watch.h"

namespace ranktest::process {

struct Completion {
  ProcessExit exit;
  bool timed_out = false;               // killed by us at the deadline
  std::optional<int> interrupted_by;    // SIGINT/SIGTERM/SIGHUP to the runner
};

// Runs one command while nothing else runs, waiting at most `timeout`;
// at the deadline or on an interruption its whole group is killed.
Expected<Completion> run_to_completion(const SpawnRequest& request,
                                       SignalWatch& signals,
                                       std::chrono::milliseconds timeout);

}  // namespace ranktest::process
