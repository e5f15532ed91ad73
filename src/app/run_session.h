// `ranktest run` in plain steps: plan (the configuration, discovery, the
// history and the plan), open (the run folder, its reporters,
// run-started), execute (the runner and the schedule), finish
// (run-finished and the exit code). A step that ends the run returns its
// exit code, having said why.
#pragma once

#include <memory>
#include <optional>

#include <string>

#include "app/options.h"

namespace ranktest::app {

class RunSession {
 public:
  explicit RunSession(const CommandLine& cli);
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  std::optional<int> plan();
  std::optional<int> open();
  void execute();
  int finish();

 private:
  struct State;
  // Declared in the order the original function made them: destroyed in
  // reverse (the runner's reporters before the run folder's lock).
  std::unique_ptr<State> state_;
  void warn(const std::string& message);
  std::optional<int> open_reporters();
  void watch_workers();
};

}  // namespace ranktest::app
