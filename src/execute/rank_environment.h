// The environment contract of a rank (docs/configuration.md, "What a rank
// sees"): who it is, where to rendezvous, which devices it may touch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "schedule/scheduler.h"

namespace ranktest::execute {

using Environment = std::vector<std::pair<std::string, std::string>>;

// The devices of `kind` rank `rank` of `world` sees: an equal share when the
// grant divides evenly among the ranks, else all of them.
std::vector<std::string> rank_share(const std::vector<std::string>& ids, int rank,
                                    int world);

// The environment contract (docs/configuration.md, "What a rank sees"):
// for a test with ranks (`ranked`: a ranks setting or marker, even 1),
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and GROUP_RANK as torchrun
// sets them; for every test, MASTER_ADDR, MASTER_PORT, RANKTEST_DEVICES and
// each framework's visibility variable. Every kind in `inventory_kinds`
// gets its variable even when the test was granted none of it
// (CUDA_VISIBLE_DEVICES=""), so a test never touches a device it was not
// given.
Environment rank_environment(const schedule::Grant& grant, int rank, int world, bool ranked,
                             const std::vector<std::string>& inventory_kinds);

}  // namespace ranktest::execute
