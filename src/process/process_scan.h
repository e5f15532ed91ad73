// Finding the processes a test left behind, wherever they went.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace ranktest::process {

// The whole of a small file under /proc or /sys ("" when it cannot be
// read), with read(2): such files vanish or refuse mid-read when their
// process exits, and a stream would throw.
std::string read_proc_file(const std::string& path);

// Makes this process the reaper of every orphan among its descendants
// (PR_SET_CHILD_SUBREAPER): a test's double-forked daemon becomes our
// child, not init's. Returns false where the kernel refuses.
bool become_subreaper();

// A live process: its pid, parent and process group.
struct ProcessEntry {
  pid_t pid = 0;
  pid_t parent = 0;
  pid_t group = 0;
};

// Every live (not zombie) process of the machine other than this one.
std::vector<ProcessEntry> live_processes();

// What /proc still tells of an ended, unreaped process (a zombie): its
// process group and its command name (the kernel's 15-character comm; its
// command line is gone with its memory). nullopt when `pid` is not a zombie.
struct ZombieEntry {
  pid_t group = 0;
  std::string name;
};
std::optional<ZombieEntry> zombie(pid_t pid);

// Every live (not zombie) process other than this one that is in process
// group `group`, or whose initial environment holds every entry of
// `markers` ("NAME=value"). The environment catches processes that left the
// group with setsid() or setpgid(); one that cleared its environment and
// its group escapes both.
std::vector<pid_t> find_test_processes(pid_t group, const std::vector<std::string>& markers);

// Its command line, arguments joined by spaces, at most its first 4 KiB
// ("" when it is gone).
std::string command_line(pid_t pid);

// The pid of the process tracing `pid` (TracerPid), 0 when none or gone.
pid_t tracer_of(pid_t pid);

// The value of `name` in a process's initial environment, if it is there.
std::optional<std::string> environment_value(pid_t pid, const std::string& name);

}  // namespace ranktest::process
