#include "execute/launcher_command.h"

#include <fstream>

#include "process/own_files.h"

namespace ranktest::execute {

std::vector<std::string> launcher_command(const config::LauncherConfig& launcher,
                                          const select::ResolvedSettings& settings,
                                          const std::filesystem::path& rank_helper,
                                          const std::filesystem::path& plan) {
  std::vector<std::string> argv{launcher.command};
  const auto ranks = std::to_string(settings.ranks);
  if (settings.launcher == Launcher::mpirun) {
    argv.insert(argv.end(), {"-np", ranks});
    if (launcher.hostfile) argv.insert(argv.end(), {"--hostfile", launcher.hostfile->string()});
    argv.insert(argv.end(), {"--mca", "orte_abort_on_non_zero_status", "0"});
  } else {
    argv.push_back("--ntasks=" + ranks);
    if (settings.nodes > 0) argv.push_back("--nodes=" + std::to_string(settings.nodes));
    for (const auto& [kind, count] : settings.cluster_devices)
      argv.push_back(kind == "cuda" ? "--gpus=" + std::to_string(count)
                                    : "--gres=" + kind + ":" + std::to_string(count));
    argv.insert(argv.end(), {"--kill-on-bad-exit=0", "--job-name=ranktest"});
  }
  argv.insert(argv.end(), launcher.args.begin(), launcher.args.end());
  argv.insert(argv.end(), {rank_helper.string(), plan.string()});
  return argv;
}

std::optional<std::string> first_host_of_hostfile(const std::filesystem::path& hostfile) {
  std::ifstream in(hostfile);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const auto begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    const auto end = line.find_first_of(" \t\r", begin);
    return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  return std::nullopt;
}

std::filesystem::path rank_helper_path() { return process::beside_own_binary("ranktest-rank"); }

}  // namespace ranktest::execute
