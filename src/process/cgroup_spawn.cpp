// Starting a process inside its test's cgroup without the runner ever
// joining it. posix_spawn cannot do that (glibc 2.36 has no cgroup
// attribute), so this does what posix_spawn does inside: a clone with
// CLONE_VM | CLONE_VFORK, whose child runs on a stack of its own in the
// runner's memory (no page tables copied, no copy-on-write faults in the
// runner afterwards: the runner starts thousands of processes), writes
// itself into the test's cgroups, and does only async-signal-safe work
// (dup2, setpgid, open, write, sigaction, execve) before exec. The runner
// is suspended until the child has exec'd or given up. The child also
// joins the test's network namespace where it has one (network = "isolated").
#include "process/cgroup_spawn.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "process/descriptor.h"
#include "process/network_namespace.h"

namespace ranktest::process {
namespace {

// Opened in the runner, above the descriptors the child maps, so that no
// dup2 of the child overwrites one still to be used.
int open_high(const char* path, int flags, mode_t mode) {
  const int fd = ::open(path, flags | O_CLOEXEC, mode);
  if (fd < 0) return -1;
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 100);
  ::close(fd);
  return high;
}

// argv[0] as posix_spawnp finds it: itself when it names a path, else the
// first executable of that name in the runner's PATH.
std::string resolve_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const auto end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end == start ? "." : dirs.substr(start, end - start);
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

// What the child reports through the error pipe before it gives up.
struct ChildFailure {
  int step = 0;  // kStep*
  int error = 0;
};
constexpr int kStepDescriptors = 1, kStepGroup = 2, kStepCgroup = 3, kStepDirectory = 4,
              kStepExec = 5, kStepNetwork = 6;

[[noreturn]] void child_fails(int pipe_fd, int step) {
  const ChildFailure failure{step, errno};
  [[maybe_unused]] const auto ignored = ::write(pipe_fd, &failure, sizeof failure);
  ::_exit(127);
}

// What the child needs, in the runner's memory (CLONE_VM shares it; the
// runner is suspended while the child reads it).
struct ChildPlan {
  const SpawnRequest* request = nullptr;
  const std::vector<char*>* argv = nullptr;
  const std::vector<char*>* envp = nullptr;
  const char* executable = nullptr;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  std::vector<const char*> procs;  // cgroup.procs files to write itself into
  int report = -1;                 // the error pipe
  pid_t runner = 0;                // the child's parent, for parent_death_signal
};

// The child. Only async-signal-safe calls from here to execve; nothing is
// allocated (the runner's heap is shared and may be mid-change).
int child_main(void* argument) {
  const auto& plan = *static_cast<const ChildPlan*>(argument);
  const int report = plan.report;
  for (const auto& [from, to] : plan.request->descriptors) {
    // dup2 onto itself keeps close-on-exec: clear it instead.
    if (from == to ? ::fcntl(from, F_SETFD, 0) < 0 : ::dup2(from, to) < 0)
      child_fails(report, kStepDescriptors);
  }
  if (plan.stdin_fd >= 0 && ::dup2(plan.stdin_fd, STDIN_FILENO) < 0)
    child_fails(report, kStepDescriptors);
  if (plan.stdout_fd >= 0) {
    if (::dup2(plan.stdout_fd, STDOUT_FILENO) < 0) child_fails(report, kStepDescriptors);
    const int err = plan.stderr_fd >= 0 ? plan.stderr_fd : plan.stdout_fd;
    if (::dup2(err, STDERR_FILENO) < 0) child_fails(report, kStepDescriptors);
  }
  if (::setpgid(0, plan.request->process_group) != 0) child_fails(report, kStepGroup);
  for (const char* file : plan.procs) {
    const int fd = ::open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) child_fails(report, kStepCgroup);
    if (::write(fd, "0", 1) != 1) child_fails(report, kStepCgroup);
    ::close(fd);
  }
  // After the cgroups: a process in a user namespace may no longer write them.
  if (plan.request->network_fd >= 0 &&
      !join_network_namespace(plan.request->network_fd, plan.request->user_namespace_fd))
    child_fails(report, kStepNetwork);
  const auto& directory = plan.request->working_directory;
  if (!directory.empty() && ::chdir(directory.c_str()) != 0) child_fails(report, kStepDirectory);
  // Default dispositions for every signal the runner catches, and for
  // those a test expects at their default even if the runner ignores them.
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0) continue;
    const bool always = signal == SIGINT || signal == SIGTERM || signal == SIGHUP ||
                        signal == SIGCHLD || signal == SIGPIPE || signal == SIGQUIT;
    if (always || (current.sa_handler != SIG_IGN && current.sa_handler != SIG_DFL))
      ::sigaction(signal, &action, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Set before exec (it survives it); a runner already gone by now would
  // never send it: the child ends as it would have.
  if (const int signal = plan.request->parent_death_signal; signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, signal);
    if (::getppid() != plan.runner) ::_exit(128 + signal);
  }
  ::execve(plan.executable, plan.argv->data(), plan.envp->data());
  child_fails(report, kStepExec);
}

// The child's stack: one per runner thread, made once (the child runs on it
// only until exec, and only one child at a time per thread: CLONE_VFORK).
constexpr std::size_t kChildStackBytes = 256 * 1024;
char* child_stack_top() {
  thread_local char* top = [] {
    void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    return stack == MAP_FAILED ? nullptr : static_cast<char*>(stack) + kChildStackBytes;
  }();
  return top;
}

}  // namespace

Expected<pid_t> spawn_in_cgroup(const SpawnRequest& request,
                                const std::vector<char*>& argv,
                                const std::vector<char*>& envp) {
  const std::string program = request.argv.front();
  const std::string executable = resolve_executable(program);
  if (executable.empty())
    return Error{fmt::format("cannot start '{}': {}", program, std::strerror(ENOENT))};

  // Everything the child needs is made here, where errors can be told.
  Descriptor stdin_file, stdout_file, stderr_file;
  bool stdin_given = false;
  for (const auto& mapping : request.descriptors) stdin_given |= mapping.second == STDIN_FILENO;
  if (!stdin_given) stdin_file.reset(open_high("/dev/null", O_RDONLY, 0));
  constexpr int kOutputFlags = O_WRONLY | O_CREAT | O_APPEND;
  if (!request.stdout_path.empty()) {
    stdout_file.reset(open_high(request.stdout_path.c_str(), kOutputFlags, 0644));
    if (stdout_file.get() < 0)
      return Error{fmt::format("cannot open {}: {}", request.stdout_path.string(),
                               std::strerror(errno))};
    if (!request.stderr_path.empty()) {
      stderr_file.reset(open_high(request.stderr_path.c_str(), kOutputFlags, 0644));
      if (stderr_file.get() < 0)
        return Error{fmt::format("cannot open {}: {}", request.stderr_path.string(),
                                 std::strerror(errno))};
    }
  }
  std::vector<std::string> procs;
  // The child writes itself into its v2 cgroup and the v1 ones.
  if (!request.cgroup_v2.empty()) procs.push_back((request.cgroup_v2 / "cgroup.procs").string());
  for (const auto& file : request.join_cgroup_procs) procs.push_back(file.string());
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{std::strerror(errno)};
  Descriptor read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  char* stack = child_stack_top();
  if (!stack) return Error{fmt::format("cannot start '{}': {}", program, std::strerror(ENOMEM))};
  ChildPlan plan;
  plan.request = &request;
  plan.argv = &argv;
  plan.envp = &envp;
  plan.executable = executable.c_str();
  plan.stdin_fd = stdin_file.get();
  plan.stdout_fd = stdout_file.get();
  plan.stderr_fd = stderr_file.get();
  for (const auto& file : procs) plan.procs.push_back(file.c_str());
  plan.report = write_end.get();
  plan.runner = ::getpid();

  // Blocked across the clone: no handler of the runner's may run in the
  // child (on the runner's memory) before it has reset them.
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  // The kernel lets only a process that shares its memory with no other
  // join a user namespace: a child that must (an unprivileged runner's
  // isolated network) gets a copy of the runner's memory instead.
  const int sharing = plan.request->user_namespace_fd >= 0 ? 0 : CLONE_VM;
  const int pid = ::clone(child_main, stack, sharing | CLONE_VFORK | SIGCHLD, &plan);
  const int clone_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) return Error{fmt::format("cannot start '{}': {}", program, std::strerror(clone_error))};
  // The child has exec'd or exited (CLONE_VFORK): whatever it wrote is there.
  write_end.reset();
  ChildFailure failure;
  ssize_t got;
  do got = ::read(read_end.get(), &failure, sizeof failure);
  while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof failure)) return static_cast<pid_t>(pid);
  // It gave up: reap it here, it was never a test.
  int status = 0;
  while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {
  }
  const char* reason = std::strerror(failure.error);
  switch (failure.step) {
    case kStepCgroup:
      return Error{fmt::format("cannot start '{}' in its cgroup ({}): {}; run ranktest where it "
                               "may write the cgroup it made, or without limits",
                               program, procs.empty() ? std::string() : procs.front(),
                               reason)};
    case kStepNetwork:
      return Error{fmt::format("cannot start '{}' in the test's network namespace (network = "
                               "\"isolated\"): setns: {}",
                               program, reason)};
    case kStepDirectory:
      return Error{fmt::format("cannot start '{}' in {}: {}", program,
                               request.working_directory.string(), reason)};
    case kStepGroup:
      return Error{fmt::format("cannot start '{}' in process group {}: {}", program,
                               request.process_group, reason)};
    default:
      return Error{fmt::format("cannot start '{}': {}", program, reason)};
  }
}

}  // namespace ranktest::process
