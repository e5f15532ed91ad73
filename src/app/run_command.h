#pragma once

#include "app/options.h"

namespace ranktest::app {

// `ranktest run`: discover, select, schedule, execute, report. Returns the
// process exit code (see exit_code.h).
int run_command(const CommandLine& cli);

}  // namespace ranktest::app
