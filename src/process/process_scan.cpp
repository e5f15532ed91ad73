#include "process/process_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <iterator>

namespace ranktest::process {
namespace {


// State and process group from /proc/PID/stat; the command name in
// parentheses may contain spaces and ')' so fields count from the last ')'.
bool read_state(const std::string& pid, char& state, pid_t& parent, pid_t& group) {
  const std::string stat = read_proc_file("/proc/" + pid + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  state = stat[close + 2];
  // After ") ": state ppid pgrp ...
  unsigned long ppid = 0;
  long pgrp = 0;
  if (std::sscanf(stat.c_str() + close + 3, "%lu %ld", &ppid, &pgrp) != 2) return false;
  group = static_cast<pid_t>(pgrp);
  parent = static_cast<pid_t>(ppid);
  return true;
}

// The environment of a live process. It reads empty while the process is
// inside execve() (its memory is being replaced); for an orphan of ours (a
// test's escaped process, reparented to this subreaper) that answer is
// retried. Others, kernel threads among them, may really have none.
std::string read_environment(const std::string& pid, bool ours) {
  std::string environ = read_proc_file("/proc/" + pid + "/environ");
  for (int retry = 0; ours && environ.empty() && retry < 20; ++retry) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::error_code gone;
    if (!std::filesystem::exists("/proc/" + pid, gone)) break;
    environ = read_proc_file("/proc/" + pid + "/environ");
  }
  return environ;
}

bool has_markers(const std::string& pid, const std::vector<std::string>& markers,
                 bool ours) {
  if (markers.empty()) return false;
  const std::string environ = read_environment(pid, ours);
  return std::all_of(markers.begin(), markers.end(), [&](const std::string& marker) {
    // Entries are NUL-separated; match a whole entry.
    for (auto at = environ.find(marker); at != std::string::npos;
         at = environ.find(marker, at + 1))
      if ((at == 0 || environ[at - 1] == '\0') &&
          (at + marker.size() == environ.size() || environ[at + marker.size()] == '\0'))
        return true;
    return false;
  });
}

}  // namespace

std::string command_line(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/cmdline";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  if (n <= 0) return {};
  std::string out(buffer, static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '\0') out.pop_back();
  for (char& c : out)
    if (c == '\0') c = ' ';
  return out;
}

pid_t tracer_of(pid_t pid) {
  const auto status = read_proc_file("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find("\nTracerPid:");
  return at == std::string::npos ? 0 : std::atoi(status.c_str() + at + 11);
}

std::optional<std::string> environment_value(pid_t pid, const std::string& name) {
  const std::string environ = read_proc_file("/proc/" + std::to_string(pid) + "/environ");
  const std::string prefix = name + "=";
  for (std::size_t at = 0; at < environ.size();) {
    const auto end = environ.find('\0', at);
    const std::string_view entry(environ.data() + at,
                                 (end == std::string::npos ? environ.size() : end) - at);
    if (entry.starts_with(prefix)) return std::string(entry.substr(prefix.size()));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

// With read(2), not a stream: a process that exits while its /proc file is
// read makes read() fail with ESRCH, which libstdc++'s filebuf turns into
// an exception.
std::string read_proc_file(const std::string& path) {
  std::string content;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  return content;
}

bool become_subreaper() { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0; }

std::vector<ProcessEntry> live_processes() {
  std::vector<ProcessEntry> processes;
  DIR* proc = opendir("/proc");
  if (!proc) return processes;
  const pid_t self = getpid();
  while (const dirent* entry = readdir(proc)) {
    const std::string pid = entry->d_name;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stol(pid) == self) continue;
    char state = 0;
    ProcessEntry process{static_cast<pid_t>(std::stol(pid)), 0, 0};
    if (!read_state(pid, state, process.parent, process.group) || state == 'Z' || state == 'X')
      continue;
    processes.push_back(process);
  }
  closedir(proc);
  return processes;
}

std::optional<ZombieEntry> zombie(pid_t pid) {
  const std::string stat = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  char state = 0;
  pid_t parent = 0;
  ZombieEntry entry;
  if (open == std::string::npos || close == std::string::npos || close < open ||
      !read_state(std::to_string(pid), state, parent, entry.group) || state != 'Z')
    return std::nullopt;
  entry.name = stat.substr(open + 1, close - open - 1);
  return entry;
}

std::vector<pid_t> find_test_processes(pid_t group, const std::vector<std::string>& markers) {
  std::vector<pid_t> found;
  const pid_t self = getpid();
  for (const auto& process : live_processes())
    if (process.group == group ||
        has_markers(std::to_string(process.pid), markers, process.parent == self))
      found.push_back(process.pid);
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace ranktest::process
