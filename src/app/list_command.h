#pragma once

#include "app/options.h"

namespace ranktest::app {

// `ranktest list`: every selected test, one per line or as JSON.
int list_command(const CommandLine& cli);

}  // namespace ranktest::app
