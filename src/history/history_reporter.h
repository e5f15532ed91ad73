// Writes each run's attempts to the history database as they end. History
// serves the next runs (ordering, ETA, time partitions): a database that
// cannot be written costs this run's history, said once, never the run.
//
// The writes happen on a thread of their own: SQLite may wait for another
// process's lock (up to its busy timeout) or for the disk, and the
// scheduler's loop, which enforces every test's timeout, must never wait
// with it. At the run's end the reporter waits a bounded time for what is
// queued; what is still unwritten then is said, and lost.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "events/reporter.h"
#include "history/history_db.h"

namespace ranktest::history {

class HistoryReporter final : public events::Reporter {
 public:
  // How long the run's end waits for the queued writes.
  static constexpr std::chrono::seconds kFinishWait{10};

  // As the run starts, runs older than the newest `keep_runs` are forgotten
  // (HistoryDb::forget_old_runs), while its tests run.
  HistoryReporter(std::shared_ptr<HistoryDb> db, RunContext context, std::size_t keep_runs,
                  std::FILE* warnings, std::chrono::milliseconds finish_wait = kFinishWait);
  ~HistoryReporter() override;
  HistoryReporter(const HistoryReporter&) = delete;
  HistoryReporter& operator=(const HistoryReporter&) = delete;
  std::string_view name() const override { return "history"; }
  void report(const events::Event& event) override;

 private:
  // What the reporter and its writer thread share; the writer holds it
  // too, so a writer left behind at the end (a lock never released) never
  // touches freed memory.
  struct Shared {
    std::shared_ptr<HistoryDb> db;
    RunContext context;
    std::size_t keep_runs = 0;
    std::mutex mutex;
    std::condition_variable wake;     // something queued, or done
    std::condition_variable drained;  // the queue emptied
    std::deque<events::Event> queue;
    bool busy = false;        // the writer holds events out of the queue
    std::size_t in_hand = 0;  // how many
    bool done = false;
    std::optional<std::string> failure;  // the first write that failed
  };
  static void write_queued(std::shared_ptr<Shared> shared);
  static Expected<Done> write_batch(Shared& shared, const std::deque<events::Event>& batch);
  void say_failure_once();

  std::shared_ptr<Shared> shared_;
  std::FILE* warnings_;
  std::chrono::milliseconds finish_wait_;
  bool said_ = false;
  std::thread writer_;
};

}  // namespace ranktest::history
