// Which rank a process is, as the launcher that started it says: each
// launcher's variables (LauncherKind::identity_variables: OpenMPI's
// OMPI_COMM_WORLD_*, Slurm's SLURM_*), then a PMI launcher's (PMI_RANK,
// PMI_SIZE). ranktest-rank reads it to know which rank of the launch plan
// to become.
#pragma once

#include <optional>
#include <string>

#include "launchers/launcher_kind.h"
#include "model/expected.h"

namespace ranktest::launchers {

struct RankIdentity {
  int rank = 0;
  int world = 1;
  int local_rank = 0;   // among the ranks on this node
  int local_world = 1;  // ranks on this node
  bool several_nodes = false;
  std::string first_node;  // the step's first node, where rank 0 runs (Slurm)
  std::optional<int> node_index;  // this node's among the launch's, where said
  std::string job_step;           // the launcher's name for the launch, where it has one
};

// An error names the variables looked for, when none is set or one is not
// a number.
Expected<RankIdentity> rank_identity(const EnvironmentLookup& lookup);

}  // namespace ranktest::launchers
