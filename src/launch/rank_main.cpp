// ranktest-rank: one rank of a test whose ranks a launcher starts.
//
//   mpirun -np N ... ranktest-rank ATTEMPT/launch-plan.json
//   srun --ntasks=N ... ranktest-rank ATTEMPT/launch-plan.json
//
// Reads which rank it is from the launcher (OMPI_COMM_WORLD_RANK,
// SLURM_PROCID, ...), becomes that rank of the runner's launch plan (its
// command, environment and log, as local mode would have started it), and
// records in the attempt's folder where it started and how the test's
// process ended: the runner cannot wait for a process on another node.
// What the runner asks for, through files in the attempt's folder (looked
// for every 20 ms; launchers differ in which processes a signal reaches):
//   stop-requested    SIGTERM to the test's process group; the rank is then
//                     recorded as stopped (as are SIGTERM, SIGINT and SIGHUP
//                     a launcher forwards, which are passed on)
//   stacks-requested  the stacks of the test's processes on this node
//                     (Python's first, through the plugin's faulthandler,
//                     then gdb's), for a timeout
// And, for a rank whose program says when its test begins (pytest's
// plugin, RANKTEST_BEGIN_FD), rank-N.began once it has: the runner's
// timeout for the test counts from there, not from the interpreter's start.
// Exits as the test did (a signal as 128 + its number). Exit 2: it could
// not become a rank (the reason is on stderr: the launcher's log).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "execute/launch_plan.h"
#include "launch/master_port.h"
#include "launchers/rank_identity.h"
#include "execute/stack_dump.h"
#include "process/exit_status.h"
#include "process/process_scan.h"
#include "process/host_name.h"
#include "text/file_tail.h"

namespace {

using namespace ranktest;
using namespace ranktest::execute;
using namespace ranktest::launchers;

constexpr auto kStackDumpTime = std::chrono::seconds(15);
// Where the rank's program finds the begin pipe's write end (as the runner
// gives it locally: test_begin.cpp).
constexpr int kBeginFd = 5;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "ranktest-rank: %s\n", message.c_str());
  std::exit(2);
}

std::int64_t realtime_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Where `host` (this node's name) is among the hosts the launcher fills in
// order (mpirun's hostfile), a short name matching a long one either way.
std::optional<int> position_of(const std::string& host, const std::vector<std::string>& hosts) {
  const auto short_name = [](const std::string& name) { return name.substr(0, name.find('.')); };
  for (std::size_t i = 0; i < hosts.size(); ++i)
    if (hosts[i] == host || short_name(hosts[i]) == short_name(host)) return static_cast<int>(i);
  return std::nullopt;
}

// In the forked child: the rank's environment, output, folder and program.
[[noreturn]] void become_test(const RankPlan& plan, const RankIdentity& identity,
                              const std::string& master_address,
                              std::optional<int> master_port, std::optional<int> node_index,
                              int begin_fd) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Its own group, so a signal reaches whatever the test starts.
  ::setpgid(0, 0);
  for (const auto& name : plan.remove) ::unsetenv(name.c_str());
  for (const auto& [name, value] : plan.set) ::setenv(name.c_str(), value.c_str(), 1);
  if (master_port) ::setenv("MASTER_PORT", std::to_string(*master_port).c_str(), 1);
  // Kept across the exec at kBeginFd (dup2 onto itself would keep its
  // close-on-exec flag: the pipe may already be there).
  if (begin_fd >= 0 && (begin_fd == kBeginFd ? ::fcntl(kBeginFd, F_SETFD, 0) == 0
                                             : ::dup2(begin_fd, kBeginFd) == kBeginFd))
    ::setenv("RANKTEST_BEGIN_FD", std::to_string(kBeginFd).c_str(), 1);
  // Where this rank runs among its node's ranks is the launcher's to say;
  // a test without ranks gets no rank variables (the plan sets no RANK).
  const bool ranked = std::any_of(plan.set.begin(), plan.set.end(),
                                  [](const auto& entry) { return entry.first == "RANK"; });
  if (ranked) {
    ::setenv("LOCAL_RANK", std::to_string(identity.local_rank).c_str(), 1);
    ::setenv("LOCAL_WORLD_SIZE", std::to_string(identity.local_world).c_str(), 1);
  }
  if (identity.several_nodes) {
    // The node's index among the launch's nodes, where the launcher says it.
    if (node_index && ranked)
      ::setenv("GROUP_RANK", std::to_string(*node_index).c_str(), 1);
    else ::unsetenv("GROUP_RANK");
    const auto address = master_address.empty() ? identity.first_node : master_address;
    if (!address.empty()) ::setenv("MASTER_ADDR", address.c_str(), 1);
  }
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, 0);
  if (!plan.log.empty()) {
    const int log = ::open(plan.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log < 0) {
      std::fprintf(stderr, "ranktest-rank: cannot open %s: %s\n", plan.log.c_str(),
                   std::strerror(errno));
      ::_exit(127);
    }
    ::dup2(log, 1);
    ::dup2(log, 2);
  }
  if (!plan.working_directory.empty() && ::chdir(plan.working_directory.c_str()) != 0) {
    std::fprintf(stderr, "ranktest-rank: cannot enter %s: %s\n",
                 plan.working_directory.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  std::vector<char*> argv;
  for (const auto& arg : plan.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "ranktest-rank: cannot run %s: %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

// `root` and every process below it on this node.
std::vector<pid_t> process_tree(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (const auto& process : process::live_processes())
    children[process.parent].push_back(process.pid);
  std::vector<pid_t> tree{root};
  for (std::size_t i = 0; i < tree.size(); ++i)
    for (const pid_t child : children[tree[i]]) tree.push_back(child);
  return tree;
}

// The live processes of process group `group` on this node.
std::vector<pid_t> group_members(pid_t group) {
  std::vector<pid_t> members;
  for (const auto& process : process::live_processes())
    if (process.group == group) members.push_back(process.pid);
  return members;
}

// Waits for `pid` (one of ours) until `deadline`; kills it then.
void wait_or_kill(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  while (::waitpid(pid, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The stacks of every process of the test on this node, as the runner takes
// them locally: Python's through the plugin (SIGUSR2) before gdb stops the
// process, then a gdb per process.
void dump_stacks(pid_t test, int rank, const std::filesystem::path& folder) {
  const auto tree = process_tree(test);
  bool python = false;
  for (const pid_t pid : tree)
    if (std::filesystem::exists(folder / ("python-stacks-" + std::to_string(pid) + ".txt"))) {
      ::kill(pid, SIGUSR2);
      python = true;
    }
  if (python) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<pid_t> debuggers;
  for (const pid_t pid : tree) {
    const pid_t debugger = ::fork();
    if (debugger == 0) {
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      const auto out = rank_stack_path(folder, rank, pid);
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      const auto command = stack_dump_command(pid);
      std::vector<char*> argv;
      for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::fprintf(stderr, "ranktest-rank: cannot run gdb: %s\n", std::strerror(errno));
      ::_exit(127);
    }
    if (debugger > 0) debuggers.push_back(debugger);
  }
  const auto deadline = std::chrono::steady_clock::now() + kStackDumpTime;
  for (const pid_t debugger : debuggers) wait_or_kill(debugger, deadline);
  (void)write_file_atomically(stacks_done_path(folder, rank), "");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) fail("usage: ranktest-rank LAUNCH_PLAN (started by mpirun or srun for ranktest)");
  const auto plan = parse_launch_plan(text::read_file(argv[1]));
  if (!plan) fail(std::string(argv[1]) + ": " + plan.error().message);
  const auto identity = rank_identity(launchers::own_environment());
  if (!identity) fail(identity.error().message);
  if (static_cast<std::size_t>(identity->world) != plan->ranks.size())
    fail("the launcher started " + std::to_string(identity->world) + " tasks but test " +
         plan->test_id + " has " + std::to_string(plan->ranks.size()) +
         " ranks; do not set the task count in the launcher's args");
  const int rank = identity->rank;

  // Every signal that matters is taken in turn by the loop below.
  sigset_t handled;
  sigemptyset(&handled);
  for (const int signal : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&handled, signal);
  ::sigprocmask(SIG_BLOCK, &handled, nullptr);

  // Free on rank 0's node, which may not be the machine that reserved it.
  std::string port_note;
  process::PortLocks port_locks;  // held until this rank ends
  const auto master_port =
      launch::agreed_master_port(*plan, rank, process::host_name(), port_locks, port_note);
  if (!port_note.empty()) std::fprintf(stderr, "ranktest-rank: %s\n", port_note.c_str());

  const auto node_index = identity->node_index ? identity->node_index
                                                : position_of(process::host_name(), plan->node_order);

  // The pipe the rank's program writes a byte on when its test begins.
  const auto& rank_plan = plan->ranks[static_cast<std::size_t>(rank)];
  int begin[2] = {-1, -1};
  if (rank_plan.says_when_it_begins && ::pipe2(begin, O_CLOEXEC) == 0)
    ::fcntl(begin[0], F_SETFL, O_NONBLOCK);
  const pid_t test = ::fork();
  if (test < 0) fail(std::string("cannot fork: ") + std::strerror(errno));
  if (test == 0)
    become_test(rank_plan, *identity, plan->master_address, master_port, node_index, begin[1]);
  ::setpgid(test, test);  // whichever of parent and child runs first
  if (begin[1] >= 0) ::close(begin[1]);

  const RankStart start{rank, process::host_name(), test, identity->job_step};
  if (auto written = write_file_atomically(rank_start_path(plan->folder, rank),
                                           rank_start_json(start));
      !written)
    std::fprintf(stderr, "ranktest-rank: %s\n", written.error().message.c_str());

  RankEnd end;
  int status = 0;
  const auto stop = [&](int signal) {
    end.stopped = true;
    ::kill(-test, signal);
    ::kill(-test, SIGCONT);
  };
  bool stop_seen = false, stacks_taken = false;
  // Ranks see a stop one by one, within this of each other: short, as a
  // rank stopped first can make a peer fail on its own ("connection
  // closed") before that peer sees it.
  const timespec poll{0, 20 * 1000 * 1000};
  for (;;) {
    siginfo_t info{};
    const int signal = ::sigtimedwait(&handled, &info, &poll);
    if (signal == SIGCHLD || signal < 0) {
      if (::waitpid(test, &status, WNOHANG) == test) break;
    } else {
      stop(signal);
    }
    if (!stacks_taken && std::filesystem::exists(stacks_request_path(plan->folder))) {
      stacks_taken = true;
      dump_stacks(test, rank, plan->folder);
    }
    if (!stop_seen && std::filesystem::exists(stop_request_path(plan->folder))) {
      stop_seen = true;
      stop(SIGTERM);
    }
    // A byte: the test began; EOF: it never will (its program ended or
    // exec'd another): nothing is recorded, the start bound holds.
    if (begin[0] >= 0) {
      char byte;
      const ssize_t n = ::read(begin[0], &byte, 1);
      if (n > 0)
        if (auto written = write_file_atomically(rank_began_path(plan->folder, rank), "");
            !written)
          std::fprintf(stderr, "ranktest-rank: %s\n", written.error().message.c_str());
      if (n >= 0) {
        ::close(begin[0]);
        begin[0] = -1;
      }
    }
  }
  end.exit = process::decode_wait_status(status);
  end.ended_at_ns = realtime_ns();
  // What the test left running in its group on this node is named (the
  // runner makes a pass that leaks `leaked`) and then killed. One exiting
  // right now is not a leak: give it a moment to become a zombie.
  end.left_behind = group_members(test);
  for (int wait = 0; wait < 20 && !end.left_behind.empty(); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    end.left_behind = group_members(test);
  }
  if (auto written = write_file_atomically(rank_end_path(plan->folder, rank), rank_end_json(end));
      !written)
    std::fprintf(stderr, "ranktest-rank: %s\n", written.error().message.c_str());
  ::kill(-test, SIGKILL);
  return end.exit.signaled ? 128 + end.exit.signal : end.exit.code;
}
