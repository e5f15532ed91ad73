#include "app/allocation_check.h"

#include <fmt/format.h>

#include <random>

#include "execute/launch_plan.h"
#include "process/run_to_completion.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::app {

std::string allocation_name(const launchers::SlurmAllocation& allocation) {
  return fmt::format("Slurm job {} ({})", allocation.job_id, allocation.node_list);
}

std::optional<std::string> read_node_devices(launchers::SlurmAllocation& allocation,
                                             const std::filesystem::path& folder,
                                             process::SignalWatch& signals) {
  process::SpawnRequest request;
  request.argv = {"scontrol", "show", "job", "-d", allocation.job_id};
  request.environment = process::make_environment({}, {});
  const auto record = folder / "allocation.txt";
  request.stdout_path = record;
  request.stderr_path = folder / "allocation.err";
  const auto done = process::run_to_completion(request, signals, std::chrono::seconds(30));
  if (!done || done->timed_out || done->interrupted_by || done->exit.signaled ||
      done->exit.code != 0)
    return fmt::format("the devices of {} per node could not be read (`scontrol show job -d {}` "
                       "{}), so tests are placed on its nodes by their CPU slots alone; a "
                       "test whose devices are busy on its node waits for them in srun",
                       allocation_name(allocation), allocation.job_id,
                       !done ? done.error().message
                             : fmt::format("failed: {}", text::terminal_safe(text::read_file_tail(
                                                             folder / "allocation.err", 200)
                                                             .bytes)));
  const auto devices = launchers::gres_of_nodes(text::read_file(record));
  for (auto& node : allocation.nodes)
    if (const auto found = devices.find(node.name); found != devices.end())
      node.devices = found->second;
  return std::nullopt;
}

std::optional<std::string> run_folder_unseen(const launchers::SlurmAllocation& allocation,
                                             const launchers::LauncherConfig& srun,
                                             const std::filesystem::path& folder,
                                             process::SignalWatch& signals) {
  const auto check = folder / "allocation-check";
  const auto token = fmt::format("ranktest {}", std::random_device{}());
  if (auto written = execute::write_file_atomically(check, token + "\n"); !written)
    return written.error().message;
  const auto nodes = std::to_string(allocation.nodes.size());
  std::vector<std::string> names;
  for (const auto& node : allocation.nodes) names.push_back(node.name);
  process::SpawnRequest request;
  request.argv = {srun.command, "--nodes=" + nodes, "--ntasks=" + nodes,
                  "--ntasks-per-node=1", fmt::format("--nodelist={}", fmt::join(names, ",")), "--exact",
                  "--job-name=ranktest-check", "--label"};
  request.argv.insert(request.argv.end(), srun.args.begin(), srun.args.end());
  request.argv.insert(request.argv.end(), {"cat", check.string()});
  request.environment = process::make_environment({}, {});
  const auto log = folder / "allocation-check.log";
  request.stdout_path = log;
  const auto done = process::run_to_completion(
      request, signals, std::chrono::duration_cast<std::chrono::milliseconds>(srun.start_timeout));
  const auto said = text::read_file(log);
  std::size_t seen = 0;
  for (std::size_t at = said.find(token); at != std::string::npos; at = said.find(token, at + 1))
    ++seen;
  if (done && !done->timed_out && !done->interrupted_by && done->exit.code == 0 &&
      seen == allocation.nodes.size())
    return std::nullopt;
  // What srun said, on one line.
  std::string tail = text::terminal_safe(text::read_file_tail(log, 600).bytes);
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  for (auto& c : tail)
    if (c == '\n') c = ';';
  return fmt::format(
      "the run folder {} must be on a file system every node of {} sees, as each test runs as "
      "a job step on one of them and writes there, but `{} cat` on every node {} ({}); set "
      "state-dir to a shared file system (docs/launchers.md, \"A suite across an allocation\"), "
      "or run here only with --allocation off",
      folder.string(), allocation_name(allocation), srun.command,
      !done                ? "could not start: " + done.error().message
      : done->timed_out     ? "did not end in time"
      : done->interrupted_by ? std::string("was interrupted")
                            : fmt::format("read it on {} of {} nodes", seen,
                                          allocation.nodes.size()),
      tail.empty() ? std::string("it said nothing") : tail);
}

}  // namespace ranktest::app
