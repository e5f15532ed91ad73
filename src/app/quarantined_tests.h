// Which tests of a run are quarantined (config::QuarantineEntry): each
// test's first matching entry, as its events carry it.
#pragma once

#include <map>
#include <vector>

#include "config/config.h"
#include "events/event.h"
#include "select/test_plan.h"

namespace ranktest::app {

std::map<const TestCase*, events::Quarantine> quarantined_tests(
    const select::TestPlan& plan, const std::vector<config::QuarantineEntry>& entries);

}  // namespace ranktest::app
