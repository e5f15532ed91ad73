// `ranktest history --html PATH`: a self-contained page of the recorded
// runs: the slowest and the flakiest tests, those whose duration grew most,
// the failure streaks, and every test, each with a strip of its outcomes
// and a line of its durations over the runs.
#pragma once

#include <string>

#include "history/history_db.h"

namespace ranktest::history {

std::string history_page(const RunVerdicts& verdicts, const std::string& title);

}  // namespace ranktest::history
