// What ranktest-audit saw: every process a test started, and how it ended.
// A pass whose children crashed or exited non-zero is `child-failed`.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process/process_exit_watch.h"

namespace ranktest::execute {

struct AuditedChild {
  pid_t pid = 0;
  pid_t ppid = 0;
  std::string command;
  bool execd = true;  // false: a forked copy of its parent, no program of its own
  std::optional<int> exit_code;
  std::optional<int> signal;
};

// The lines of an audit report; lines that do not parse (a write cut short
// by a kill) are skipped.
std::vector<AuditedChild> parse_child_audit(std::string_view jsonl);

// A non-zero exit, or a signal that means a fault (SIGSEGV, SIGABRT, ...).
// SIGTERM, SIGINT, SIGHUP, SIGKILL and SIGPIPE are how tests stop their own
// helpers, so a child ended by one of them is not counted.
bool ended_badly(const AuditedChild& child);

// A worker of the test: a forked copy of one of its processes (os.fork,
// multiprocessing's "fork") or an interpreter that multiprocessing started
// ("spawn", "forkserver": torch.multiprocessing.spawn, torch's
// MultiProcessTestCase). A worker's failure is what a harness swallows. A
// program the test runs as a tool (git, a compiler, `python -m tool` whose
// exit code it checks) is not one, and neither is a fork that failed to
// exec (subprocess's child exits 255, posix_spawn's 127: the parent got
// the error).
bool is_worker(const AuditedChild& child);

// What the process watch saw, as the audit would have recorded it.
AuditedChild audited_from(const process::WatchedExit& watched);

// "child 12 (python3 -c raise SystemExit(3))", "forked child 13"
std::string describe_process(const AuditedChild& child);

// A command line on one line, its program by file name, its middle cut
// where long: "python3 -c raise SystemExit(3)".
std::string short_command(std::string_view command);

// "child 12 (python3 -c raise SystemExit(3)) exited with code 3",
// "forked child 13 was killed by SIGSEGV"
std::string describe(const AuditedChild& child);

// The helper program: ranktest-audit beside the running ranktest binary.
std::filesystem::path audit_helper_path();

}  // namespace ranktest::execute
