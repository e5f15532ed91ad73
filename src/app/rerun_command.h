// `ranktest rerun [RUN]`: the tests that did not pass in a stored run
// (default: the latest), run again as one run, from the same configuration
// and paths, in the same folder, with the devices they held.
#pragma once

#include <string>

#include "app/options.h"

namespace ranktest::app {

// `run`: a run folder, a run id under <state-dir>/runs/, or "" (latest).
int rerun_command(CommandLine cli, const std::string& run);

}  // namespace ranktest::app
