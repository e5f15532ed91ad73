// launcher = "slurm": srun starts the ranks as one job step, on whichever
// nodes of the allocation (or the cluster) Slurm gives it; Slurm grants the
// test's devices (GRES) and makes them visible itself.
#include <fmt/format.h>

#include <algorithm>

#include "launchers/host_lists.h"
#include "launchers/launcher_kind.h"

namespace ranktest::launchers {
namespace {

class Slurm final : public LauncherKind {
 public:
  Launcher id() const override { return Launcher::slurm; }
  std::string_view name() const override { return "slurm"; }
  std::string_view default_command() const override { return "srun"; }
  const std::vector<std::string>& table_keys() const override {
    static const std::vector<std::string> keys{"command", "args", "start-timeout"};
    return keys;
  }
  bool cluster_places_ranks() const override { return true; }
  //   srun --ntasks=N [--nodes=K [--ntasks-per-node=N/K]] [--nodelist=HOSTS --exact [--cpus-per-task=C] --mem=0]
  //        [--gpus=G] [--gres=KIND:C]... --kill-on-bad-exit=0
  //        --job-name=ranktest ARGS... HELPER PLAN
  std::vector<std::string> command(const LauncherConfig& config, const LaunchShape& shape,
                                   const std::filesystem::path& rank_helper,
                                   const std::filesystem::path& plan) const override {
    std::vector<std::string> argv{config.command, "--ntasks=" + std::to_string(shape.ranks)};
    const int nodes = shape.hosts.empty() ? shape.nodes : static_cast<int>(shape.hosts.size());
    if (nodes > 0) argv.push_back("--nodes=" + std::to_string(nodes));
    // As torchrun places them (nproc-per-node on each of nnodes): the same
    // number of ranks on every node, in rank order, where they divide
    // evenly. Slurm alone fills the first node's CPUs first (4 ranks on 2
    // nodes of 8 CPUs: 3 and 1). An `args` entry given after overrides it.
    if (nodes > 0 && shape.ranks % nodes == 0)
      argv.push_back("--ntasks-per-node=" + std::to_string(shape.ranks / nodes));
    // Placed by ranktest inside an allocation: on those nodes, holding
    // only its tasks' CPUs there, so steps of other tests run beside it
    // (without --exact a step holds every CPU of its nodes).
    if (!shape.hosts.empty()) {
      argv.insert(argv.end(),
                  {fmt::format("--nodelist={}", fmt::join(shape.hosts, ",")), "--exact"});
      if (shape.cpus_per_rank > 1)
        argv.push_back("--cpus-per-task=" + std::to_string(shape.cpus_per_rank));
      // Where Slurm counts memory, a step asks for all of it unless told:
      // --mem=0 lets it use the job's memory without holding any from the
      // steps beside it (unless `args` says how much it takes).
      if (std::none_of(config.args.begin(), config.args.end(),
                       [](const auto& arg) { return arg.starts_with("--mem"); }))
        argv.push_back("--mem=0");
    }
    for (const auto& [kind, count] : shape.cluster_devices)
      argv.push_back(kind == "cuda" ? "--gpus=" + std::to_string(count)
                                    : "--gres=" + kind + ":" + std::to_string(count));
    argv.insert(argv.end(), {"--kill-on-bad-exit=0", "--job-name=ranktest"});
    argv.insert(argv.end(), config.args.begin(), config.args.end());
    argv.insert(argv.end(), {rank_helper.string(), plan.string()});
    return argv;
  }
  std::vector<std::string> hosts_in_order(const LauncherConfig&) const override { return {}; }
  // The step's own task count first: SLURM_NTASKS is the job's.
  const IdentityVariables& identity_variables() const override {
    static const IdentityVariables variables{
        {"SLURM_PROCID"}, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, {"SLURM_LOCALID"},
        [](const EnvironmentLookup& lookup) -> std::optional<std::optional<int>> {
          const auto per_node = lookup("SLURM_STEP_TASKS_PER_NODE");
          if (!per_node) return std::nullopt;
          const auto node = lookup("SLURM_NODEID");
          return tasks_on_node(*per_node, node ? whole_number(*node).value_or(0) : 0);
        },
        {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"},
        {"SLURM_NODEID"},
        [](const EnvironmentLookup& lookup) -> std::optional<std::string> {
          const auto job = lookup("SLURM_JOB_ID");
          const auto step = lookup("SLURM_STEP_ID");
          if (!job || !step) return std::nullopt;
          return *job + "." + *step;
        }};
    return variables;
  }
};

}  // namespace

const LauncherKind& slurm_kind() {
  static const Slurm kind;
  return kind;
}

}  // namespace ranktest::launchers
