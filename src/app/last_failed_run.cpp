#include "app/last_failed_run.h"

#include <fmt/format.h>

#include "select/last_failed.h"

namespace ranktest::app {

std::variant<LastFailedChoice, Failure> apply_last_failed(const CommandLine& cli,
                                                          const history::HistoryDb* history,
                                                          select::TestPlan& plan) {
  if (cli.last_failed == LastFailed::off) return LastFailedChoice{};
  const auto option = cli.last_failed == LastFailed::only ? "--last-failed" : "--failed-first";
  if (!history)
    return Failure{ExitCode::usage_error,
                   fmt::format("{} reads each test's last verdict from the history, and this "
                               "run has none (history = false in ranktest.toml, or it cannot be "
                               "opened: see the warning above); remove the option or the setting",
                               option)};
  const auto selected = plan.to_run.size();
  const auto failed = select::mark_last_failed(plan, history->last_verdicts());
  const auto tests = [](std::size_t n) { return fmt::format("{} test{}", n, n == 1 ? "" : "s"); };
  LastFailedChoice choice;
  if (failed == 0) {
    if (cli.last_failed == LastFailed::only && !cli.none_failed_runs_all) {
      select::keep_none(plan);
      choice.nothing_asked = true;
      choice.said = fmt::format("ranktest: {}: no test of this selection failed last time; "
                                "running none (--last-failed-no-failures=none)", option);
    } else {
      choice.said = fmt::format("ranktest: {}: no test of this selection failed last time; "
                                "running all {}", option, tests(selected));
    }
    return choice;
  }
  if (cli.last_failed == LastFailed::only) {
    select::keep_last_failed(plan);
    choice.said = fmt::format("ranktest: --last-failed: running the {} of {} whose last verdict "
                              "did not pass", tests(failed), selected);
  } else {
    select::order_failed_first(plan);
    choice.said = fmt::format("ranktest: --failed-first: the {} whose last verdict did not pass "
                              "run first, then the other {}", tests(failed), selected - failed);
  }
  return choice;
}

}  // namespace ranktest::app
