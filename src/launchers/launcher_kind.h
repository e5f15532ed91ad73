// Every launcher ranktest can have start a test's ranks (launcher = "..."
// beside "local"): what ranktest knows of each, in one file per launcher
// (mpirun.cpp, slurm.cpp) and one registry (registry.cpp). The
// configuration, the plan and the supervisor ask a LauncherKind, never a
// launcher's name. Adding a launcher: its Launcher value
// (model/test_case.h), a file here, its line in registry.cpp, and its
// section in docs/launchers.md. (What ranktest-rank records of where it ran
// under Slurm, its job step, is still read in launch/rank_main.cpp.)
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.h"
#include "model/test_case.h"

namespace ranktest::launchers {

// A launcher's table ([mpirun], [slurm]): how ranktest calls it.
struct LauncherConfig {
  std::string command;             // a name looked up in PATH, or a path
  std::vector<std::string> args;   // before ranktest's own arguments' end
  std::optional<std::filesystem::path> hostfile;  // where the kind takes one
  // How long the launcher may take to start a test's first rank (srun
  // queued for resources); the test's own timeout counts from that start.
  config::Duration start_timeout = std::chrono::minutes(10);
};

// What one test asks of its launcher.
struct LaunchShape {
  int ranks = 1;
  int nodes = 0;  // 0: as the launcher places them
  // Devices the cluster grants the test (cluster_places_ranks), by kind.
  std::map<std::string, int> cluster_devices;
  // Inside an allocation: the nodes ranktest placed the test on (its job
  // step runs there and takes only the CPUs its ranks need); empty: as
  // the launcher places them.
  std::vector<std::string> hosts = {};
  // With `hosts`: CPUs each rank holds there, where a test takes more
  // slots than it has ranks (CTest's PROCESSORS); 1: one per rank.
  int cpus_per_rank = 1;
};

using EnvironmentLookup = std::function<std::optional<std::string>(const char* name)>;
// This process's own environment (getenv).
EnvironmentLookup own_environment();

// The variables a launcher sets in each rank it starts, which ranktest-rank
// reads to know which rank it is (rank_identity.h). Each list in the order
// to look.
struct IdentityVariables {
  std::vector<const char*> rank;        // 0 .. world - 1
  std::vector<const char*> world;       // the ranks in all
  std::vector<const char*> local_rank;  // among the ranks on this node
  // How many ranks run on this node: nullopt when the launcher's variable
  // is not set (another launcher's may be); set, what it says, where that
  // is readable.
  std::function<std::optional<std::optional<int>>(const EnvironmentLookup&)> local_world;
  // Host lists whose first host runs rank 0.
  std::vector<const char*> node_list;
  // The node's index among the nodes the launcher runs the ranks on
  // (GROUP_RANK across nodes); none: the launcher does not say.
  std::vector<const char*> node_index{};
  // The launcher's own name for this launch, which a rank's start record
  // keeps ("<job>.<step>" under Slurm); nullopt: it has none.
  std::function<std::optional<std::string>(const EnvironmentLookup&)> job_step{};
};

// IdentityVariables::local_world for a launcher that names the count in
// one variable (OpenMPI's OMPI_COMM_WORLD_LOCAL_SIZE).
std::function<std::optional<std::optional<int>>(const EnvironmentLookup&)> local_world_in(
    const char* variable);

class LauncherKind {
 public:
  virtual ~LauncherKind() = default;
  virtual Launcher id() const = 0;
  // launcher = "<name>", and its table [<name>].
  virtual std::string_view name() const = 0;
  // The command it runs unless its table's `command` says otherwise.
  virtual std::string_view default_command() const = 0;
  // The keys its table accepts (docs/launchers.md lists each).
  virtual const std::vector<std::string>& table_keys() const = 0;
  // Whether the cluster places the ranks on its nodes and grants their
  // devices (Slurm's GRES): then they take no slot of this machine but the
  // launcher's, and ranktest neither counts their devices in its inventory
  // nor sets *_VISIBLE_DEVICES for them.
  virtual bool cluster_places_ranks() const = 0;
  // The command line that starts the ranks, each as `rank_helper plan`.
  // A failed rank must not make the launcher kill the others at once: the
  // runner gives them the grace period, as it does locally.
  virtual std::vector<std::string> command(const LauncherConfig& config, const LaunchShape& shape,
                                           const std::filesystem::path& rank_helper,
                                           const std::filesystem::path& plan) const = 0;
  // The hosts the ranks fill, in order, when the configuration says so
  // before the start (mpirun's hostfile): the first is where rank 0 runs
  // (MASTER_ADDR), the position of a rank's host its node index
  // (GROUP_RANK) where the launcher says none. Empty: ranktest-rank finds
  // out on the node.
  virtual std::vector<std::string> hosts_in_order(const LauncherConfig& config) const = 0;
  virtual const IdentityVariables& identity_variables() const = 0;

  LauncherConfig default_config() const {
    return LauncherConfig{std::string(default_command()), {}, std::nullopt};
  }
};

// Every launcher but "local", in the order docs and messages list them.
const std::vector<const LauncherKind*>& launcher_kinds();
// The kind that starts `launcher`'s ranks; null for Launcher::local.
const LauncherKind* launcher_kind(Launcher launcher);
// "local", "mpirun", "slurm".
std::string_view launcher_name(Launcher launcher);
// By name, "local" included; nullopt for a name no launcher has.
std::optional<Launcher> launcher_named(std::string_view name);
// Each launcher's table with its defaults, by launcher.
std::map<Launcher, LauncherConfig> default_launcher_configs();

// Kinds, each defined in launchers/NAME.cpp.
#define RANKTEST_LAUNCHER(name) const LauncherKind& name##_kind();
#include "model/launcher_list.h"
#undef RANKTEST_LAUNCHER

}  // namespace ranktest::launchers
