#include "history/history_reporter.h"

#include <fmt/format.h>

#include "config/duration.h"
#include "model/overloaded.h"

namespace ranktest::history {

HistoryReporter::HistoryReporter(std::shared_ptr<HistoryDb> db, RunContext context,
                                 std::size_t keep_runs, std::FILE* warnings,
                                 std::chrono::milliseconds finish_wait)
    : shared_(std::make_shared<Shared>()), warnings_(warnings), finish_wait_(finish_wait) {
  shared_->db = std::move(db);
  shared_->context = std::move(context);
  shared_->keep_runs = keep_runs;
  if (shared_->db) writer_ = std::thread(write_queued, shared_);
}

HistoryReporter::~HistoryReporter() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->done = true;
  }
  shared_->wake.notify_all();
  if (!writer_.joinable()) return;
  // The queue was waited for at the run's end; a writer still inside
  // SQLite's wait is left to it (it owns what it uses) and ends with us.
  std::unique_lock lock(shared_->mutex);
  const bool idle = !shared_->busy && shared_->queue.empty();
  lock.unlock();
  if (idle) writer_.join();
  else writer_.detach();
}

void HistoryReporter::write_queued(std::shared_ptr<Shared> shared) {
  std::unique_lock lock(shared->mutex);
  for (;;) {
    shared->wake.wait(lock, [&] { return shared->done || !shared->queue.empty(); });
    if (shared->queue.empty()) return;  // done, and nothing left
    // Everything queued by now, in one transaction: tests ending faster
    // than a write each cost one write together.
    std::deque<events::Event> batch;
    batch.swap(shared->queue);
    shared->busy = true;
    shared->in_hand = batch.size();
    const bool failed_before = shared->failure.has_value();
    lock.unlock();
    Expected<Done> done = Done{};
    if (!failed_before) done = write_batch(*shared, batch);
    lock.lock();
    shared->busy = false;
    shared->in_hand = 0;
    if (!done && !shared->failure) shared->failure = done.error().message;
    if (shared->queue.empty()) shared->drained.notify_all();
  }
}

Expected<Done> HistoryReporter::write_batch(Shared& shared, const std::deque<events::Event>& batch) {
  HistoryDb& db = *shared.db;
  const bool together = batch.size() > 1;
  if (together)
    if (auto begun = db.begin(); !begun) return begun;
  Expected<Done> done = Done{};
  bool started = false;
  for (const auto& event : batch) {
    std::visit(Overloaded{
                   [&](const events::RunStarted& e) {
                     done = db.record_run_started(e, shared.context);
                     started = true;
                   },
                   [&](const events::TestFinished& e) {
                     done = db.record_attempt(e, shared.context);
                   },
                   [&](const events::RunFinished& e) { done = db.record_run_finished(e); },
                   [](const auto&) {}},
               event);
    if (!done) break;
  }
  if (together) {
    if (done) done = db.commit();
    if (!done) db.roll_back();
  }
  // While the tests run, nobody waits for it; best effort: a runner
  // holding the file leaves the old runs to the next run.
  if (done && started) [[maybe_unused]] auto forgot = db.forget_old_runs(shared.keep_runs);
  return done;
}

void HistoryReporter::say_failure_once() {
  std::optional<std::string> failure;
  {
    std::lock_guard lock(shared_->mutex);
    failure = shared_->failure;
  }
  if (!failure || said_) return;
  said_ = true;
  fmt::print(warnings_, "ranktest: warning: {}; this run is not recorded in the history\n",
             *failure);
}

void HistoryReporter::report(const events::Event& event) {
  if (!writer_.joinable()) return;
  say_failure_once();
  const bool wanted = std::holds_alternative<events::RunStarted>(event) ||
                      std::holds_alternative<events::TestFinished>(event) ||
                      std::holds_alternative<events::RunFinished>(event);
  if (!wanted || said_) return;
  {
    std::lock_guard lock(shared_->mutex);
    shared_->queue.push_back(event);
  }
  shared_->wake.notify_one();
  if (!std::holds_alternative<events::RunFinished>(event)) return;
  // The run's end: what is queued is written now, or said lost.
  std::unique_lock lock(shared_->mutex);
  const bool drained = shared_->drained.wait_for(lock, finish_wait_, [&] {
    return shared_->queue.empty() && !shared_->busy;
  });
  const std::size_t left = shared_->queue.size() + shared_->in_hand;
  lock.unlock();
  say_failure_once();
  if (!drained && !said_) {
    said_ = true;
    fmt::print(warnings_,
               "ranktest: warning: {}: history database: {} of this run's records still "
               "unwritten after {} (another process holds it locked?); they are not recorded "
               "in the history\n",
               shared_->db->path().string(), left,
               config::format_duration(finish_wait_));
  }
}

}  // namespace ranktest::history
