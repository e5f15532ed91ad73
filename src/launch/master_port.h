// The MASTER_PORT a launched test's ranks meet at. ranktest reserved the
// planned one (port-range) on the machine it runs on; rank 0's node may be
// another, where something else may listen on it.
#pragma once

#include <optional>
#include <string>

#include "execute/launch_plan.h"
#include "process/port_probe.h"

namespace ranktest::launch {

// Rank 0 checks the planned port on its node and, where it is taken, takes
// one the kernel says is free there, and writes which into the attempt's
// folder; every other rank waits (bounded) for that record. On a node
// other than the runner's, rank 0 also locks the port in the node's port
// locks (process::PortLocks, held in `locks` for the rank's life), so a
// ranktest running on that node, or another test's rank 0 there, never
// takes it meanwhile. nullopt: the plan sets no MASTER_PORT (a test without
// ranks). `note` gets what a person should know ("" when the planned port
// was free).
std::optional<int> agreed_master_port(const execute::LaunchPlan& plan, int rank,
                                      const std::string& host, process::PortLocks& locks,
                                      std::string& note);

}  // namespace ranktest::launch
