// A run's command line as its run-started event keeps it
// (events::Invocation), and back: what `ranktest rerun` runs again.
#pragma once

#include "app/options.h"
#include "events/event.h"

namespace ranktest::app {

// What `cli` said that decides how tests run (not which are selected, nor
// the reports it writes); paths made absolute.
events::Invocation invocation_of(const CommandLine& cli);

// `cli` with what `invocation` said, where `cli` itself says nothing.
void apply_invocation(const events::Invocation& invocation, CommandLine& cli);

}  // namespace ranktest::app
