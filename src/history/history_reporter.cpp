#include "history/history_reporter.h"

#include <fmt/format.h>

#include "model/overloaded.h"

namespace ranktest::history {

void HistoryReporter::check(const Expected<Done>& done) {
  if (done) return;
  fmt::print(warnings_, "ranktest: warning: {}; this run is not recorded in the history\n",
             done.error().message);
  db_.reset();
}

void HistoryReporter::report(const events::Event& event) {
  if (!db_) return;
  std::visit(Overloaded{
                 [&](const events::RunStarted& e) { check(db_->record_run_started(e, context_)); },
                 [](const events::TestStarted&) {}, [](const events::TestSlow&) {},
                 [](const events::RunWarning&) {},
                 [&](const events::TestFinished& e) { check(db_->record_attempt(e, context_)); },
                 [&](const events::RunFinished& e) { check(db_->record_run_finished(e)); }},
             event);
}

}  // namespace ranktest::history
