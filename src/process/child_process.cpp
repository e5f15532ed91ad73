#include "process/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "process/cgroup_spawn.h"
#include "process/exit_status.h"

extern char** environ;

namespace ranktest::process {
namespace {

// posix_spawn attributes and file actions, released on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
};

std::vector<char*> as_c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Expected<ChildProcess> ChildProcess::spawn(const SpawnRequest& request) {
  if (request.argv.empty()) return Error{"internal error: empty command"};
  // posix_spawn can neither place a child in a cgroup nor in a namespace.
  if (!request.cgroup_v2.empty() || !request.join_cgroup_procs.empty() ||
      request.network_fd >= 0) {
    const auto argv = as_c_strings(request.argv);
    const auto envp = as_c_strings(request.environment);
    auto pid = spawn_in_cgroup(request, argv, envp);
    if (!pid) return pid.error();
    return ChildProcess(*pid, request.process_group ? request.process_group : *pid);
  }
  SpawnSetup setup;

  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGQUIT})
    sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&setup.attributes, &none);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
  posix_spawnattr_setpgroup(&setup.attributes, request.process_group);
  posix_spawnattr_setflags(&setup.attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                               POSIX_SPAWN_SETPGROUP);

  bool stdin_given = false;
  for (const auto& [from, to] : request.descriptors) {
    posix_spawn_file_actions_adddup2(&setup.actions, from, to);
    stdin_given |= to == STDIN_FILENO;
  }
  if (!stdin_given)
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  constexpr int kOutputFlags = O_WRONLY | O_CREAT | O_APPEND;
  if (!request.stdout_path.empty()) {
    posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO,
                                     request.stdout_path.c_str(), kOutputFlags,
                                     0644);
    if (request.stderr_path.empty())
      posix_spawn_file_actions_adddup2(&setup.actions, STDOUT_FILENO,
                                       STDERR_FILENO);
    else
      posix_spawn_file_actions_addopen(&setup.actions, STDERR_FILENO,
                                       request.stderr_path.c_str(),
                                       kOutputFlags, 0644);
  }
  if (!request.working_directory.empty()) {
    // posix_spawn reports a chdir that failed as the program's error
    // ("cannot start 'python3': No such file or directory"): look first,
    // so the message names what is missing.
    std::error_code error;
    if (!std::filesystem::is_directory(request.working_directory, error))
      return Error{fmt::format("cannot start '{}' in {}: {}", request.argv[0],
                               request.working_directory.string(),
                               error ? error.message() : "not a folder")};
    posix_spawn_file_actions_addchdir_np(&setup.actions,
                                         request.working_directory.c_str());
  }

  const auto argv = as_c_strings(request.argv);
  const auto envp = as_c_strings(request.environment);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, argv[0], &setup.actions,
                                 &setup.attributes, argv.data(), envp.data());
  if (error != 0)
    return Error{fmt::format("cannot start '{}': {}", request.argv[0],
                             std::strerror(error))};
  return ChildProcess(pid, request.process_group ? request.process_group : pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      group_(other.group_),
      exit_(std::move(other.exit_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    group_ = other.group_;
    exit_ = std::move(other.exit_);
  }
  return *this;
}

ChildProcess::~ChildProcess() { kill_and_reap(); }

void ChildProcess::signal_group(int signal) const {
  if (pid_ > 0) ::kill(-group_, signal);
}

void ChildProcess::kill_and_reap() {
  if (pid_ <= 0) return;
  if (!exit_) {
    // Not reaped yet, so the group (which it belongs to) still exists.
    ::kill(-group_, SIGKILL);
    // SIGKILL ends a process at once unless it sleeps uninterruptibly (a
    // hung driver, a dead NFS server): then it is not waited for past a
    // moment. As a child of this subreaper it is reaped by the next
    // reap_exited_children(), or by init once the runner is gone.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (int status = 0;;) {
      const pid_t reaped = waitpid(pid_, &status, WNOHANG);
      if (reaped == pid_ || (reaped < 0 && errno != EINTR)) break;
      if (std::chrono::steady_clock::now() >= give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(reaped == 0 ? 5 : 0));
    }
  }
  pid_ = -1;
}

std::vector<std::pair<pid_t, ProcessExit>> reap_exited_children(
    const std::function<void(pid_t)>& before_reap) {
  std::vector<std::pair<pid_t, ProcessExit>> exits;
  for (;;) {
    // Look first (WNOWAIT): while the child is a zombie its pid, and so its
    // process group id, cannot be reused, so `before_reap` may signal the
    // group without hitting a stranger.
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) break;
    const pid_t pid = info.si_pid;
    if (pid == 0) break;
    if (before_reap) before_reap(pid);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) break;
    exits.emplace_back(pid, decode_wait_status(status));
  }
  return exits;
}

std::vector<std::string> make_environment(
    const std::vector<std::pair<std::string, std::string>>& set,
    const std::vector<std::string>& remove) {
  std::vector<std::string> out;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    const auto name = text.substr(0, text.find('='));
    bool drop = false;
    for (const auto& r : remove) drop = drop || name == r;
    for (const auto& [key, value] : set) drop = drop || name == key;
    if (!drop) out.emplace_back(text);
  }
  for (const auto& [key, value] : set) out.push_back(key + "=" + value);
  return out;
}

}  // namespace ranktest::process
