#include "app/rerun_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "app/exit_code.h"
#include "app/invocation.h"
#include "app/prepare.h"
#include "app/run_command.h"
#include "app/stored_run.h"
#include "config/config_loader.h"

namespace ranktest::app {
namespace {

// The run folder `run` names: a folder, else a run id (or "latest") under
// the state folder that --state-dir, ./ranktest.toml or the default gives.
std::variant<std::filesystem::path, Failure> run_folder(const CommandLine& cli,
                                                        const std::string& run) {
  std::error_code error;
  if (!run.empty() && std::filesystem::is_directory(run, error)) return std::filesystem::path(run);
  std::filesystem::path state_dir = ".ranktest";
  if (cli.state_dir) {
    state_dir = *cli.state_dir;
  } else {
    const auto file = cli.config_path.value_or("ranktest.toml");
    if (std::filesystem::exists(file, error)) {
      auto config = config::load_config_file(file);
      if (!config) return Failure{ExitCode::usage_error, config.error().message};
      state_dir = config->state_dir;
    }
  }
  const auto folder = state_dir / "runs" / (run.empty() ? "latest" : run);
  if (!std::filesystem::exists(folder / "events.jsonl", error))
    return Failure{ExitCode::usage_error,
                   fmt::format("{}: no stored run there (no events.jsonl); name a run folder or a "
                               "run id of {}, or run the tests first",
                               folder.string(), (state_dir / "runs").string())};
  return folder;
}

}  // namespace

int rerun_command(CommandLine cli, const std::string& run) {
  auto folder = run_folder(cli, run);
  if (auto* failure = std::get_if<Failure>(&folder)) return fail(*failure);
  auto loaded = load_stored_run(std::get<std::filesystem::path>(folder));
  if (auto* failure = std::get_if<Failure>(&loaded)) return fail(*failure);
  const auto& stored = std::get<StoredRun>(loaded);
  const auto* started = stored.events.empty()
                            ? nullptr
                            : std::get_if<events::RunStarted>(&stored.events.front());
  if (!started) return fail({ExitCode::usage_error, "the stored run has no run-started event"});

  // Each test's verdict: its last attempt that is not retried.
  std::map<std::string, const events::TestFinished*> verdicts;
  std::vector<std::string> order;  // as they finished
  for (const auto& event : stored.events)
    if (const auto* finished = std::get_if<events::TestFinished>(&event);
        finished && !finished->retrying) {
      if (!verdicts.count(finished->test.id)) order.push_back(finished->test.id);
      verdicts[finished->test.id] = finished;
    }
  std::vector<std::string> again;
  std::map<std::string, std::set<std::string>> devices;  // what they held, by kind
  for (const auto& id : order) {
    const auto* verdict = verdicts[id];
    if (ended_cleanly(verdict->result.outcome)) continue;
    again.push_back(id);
    for (const auto& [kind, ids] : verdict->placement.devices)
      devices[kind].insert(ids.begin(), ids.end());
  }
  if (again.empty()) {
    fmt::print("ranktest: every test of run {} passed; nothing to rerun\n", started->run_id);
    return to_int(ExitCode::success);
  }

  // The same sources from the same folder: the configuration and the paths
  // the run was given (absolute), in the folder it ran in.
  // What this command line names stays where it was named from.
  for (auto* path : {&cli.config_path, &cli.state_dir, &cli.junit, &cli.html, &cli.trace})
    if (*path) *path = std::filesystem::absolute(**path);
  std::error_code error;
  if (const auto& folder = started->invocation.working_directory; !folder.empty()) {
    std::filesystem::current_path(folder, error);
    if (error)
      return fail({ExitCode::usage_error,
                   fmt::format("run {} ran in {}, which cannot be entered now ({}); rerun its "
                               "tests by hand with the rerun lines of its summary",
                               started->run_id, folder, error.message())});
  }
  apply_invocation(started->invocation, cli);
  cli.selection = {};
  cli.selection.exact = again;
  // The devices they held, where the command line names none: a test
  // that failed on GPU 3 is given GPU 3's pool again.
  if (cli.devices.empty())
    for (const auto& [kind, ids] : devices)
      cli.devices.emplace_back(kind, std::vector<std::string>(ids.begin(), ids.end()));
  std::vector<std::string> held;  // "cuda=2,3", as --devices takes them
  for (const auto& [kind, ids] : devices) held.push_back(fmt::format("{}={}", kind, fmt::join(ids, ",")));
  fmt::print("ranktest: rerun of {}: the {} test{} that did not pass{}\n", started->run_id,
             again.size(), again.size() == 1 ? "" : "s",
             held.empty() ? std::string()
                          : fmt::format(", on the devices they held ({})", fmt::join(held, " ")));
  std::fflush(stdout);
  return run_command(cli);
}

}  // namespace ranktest::app
