// The files through which the runner and ranktest-rank talk when a launcher
// (mpirun, srun) starts a test's ranks: the plan the runner writes into the
// attempt's folder before it starts the launcher, and per rank a record of
// where it started and one of how it ended, which ranktest-rank writes
// there. The run folder must be on a file system every node sees, as the
// ranks' logs are written there too (docs/launchers.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "execute/rank_environment.h"
#include "model/expected.h"
#include "model/outcome.h"

namespace ranktest::execute {

// One rank: what local mode would spawn, as a difference from the
// environment the launcher gives it (which holds what MPI needs).
struct RankPlan {
  std::vector<std::string> argv;
  Environment set;                  // added or replaced
  std::vector<std::string> remove;  // names removed
  std::filesystem::path working_directory;  // empty: the launcher's
  std::filesystem::path log;                // stdout and stderr
  // The rank's program says when its test begins, after its start-up
  // (RANKTEST_BEGIN_FD: pytest's plugin): ranktest-rank gives it the pipe
  // and records the moment (rank_began_path), where the test's timeout
  // counts from.
  bool says_when_it_begins = false;
};

struct LaunchPlan {
  std::string test_id;
  std::filesystem::path folder;  // the attempt's folder
  // MASTER_ADDR when the ranks span nodes (mpirun: the hostfile's first
  // host); empty: ranktest-rank takes Slurm's first node.
  std::string master_address;
  // The hosts the launcher fills in order (mpirun's hostfile): a rank's
  // node index (GROUP_RANK) is its host's position where the launcher
  // names none. Empty: Slurm's node index is used.
  std::vector<std::string> node_order;
  // The host name of the machine ranktest runs on, whose port locks hold
  // the planned MASTER_PORT: rank 0 on another node locks it there too.
  std::string runner_host;
  std::vector<RankPlan> ranks;
};

std::string launch_plan_json(const LaunchPlan& plan);
Expected<LaunchPlan> parse_launch_plan(std::string_view json);

// Where and as what a rank started.
struct RankStart {
  int rank = 0;
  std::string host;
  int pid = 0;              // the test's process, on `host`
  std::string job_step;     // the launcher's name for the launch: "<job>.<step>" under Slurm
};
std::string rank_start_json(const RankStart& start);
Expected<RankStart> parse_rank_start(std::string_view json);

// How a rank ended.
struct RankEnd {
  ProcessExit exit;
  bool stopped = false;         // it was told to stop (SIGTERM, SIGINT, SIGHUP) first
  std::int64_t ended_at_ns = 0;  // CLOCK_REALTIME, for which rank failed first
  std::vector<int> left_behind;  // processes of its group still running then (killed)
};
std::string rank_end_json(const RankEnd& end);
Expected<RankEnd> parse_rank_end(std::string_view json);

// File names in the attempt's folder.
std::filesystem::path launch_plan_path(const std::filesystem::path& folder);
std::filesystem::path rank_start_path(const std::filesystem::path& folder, int rank);
std::filesystem::path rank_end_path(const std::filesystem::path& folder, int rank);
// Written by ranktest-rank when its rank's test began (says_when_it_begins).
std::filesystem::path rank_began_path(const std::filesystem::path& folder, int rank);
// The MASTER_PORT the ranks meet at, as rank 0's ranktest-rank found it
// free on its node (launch/master_port.cpp).
std::filesystem::path master_port_path(const std::filesystem::path& folder);
// Requests from the runner, which every ranktest-rank looks for (a file,
// not a signal: launchers differ in which processes a forwarded signal
// reaches, Slurm's reach the test's own).
std::filesystem::path stop_request_path(const std::filesystem::path& folder);
std::filesystem::path stacks_request_path(const std::filesystem::path& folder);
// Written once a rank's stacks were taken.
std::filesystem::path stacks_done_path(const std::filesystem::path& folder, int rank);
// gdb's output for one process of a rank.
std::filesystem::path rank_stack_path(const std::filesystem::path& folder, int rank, int pid);
// The rank and pid of a rank_stack_path() file name; false for other names.
bool parse_rank_stack_name(std::string_view name, int& rank, int& pid);

// Writes through a temporary file and a rename, so a reader on any node
// sees all of it or nothing.
Expected<Done> write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace ranktest::execute
