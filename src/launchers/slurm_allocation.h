// The Slurm allocation ranktest runs inside (salloc, sbatch), read from
// the variables Slurm gives its shell: which nodes it holds and how many
// CPUs on each. Inside an allocation of several nodes a run places every
// test as a job step on a node with free slots (docs/launchers.md, "A suite
// across an allocation").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launchers/launcher_kind.h"
#include "model/expected.h"

namespace ranktest::launchers {

struct AllocationNode {
  std::string name;
  int cpus = 1;  // the job's CPUs there: tests' slots on that node
  // The job's generic resources there (Slurm's GRES), as ranktest's
  // device kinds ("gpu" is "cuda"): kind -> count.
  std::map<std::string, int> devices = {};
};

struct SlurmAllocation {
  std::string job_id;
  std::string node_list;  // as Slurm wrote it: "node[1-3]"
  std::vector<AllocationNode> nodes;
};

// nullopt: not inside a Slurm job, inside one of a single node, or inside
// one of its job steps (`srun ranktest run`): its tests run here as
// anywhere else. An error when the variables are there but unreadable.
Expected<std::optional<SlurmAllocation>> slurm_allocation(const EnvironmentLookup& lookup);

// Per node, the devices the job holds there, from `scontrol show job -d`'s
// detail lines ("Nodes=node[1-2] CPU_IDs=0-7 Mem=0 GRES=gpu:a100:2(IDX:0-1)"):
// node -> kind -> count. Nodes without GRES are absent.
std::map<std::string, std::map<std::string, int>> gres_of_nodes(std::string_view job_detail);

// `jobs` slots spread over the nodes, each given at most its CPUs, one at
// a time in node order ("-j 10" over 8 + 8: 5 and 5); nodes left with none
// are dropped. jobs <= 0: every node's CPUs.
std::vector<AllocationNode> allocation_slots(const std::vector<AllocationNode>& nodes, int jobs);

}  // namespace ranktest::launchers
