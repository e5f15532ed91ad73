// Starting a process in a process group of its own (and in its test's
// cgroup), and owning it until it is reaped. The runner's own processes start
// here; the fork servers (src/forkserver/, python/ranktest_pytest/) fork the
// tests they serve themselves.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/expected.h"
#include "model/outcome.h"

namespace ranktest::process {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH if bare
  std::vector<std::string> environment;  // "NAME=value", the whole of it
  std::filesystem::path working_directory;  // empty: the runner's own
  // Output files, opened for appending (O_APPEND: processes of one test can
  // share a file without overwriting each other). Empty stdout_path:
  // inherit the runner's stdout and stderr. Empty stderr_path: stderr goes
  // to stdout_path.
  std::filesystem::path stdout_path;
  std::filesystem::path stderr_path;
  // 0: the child leads a new process group. Else the group to join (the
  // ranks of one test share their first rank's group).
  pid_t process_group = 0;
  // Descriptors of the runner given to the child: {runner's fd, child's fd}.
  // The child's stdin is the one mapped to 0, else /dev/null.
  std::vector<std::pair<int, int>> descriptors;
  // The test's cgroup, which the child starts in and the runner never
  // joins (a test's memory limit must not be able to end the runner): the
  // child writes itself into the v2 and each v1 cgroup.procs before exec.
  // A child that cannot join is not started: the spawn fails and says why.
  std::filesystem::path cgroup_v2;  // the v2 cgroup's folder; empty: none
  std::vector<std::filesystem::path> join_cgroup_procs;
  // network = "isolated": the test's network namespace (and the user
  // namespace that owns it, where the runner is not privileged), which the
  // child joins before exec (NetworkNamespace). -1: the runner's own.
  int network_fd = -1;
  int user_namespace_fd = -1;
  // Non-zero: the signal the child gets when the runner ends, however it
  // ends (PR_SET_PDEATHSIG), SIGKILL included. For a launcher (srun,
  // mpirun), whose ranks on other nodes no cgroup of this machine holds:
  // ended, it ends them. A test's own processes outlive a SIGKILLed runner
  // in their cgroup, where the next run ends them.
  int parent_death_signal = 0;
};

class ChildProcess {
 public:
  // The child gets its own process group (so a signal to the group reaches
  // everything it starts, and ctrl-c on the terminal does not), /dev/null as
  // stdin, no blocked signals and default signal dispositions.
  static Expected<ChildProcess> spawn(const SpawnRequest& request);
  // Takes ownership of a process that became this process's child as an
  // orphan (this process is a child subreaper): a test forked by a fork
  // server whose intermediate parent exited.
  static ChildProcess adopt(pid_t pid, pid_t group) { return ChildProcess(pid, group); }
  // A process this one does not own (one a launcher started, maybe on
  // another node): never signalled or reaped here; its exit is recorded
  // with mark_reaped() from what it reported.
  static ChildProcess elsewhere() { return ChildProcess(-1, -1); }
  bool is_ours() const { return pid_ > 0; }

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills the whole group and reaps the child if that has not happened yet
  // (waiting at most 2 s for one that cannot die at once).
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  pid_t process_group() const { return group_; }
  // Sends `signal` to every process still in the child's group. Safe while
  // this child is unreaped: its group id cannot have been reused.
  void signal_group(int signal) const;
  // Records the exit that reap_exited_children() found for this pid.
  void mark_reaped(const ProcessExit& exit) { exit_ = exit; }
  const std::optional<ProcessExit>& exit() const { return exit_; }

 private:
  ChildProcess(pid_t pid, pid_t group) : pid_(pid), group_(group) {}
  void kill_and_reap();

  pid_t pid_ = -1;  // -1 once moved from
  pid_t group_ = -1;
  std::optional<ProcessExit> exit_;  // set once reaped
};

// Reaps every child that has exited, without blocking. `before_reap` runs
// for each while it is still a zombie: the moment to signal what is left of
// its process group.
std::vector<std::pair<pid_t, ProcessExit>> reap_exited_children(
    const std::function<void(pid_t)>& before_reap = {});

// The runner's environment as "NAME=value" strings, less `remove`, with
// `set` added or replaced.
std::vector<std::string> make_environment(
    const std::vector<std::pair<std::string, std::string>>& set,
    const std::vector<std::string>& remove);

}  // namespace ranktest::process
