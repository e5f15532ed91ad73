// launcher = "mpirun": OpenMPI's mpirun starts the ranks, on this machine or
// on a hostfile's hosts.
#include <fstream>

#include "launchers/launcher_kind.h"

namespace ranktest::launchers {
namespace {

// The first host a hostfile names (where mpirun puts rank 0), or nothing
// when it names none or cannot be read. "localhost" comes back as is.
std::vector<std::string> hosts_of_hostfile(const std::filesystem::path& hostfile) {
  std::ifstream in(hostfile);
  std::vector<std::string> hosts;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const auto begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    const auto end = line.find_first_of(" \t\r", begin);
    hosts.push_back(line.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  }
  return hosts;
}

class Mpirun final : public LauncherKind {
 public:
  Launcher id() const override { return Launcher::mpirun; }
  std::string_view name() const override { return "mpirun"; }
  std::string_view default_command() const override { return "mpirun"; }
  const std::vector<std::string>& table_keys() const override {
    static const std::vector<std::string> keys{"command", "args", "hostfile", "start-timeout"};
    return keys;
  }
  bool cluster_places_ranks() const override { return false; }
  //   mpirun -np N [--hostfile H] --mca orte_abort_on_non_zero_status 0 ARGS... HELPER PLAN
  std::vector<std::string> command(const LauncherConfig& config, const LaunchShape& shape,
                                   const std::filesystem::path& rank_helper,
                                   const std::filesystem::path& plan) const override {
    std::vector<std::string> argv{config.command, "-np", std::to_string(shape.ranks)};
    if (config.hostfile) argv.insert(argv.end(), {"--hostfile", config.hostfile->string()});
    argv.insert(argv.end(), {"--mca", "orte_abort_on_non_zero_status", "0"});
    argv.insert(argv.end(), config.args.begin(), config.args.end());
    argv.insert(argv.end(), {rank_helper.string(), plan.string()});
    return argv;
  }
  // mpirun fills the hostfile's hosts in order (--map-by slot).
  std::vector<std::string> hosts_in_order(const LauncherConfig& config) const override {
    if (!config.hostfile) return {};
    return hosts_of_hostfile(*config.hostfile);
  }
  const IdentityVariables& identity_variables() const override {
    static const IdentityVariables variables{
        {"OMPI_COMM_WORLD_RANK"}, {"OMPI_COMM_WORLD_SIZE"}, {"OMPI_COMM_WORLD_LOCAL_RANK"},
        local_world_in("OMPI_COMM_WORLD_LOCAL_SIZE"), {}};
    return variables;
  }
};

}  // namespace

const LauncherKind& mpirun_kind() {
  static const Mpirun kind;
  return kind;
}

}  // namespace ranktest::launchers
