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
  // What the steps hand on to each other; its members are destroyed in the
  // reverse of their order (the reporters before the run folder's lock).
  struct State;
  std::unique_ptr<State> state_;
  void warn(const std::string& message);
  std::optional<int> open_reporters();
  void watch_workers();
};

}  // namespace ranktest::app
