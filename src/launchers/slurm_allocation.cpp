#include "launchers/slurm_allocation.h"

#include <fmt/format.h>

#include <algorithm>

#include "launchers/host_lists.h"

namespace ranktest::launchers {

Expected<std::optional<SlurmAllocation>> slurm_allocation(const EnvironmentLookup& lookup) {
  const auto job = lookup("SLURM_JOB_ID");
  const auto list = lookup("SLURM_JOB_NODELIST");
  if (!job || !list) return std::optional<SlurmAllocation>();
  const auto hosts = hosts_of(*list);
  if (!hosts || hosts->empty())
    return Error{fmt::format("SLURM_JOB_NODELIST={} is not a Slurm host list; run ranktest inside "
                             "salloc or sbatch as Slurm starts it, or set allocation = \"off\"",
                             *list)};
  if (hosts->size() < 2) return std::optional<SlurmAllocation>();
  SlurmAllocation allocation{*job, *list, {}};
  const auto cpus = lookup("SLURM_JOB_CPUS_PER_NODE");
  for (std::size_t k = 0; k < hosts->size(); ++k) {
    const auto on_node = cpus ? tasks_on_node(*cpus, static_cast<int>(k)) : std::nullopt;
    if (!on_node || *on_node < 1)
      return Error{fmt::format(
          "SLURM_JOB_CPUS_PER_NODE={} names no CPU count for node {} of SLURM_JOB_NODELIST={}; "
          "run ranktest inside salloc or sbatch as Slurm starts it, or set allocation = \"off\"",
          cpus.value_or("(unset)"), (*hosts)[k], *list)};
    allocation.nodes.push_back(AllocationNode{(*hosts)[k], *on_node});
  }
  return std::optional(std::move(allocation));
}

std::vector<AllocationNode> allocation_slots(const std::vector<AllocationNode>& nodes, int jobs) {
  if (jobs <= 0) return nodes;
  std::vector<AllocationNode> spread = nodes;
  for (auto& node : spread) node.cpus = 0;
  for (bool gave = true; jobs > 0 && gave;) {
    gave = false;
    for (std::size_t k = 0; k < nodes.size() && jobs > 0; ++k)
      if (spread[k].cpus < nodes[k].cpus) {
        ++spread[k].cpus;
        --jobs;
        gave = true;
      }
  }
  std::erase_if(spread, [](const auto& node) { return node.cpus == 0; });
  return spread;
}

}  // namespace ranktest::launchers
