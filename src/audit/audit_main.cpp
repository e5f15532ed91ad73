// ranktest-audit: runs a test command under ptrace and records how every
// process it starts ends, so that a test which passes while a child it
// started crashed or exited non-zero can be told apart from a real pass
// (the failure torch_xla's spawn and a swallowing decorator hid for years).
//
//   ranktest-audit REPORT_FILE COMMAND [ARG...]
//
// Only fork/vfork/clone/exec events are traced (PTRACE_SEIZE, no syscall
// stops), so the test runs at nearly full speed. Each descendant that ends
// while the command runs gets one JSON line in REPORT_FILE:
//   {"pid":12,"ppid":11,"command":"python3 -c ...","exec":true,"exit_code":1}
//   {"pid":13,"ppid":11,"command":"worker","exec":false,"signal":11}
// ("exec": false for a forked copy of its parent that ran no program.)
// The command itself is not listed: ranktest sees its end directly. This
// process exits as the command did (same code, or same signal), as soon as
// the command ends; tracees still running then are detached by the kernel.
// SIGUSR1 asks it to detach from everything at once, so that a debugger can
// attach to take stacks (ranktest does that at a test's timeout).
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

namespace {

struct Process {
  pid_t ppid = 0;
  std::string command;
  bool thread = false;  // a thread of another tracee: its end is not a process's
  bool execd = false;   // ran a program of its own (else a forked copy of its parent)
};

volatile sig_atomic_t g_detach_requested = 0;

std::string read_proc(pid_t pid, const char* what) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + what;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  ::close(fd);
  return out;
}

std::string command_of(pid_t pid) {
  auto cmdline = read_proc(pid, "cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  for (char& c : cmdline)
    if (c == '\0') c = ' ';
  constexpr std::size_t kMax = 300;
  if (cmdline.size() > kMax) cmdline = cmdline.substr(0, kMax) + "...";
  return cmdline;
}

// A task is a thread (not a process) when its thread group id is not its own.
bool is_thread(pid_t tid) {
  const auto status = read_proc(tid, "status");
  const auto at = status.find("\nTgid:");
  if (at == std::string::npos) return false;
  return std::atoi(status.c_str() + at + 6) != tid;
}

pid_t parent_of(pid_t pid) {
  const auto status = read_proc(pid, "status");
  const auto at = status.find("\nPPid:");
  return at == std::string::npos ? 0 : std::atoi(status.c_str() + at + 6);
}

bool is_stop_signal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

[[noreturn]] void exit_like(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the command already dumped one if it could
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

// A process of the test ended: one line of the report.
void report_exit(std::ofstream& report, pid_t pid, const Process& process, int status) {
  nlohmann::json line{{"pid", pid}, {"ppid", process.ppid},
                      {"command", process.command}, {"exec", process.execd}};
  if (WIFSIGNALED(status))
    line["signal"] = WTERMSIG(status);
  else
    line["exit_code"] = WEXITSTATUS(status);
  report << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  report.flush();
}

// A tracee stopped for `event` (or a signal): note what it became and let
// it go on.
void follow(std::map<pid_t, Process>& tracees, pid_t pid, int sig, int event) {
  switch (event) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE: {
      unsigned long child = 0;
      ::ptrace(PTRACE_GETEVENTMSG, pid, nullptr, &child);
      const auto child_pid = static_cast<pid_t>(child);
      auto& entry = tracees[child_pid];
      entry.thread = event == PTRACE_EVENT_CLONE && is_thread(child_pid);
      entry.ppid = pid;
      entry.command = tracees[pid].command;
      ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);
      break;
    }
    case PTRACE_EVENT_EXEC:
      tracees[pid].command = command_of(pid);
      tracees[pid].thread = false;
      tracees[pid].execd = true;
      ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);
      break;
    case PTRACE_EVENT_STOP:
      if (is_stop_signal(sig))
        ::ptrace(PTRACE_LISTEN, pid, nullptr, nullptr);  // a group-stop: stay stopped
      else
        ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);  // a new tracee's first stop
      break;
    default:
      // A signal on its way to the tracee: deliver it.
      ::ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: ranktest-audit REPORT_FILE COMMAND [ARG...]\n");
    return 2;
  }
  std::ofstream report(argv[1], std::ios::app);
  if (!report) {
    std::fprintf(stderr, "ranktest-audit: cannot write %s: %s\n", argv[1], std::strerror(errno));
    return 2;
  }

  // The command starts only once it is traced: it waits for the pipe to close.
  int gate[2];
  if (::pipe2(gate, O_CLOEXEC) != 0) return 2;
  const pid_t command = ::fork();
  if (command < 0) return 2;
  if (command == 0) {
    ::close(gate[1]);
    char byte;
    while (::read(gate[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::execvp(argv[2], argv + 2);
    std::fprintf(stderr, "ranktest-audit: cannot run %s: %s\n", argv[2], std::strerror(errno));
    _exit(127);
  }
  ::close(gate[0]);
  // Signals meant for the test reach it through its process group; this
  // process only follows it, so it outlives it to the end.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  struct sigaction detach {};
  detach.sa_handler = [](int) { g_detach_requested = 1; };
  ::sigaction(SIGUSR1, &detach, nullptr);  // no SA_RESTART: waitpid returns EINTR

  const long options = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
                       PTRACE_O_TRACEEXEC;
  const bool traced = ::ptrace(PTRACE_SEIZE, command, nullptr, options) == 0;
  if (!traced)
    std::fprintf(stderr, "ranktest-audit: cannot trace the test (%s); its children are not audited\n",
                 std::strerror(errno));
  ::close(gate[1]);

  std::map<pid_t, Process> tracees;
  tracees[command] = Process{::getpid(), argv[2], false, true};
  bool detaching = !traced;
  const auto start_detaching = [&] {
    detaching = true;
    for (const auto& [pid, process] : tracees)
      if (pid != command || traced) ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr);
  };

  for (;;) {
    if (g_detach_requested && !detaching) start_detaching();
    int status = 0;
    // Once detaching, only the command itself (still our child) matters.
    const pid_t pid = ::waitpid(detaching && tracees.empty() ? command : -1, &status, __WALL);
    if (pid < 0) {
      if (errno == EINTR) continue;
      if (errno == ECHILD) return 1;  // cannot happen: the command is our child
      return 1;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (pid == command) {
        report.flush();
        exit_like(status);
      }
      const auto it = tracees.find(pid);
      if (it != tracees.end() && !it->second.thread) report_exit(report, pid, it->second, status);
      if (it != tracees.end()) tracees.erase(it);
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (!tracees.count(pid)) {
      // A new tracee whose initial stop came before its parent's event.
      tracees[pid] = Process{parent_of(pid), command_of(pid), is_thread(pid), false};
    }
    if (detaching) {
      // Stopped (by our interrupt or anything else): let it go, with the
      // signal it was stopped for if that was a real signal.
      const int pass = (event == 0 && !is_stop_signal(sig) && sig != SIGTRAP) ? sig : 0;
      ::ptrace(PTRACE_DETACH, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(pass)));
      tracees.erase(pid);
      continue;
    }
    follow(tracees, pid, sig, event);
  }
}
