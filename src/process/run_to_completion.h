#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "model/expected.h"
#include "process/child_process.h"
#include "process/signal_watch.h"

namespace ranktest::process {

struct Completion {
  ProcessExit exit;
  std::chrono::milliseconds elapsed{0};  // from its start to its end
  bool timed_out = false;               // killed by us at the deadline
  std::optional<int> interrupted_by;    // SIGINT/SIGTERM/SIGHUP to the runner
};

// Runs one command while nothing else runs, waiting at most `timeout`;
// at the deadline or on an interruption its whole group is killed.
Expected<Completion> run_to_completion(const SpawnRequest& request,
                                       SignalWatch& signals,
                                       std::chrono::milliseconds timeout);

// Runs every command, at most `jobs` at once, request i for at most
// timeouts[i]; one result per request, in order. On an interruption every
// running command is killed, and those not started yet say so too.
// `progress`, where given, is told how many have ended: after each look at
// the children (when one or more ended, and at least once a second).
std::vector<Expected<Completion>> run_all_to_completion(
    const std::vector<SpawnRequest>& requests, std::size_t jobs, SignalWatch& signals,
    const std::vector<std::chrono::milliseconds>& timeouts,
    const std::function<void(std::size_t ended)>& progress = {});

}  // namespace ranktest::process
