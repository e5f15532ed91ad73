// Inside a Slurm allocation every test runs as a job step on some node
// and writes its records and logs into the run folder (docs/launchers.md):
// before any test starts, one step per node reads a file the runner just
// wrote there, so a run folder some node cannot see refuses the run with
// a message instead of every test failing in a riddle.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "config/config.h"
#include "process/signal_watch.h"

namespace ranktest::app {

// Why the run cannot spread over the allocation (one line), or nothing.
std::optional<std::string> run_folder_unseen(const launchers::SlurmAllocation& allocation,
                                             const launchers::LauncherConfig& srun,
                                             const std::filesystem::path& folder,
                                             process::SignalWatch& signals);

// The devices (GRES) the job holds on each of its nodes, as `scontrol show
// job -d` says them (kept in the run folder as allocation.txt), into
// `allocation`; a warning when they cannot be read (tests are then placed
// by their slots alone, Slurm still granting their devices).
std::optional<std::string> read_node_devices(launchers::SlurmAllocation& allocation,
                                             const std::filesystem::path& folder,
                                             process::SignalWatch& signals);

// "Slurm job 12 (node[1-3])", as the run's first line and journal say it.
std::string allocation_name(const launchers::SlurmAllocation& allocation);

}  // namespace ranktest::app
