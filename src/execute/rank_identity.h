// Which rank a process is, as the launcher that started it says: OpenMPI's
// mpirun (OMPI_COMM_WORLD_*), Slurm's srun (SLURM_*), or a PMI launcher
// (PMI_RANK, PMI_SIZE). ranktest-rank reads it to know which rank of the
// launch plan to become.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "model/expected.h"

namespace ranktest::execute {

struct RankIdentity {
  int rank = 0;
  int world = 1;
  int local_rank = 0;   // among the ranks on this node
  int local_world = 1;  // ranks on this node
  bool several_nodes = false;
  std::string first_node;  // Slurm: the step's first node, where rank 0 runs
};

using EnvironmentLookup = std::function<std::optional<std::string>(const char* name)>;

// An error names the variables looked for, when none is set or one is not
// a number.
Expected<RankIdentity> rank_identity(const EnvironmentLookup& lookup);

// The first host of a Slurm host list: "node[07-09,12],gpu1" -> "node07".
std::string first_host_of(std::string_view host_list);

// Tasks on node `node` from SLURM_STEP_TASKS_PER_NODE: "2(x3),1" lists
// 2, 2, 2, 1. Nothing when the text does not say.
std::optional<int> tasks_on_node(std::string_view tasks_per_node, int node);

}  // namespace ranktest::execute
