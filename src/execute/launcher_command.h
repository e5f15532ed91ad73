// The command line that has mpirun or srun start a test's ranks, each as
// ranktest-rank with the test's launch plan.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "select/test_plan.h"

namespace ranktest::execute {

//   mpirun -np N [--hostfile H] --mca orte_abort_on_non_zero_status 0 ARGS... HELPER PLAN
//   srun --ntasks=N [--nodes=K] [--gpus=G] [--gres=KIND:C]... --kill-on-bad-exit=0
//        --job-name=ranktest ARGS... HELPER PLAN
// A failed rank does not make the launcher kill the others at once: the
// runner gives them the grace period, as it does locally.
std::vector<std::string> launcher_command(const config::LauncherConfig& launcher,
                                          const select::ResolvedSettings& settings,
                                          const std::filesystem::path& rank_helper,
                                          const std::filesystem::path& plan);

// The first host a hostfile names (where mpirun puts rank 0), or nothing
// when it names none or cannot be read. "localhost" comes back as is.
std::optional<std::string> first_host_of_hostfile(const std::filesystem::path& hostfile);

// ranktest-rank, beside the ranktest binary.
std::filesystem::path rank_helper_path();

}  // namespace ranktest::execute
