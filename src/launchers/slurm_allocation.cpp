#include "launchers/slurm_allocation.h"

#include <fmt/format.h>

#include <algorithm>

#include "launchers/host_lists.h"

namespace ranktest::launchers {

Expected<std::optional<SlurmAllocation>> slurm_allocation(const EnvironmentLookup& lookup) {
  const auto job = lookup("SLURM_JOB_ID");
  const auto list = lookup("SLURM_JOB_NODELIST");
  if (!job || !list) return std::optional<SlurmAllocation>();
  // Inside a job step (`srun ranktest run`) the step holds its nodes' CPUs:
  // steps started from it would wait for them. Only the batch script or
  // the salloc shell, which no step runs, spreads the suite.
  if (lookup("SLURM_STEP_ID")) return std::optional<SlurmAllocation>();
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

namespace {

// How many indexes "0-1,3" names; nothing when it is not such a list.
std::optional<int> index_count(std::string_view list) {
  const auto items = split_outside(list, '(', ')');
  if (!items) return std::nullopt;
  int count = 0;
  for (const auto item : *items) {
    const auto numbers = number_range(item);
    if (!numbers) return std::nullopt;
    count += numbers->second - numbers->first + 1;
  }
  return count;
}

// One GRES entry: "gpu:a100:2(IDX:0-1)", "tpu(CNT:4)", "gpu:4": its kind
// and count.
std::optional<std::pair<std::string, int>> gres_entry(std::string_view entry) {
  const auto paren = entry.find('(');
  const auto spec = entry.substr(0, paren);
  std::string kind(spec.substr(0, spec.find(':')));
  if (kind.empty()) return std::nullopt;
  if (kind == "gpu") kind = "cuda";  // as `devices = { cuda = N }` asks srun for --gpus
  std::optional<int> count;
  if (paren != std::string_view::npos) {
    auto inside = entry.substr(paren + 1);
    if (!inside.ends_with(")")) return std::nullopt;
    inside.remove_suffix(1);
    if (inside.starts_with("CNT:")) count = whole_number(inside.substr(4));
    if (inside.starts_with("IDX:")) count = index_count(inside.substr(4));
  }
  if (!count) {
    const auto colon = spec.rfind(':');
    if (colon != std::string_view::npos) count = whole_number(spec.substr(colon + 1));
  }
  if (!count || *count <= 0) return std::nullopt;
  return std::pair(std::move(kind), *count);
}

}  // namespace

std::map<std::string, std::map<std::string, int>> gres_of_nodes(std::string_view job_detail) {
  std::map<std::string, std::map<std::string, int>> devices;
  while (!job_detail.empty()) {
    auto line = job_detail.substr(0, job_detail.find('\n'));
    job_detail.remove_prefix(std::min(job_detail.size(), line.size() + 1));
    line.remove_prefix(std::min(line.size(), line.find_first_not_of(" \t")));
    if (!line.starts_with("Nodes=")) continue;
    const auto nodes = hosts_of(line.substr(6, line.find(' ') - 6));
    const auto at = line.find(" GRES=");
    if (!nodes || at == std::string_view::npos) continue;
    auto list = line.substr(at + 6);
    // Entries split at commas outside parentheses ("IDX:0-1,3").
    const auto entries = split_outside(list.substr(0, list.find(' ')), '(', ')');
    if (!entries) continue;
    for (const auto text : *entries)
      if (const auto entry = gres_entry(text))
        for (const auto& node : *nodes) devices[node][entry->first] += entry->second;
  }
  return devices;
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
