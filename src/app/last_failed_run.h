// `ranktest run --last-failed` / `--failed-first`: the plan narrowed or
// reordered by each test's last verdict in the history, and the line that
// says so before the run.
#pragma once

#include <string>
#include <variant>

#include "app/options.h"
#include "app/prepare.h"
#include "history/history_db.h"
#include "select/test_plan.h"

namespace ranktest::app {

struct LastFailedChoice {
  std::string said;  // "ranktest: --last-failed: ..." (empty: nothing to say)
  // --last-failed-no-failures=none and nothing failed: an empty run is
  // what was asked for, not "no test matched".
  bool nothing_asked = false;
};

// Applies cli.last_failed to `plan` (ordered already). A history that is
// off is a usage error naming the setting.
std::variant<LastFailedChoice, Failure> apply_last_failed(const CommandLine& cli,
                                                          const history::HistoryDb* history,
                                                          select::TestPlan& plan);

}  // namespace ranktest::app
