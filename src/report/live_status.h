// The line at the bottom of a terminal that says how the run goes while it
// goes: done/total, failures so far, the running tests with how long each has
// run (longest first: the likely hang), and an estimate of the time left.
// Only on a TTY; CI logs get plain lines. It is redrawn four times a second
// by a thread of its own, so elapsed times move while nothing finishes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "events/event.h"

namespace ranktest::report {

using Millis = std::chrono::milliseconds;

struct Progress {
  std::size_t done = 0;
  std::size_t total = 0;
  std::size_t failed = 0;
  Millis elapsed{0};
  std::vector<std::pair<std::string, Millis>> running;  // id, how long so far
  std::optional<Millis> remaining;
};

// " 12/40  2 failed  0:07  ETA 0:24  running: a 3.2s, b 1.0s, +3 more",
// cut to `width` columns (a wrapped line could not be redrawn in place).
std::string format_status_line(const Progress& progress, std::size_t width);

// What is left to do. A test's expected time is its duration in the previous
// run; a test without one is expected to take the mean of those that have
// one. Nothing known: no estimate.
struct WorkLeft {
  Millis pending_known{0};        // expected time of the tests not started that have one
  std::size_t pending_unknown = 0;  // how many tests not started have none
  std::vector<std::pair<Millis, std::optional<Millis>>> running;  // elapsed, expected
  int jobs = 1;
};
std::optional<Millis> estimate_remaining(const WorkLeft& work,
                                         std::optional<Millis> mean_expected);

class LiveStatus {
 public:
  // `ansi`: erase the line with an escape sequence, else with spaces (for
  // NO_COLOR, which asks for no escape sequences at all).
  LiveStatus(std::FILE* out, bool ansi, std::map<std::string, Millis> expected);
  ~LiveStatus();
  LiveStatus(const LiveStatus&) = delete;
  LiveStatus& operator=(const LiveStatus&) = delete;

  // Everything the reporter prints goes between begin_output (the line is
  // taken away) and end_output (the event is counted, the line drawn again
  // below what was printed). The lock keeps the ticker out meanwhile.
  std::unique_lock<std::mutex> begin_output();
  void end_output(const events::Event& event, std::unique_lock<std::mutex>& lock);

 private:
  void tick();
  void erase();
  void draw();
  Progress progress() const;

  std::FILE* out_;
  bool ansi_;
  std::map<std::string, Millis> expected_;
  std::optional<Millis> mean_expected_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool drawn_ = false;
  std::size_t drawn_width_ = 0;
  bool running_run_ = false;  // between run-started and run-finished
  std::chrono::steady_clock::time_point run_start_;
  std::size_t total_ = 0;
  std::size_t done_ = 0;
  std::size_t failed_ = 0;
  int jobs_ = 1;
  // With no previous durations, the tests that ended so far set the mean.
  Millis finished_sum_{0};
  std::size_t finished_count_ = 0;
  // Planned and not yet started; their expected time, summed.
  std::unordered_set<std::string> pending_;
  Millis pending_known_{0};
  std::size_t pending_unknown_ = 0;
  std::map<std::pair<std::string, int>, std::chrono::steady_clock::time_point> running_;
  std::thread ticker_;  // last: started once everything above is ready
};

// The width of the terminal on `out`, or 80 when it cannot be told.
std::size_t terminal_width(std::FILE* out);

}  // namespace ranktest::report
