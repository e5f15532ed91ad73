// Writes each run's attempts to the history database as they end. History
// serves the next runs (ordering, ETA, time partitions): a database that
// cannot be written costs this run's history, said once, never the run.
#pragma once

#include <cstdio>
#include <memory>

#include "events/reporter.h"
#include "history/history_db.h"

namespace ranktest::history {

class HistoryReporter final : public events::Reporter {
 public:
  HistoryReporter(std::shared_ptr<HistoryDb> db, RunContext context, std::FILE* warnings)
      : db_(std::move(db)), context_(std::move(context)), warnings_(warnings) {}
  std::string_view name() const override { return "history"; }
  void report(const events::Event& event) override;

 private:
  void check(const Expected<Done>& done);
  std::shared_ptr<HistoryDb> db_;
  RunContext context_;
  std::FILE* warnings_;
};

}  // namespace ranktest::history
