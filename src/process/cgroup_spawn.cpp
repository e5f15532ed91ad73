// Starting a process inside its test's cgroup (and network namespace)
// without the runner ever joining either. posix_spawn cannot do that (glibc
// 2.36 has no cgroup attribute), so this is a fork-like clone3 whose child
// does only async-signal-safe work (dup2, setpgid, write, setns, sigaction,
// execve) before exec: the runner may have other threads.
#include "process/cgroup_spawn.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "process/network_namespace.h"

namespace ranktest::process {
namespace {

// A descriptor closed on every path.
class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

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

long clone3_into(int cgroup_fd) {
  clone_args args{};
  // CLONE_VFORK: the runner resumes once the child has exec'd (or given
  // up), so its process group and cgroup exist when spawn returns.
  args.flags = CLONE_VFORK | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0);
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<std::uint64_t>(cgroup_fd >= 0 ? cgroup_fd : 0);
  return ::syscall(SYS_clone3, &args, sizeof args);
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
  Descriptor stdin_file, stdout_file, stderr_file, cgroup_dir;
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
  if (!request.cgroup_v2.empty()) {
    cgroup_dir.reset(open_high(request.cgroup_v2.c_str(), O_PATH | O_DIRECTORY, 0));
    if (cgroup_dir.get() < 0)
      return Error{fmt::format("cannot open the test's cgroup {}: {}",
                               request.cgroup_v2.string(), std::strerror(errno))};
  }
  std::vector<std::string> procs;
  for (const auto& file : request.join_cgroup_procs) procs.push_back(file.string());
  // Where clone3 cannot place the child (a kernel before 5.7), it joins
  // the v2 cgroup itself like the v1 ones.
  std::string v2_procs = request.cgroup_v2.empty() ? "" : (request.cgroup_v2 / "cgroup.procs").string();
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{std::strerror(errno)};
  Descriptor read_end(pipe_fds[0]), write_end(pipe_fds[1]);

  // Blocked across the clone: no handler of the runner's may run in the
  // child before it has reset them.
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  bool placed_by_clone = cgroup_dir.get() >= 0;
  long pid = clone3_into(cgroup_dir.get());
  if (pid < 0 && (errno == ENOSYS || errno == E2BIG || errno == EINVAL)) {
    placed_by_clone = false;
    pid = clone3_into(-1);
    if (pid < 0 && errno == ENOSYS) pid = ::syscall(SYS_clone, CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
  }
  if (pid == 0) {
    // The child. Only async-signal-safe calls from here to execve.
    const int report = write_end.get();
    for (const auto& [from, to] : request.descriptors) {
      // dup2 onto itself keeps close-on-exec: clear it instead.
      if (from == to ? ::fcntl(from, F_SETFD, 0) < 0 : ::dup2(from, to) < 0)
        child_fails(report, kStepDescriptors);
    }
    if (stdin_file.get() >= 0 && ::dup2(stdin_file.get(), STDIN_FILENO) < 0)
      child_fails(report, kStepDescriptors);
    if (stdout_file.get() >= 0) {
      if (::dup2(stdout_file.get(), STDOUT_FILENO) < 0) child_fails(report, kStepDescriptors);
      const int err = stderr_file.get() >= 0 ? stderr_file.get() : stdout_file.get();
      if (::dup2(err, STDERR_FILENO) < 0) child_fails(report, kStepDescriptors);
    }
    if (::setpgid(0, request.process_group) != 0) child_fails(report, kStepGroup);
    const auto join = [&](const std::string& file) {
      const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) child_fails(report, kStepCgroup);
      if (::write(fd, "0", 1) != 1) child_fails(report, kStepCgroup);
      ::close(fd);
    };
    if (!placed_by_clone && !v2_procs.empty()) join(v2_procs);
    for (const auto& file : procs) join(file);
    // After the cgroup: a user namespace's process may no longer write it.
    if (request.network_fd >= 0 &&
        !join_network_namespace(request.network_fd, request.user_namespace_fd))
      child_fails(report, kStepNetwork);
    if (!request.working_directory.empty() && ::chdir(request.working_directory.c_str()) != 0)
      child_fails(report, kStepDirectory);
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
    ::execve(executable.c_str(), argv.data(), envp.data());
    child_fails(report, kStepExec);
  }
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
                               program, request.cgroup_v2.empty() && !procs.empty()
                                            ? procs.front() : request.cgroup_v2.string(),
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
