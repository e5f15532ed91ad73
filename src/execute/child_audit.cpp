#include "execute/child_audit.h"

#include "process/own_files.h"

#include <fmt/format.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "text/sanitize.h"

namespace ranktest::execute {

std::vector<AuditedChild> parse_child_audit(std::string_view jsonl) {
  std::vector<AuditedChild> children;
  while (!jsonl.empty()) {
    const auto end = jsonl.find('\n');
    const auto line = jsonl.substr(0, end);
    jsonl.remove_prefix(end == std::string_view::npos ? jsonl.size() : end + 1);
    const auto json = nlohmann::json::parse(line, nullptr, false);
    if (json.is_discarded() || !json.is_object()) continue;
    AuditedChild child;
    child.pid = json.value("pid", 0);
    child.ppid = json.value("ppid", 0);
    child.command = json.value("command", "");
    child.execd = json.value("exec", true);
    if (json.contains("exit_code") && json["exit_code"].is_number_integer())
      child.exit_code = json["exit_code"].get<int>();
    if (json.contains("signal") && json["signal"].is_number_integer())
      child.signal = json["signal"].get<int>();
    if (child.pid > 0 && (child.exit_code || child.signal)) children.push_back(std::move(child));
  }
  return children;
}

bool ended_badly(const AuditedChild& child) {
  if (child.signal) {
    switch (*child.signal) {
      case SIGTERM:
      case SIGINT:
      case SIGHUP:
      case SIGKILL:
      case SIGPIPE: return false;
      default: return true;
    }
  }
  return child.exit_code.value_or(0) != 0;
}

bool is_worker(const AuditedChild& child) {
  if (!child.execd) return child.exit_code != 255 && child.exit_code != 127;
  for (const std::string_view mark :
       {"--multiprocessing-fork", "from multiprocessing.spawn import", "multiprocessing.forkserver"})
    if (child.command.find(mark) != std::string::npos) return true;
  return false;
}

AuditedChild audited_from(const process::WatchedExit& watched) {
  AuditedChild child;
  child.pid = watched.pid;
  child.ppid = watched.ppid;
  child.command = watched.command;
  child.execd = watched.execd;
  if (WIFSIGNALED(watched.status)) child.signal = WTERMSIG(watched.status);
  else child.exit_code = WEXITSTATUS(watched.status);
  return child;
}

std::string short_command(std::string_view full) {
  // The program's file name and the start of its arguments: enough to know it.
  const auto space = full.find(' ');
  const auto slash = full.substr(0, space).rfind('/');
  if (slash != std::string_view::npos) full.remove_prefix(slash + 1);
  // On one line: `python -c` programs carry newlines and indents.
  std::string one_line;
  for (const char c : full) {
    const bool blank = c == ' ' || (static_cast<unsigned char>(c) < 0x20);
    if (!blank) one_line += c;
    else if (!one_line.empty() && one_line.back() != ' ') one_line += ' ';
  }
  // Its start and its end where it is long: a relaunched pytest's test id
  // comes last, after the options.
  one_line = text::repair_utf8(one_line);
  if (one_line.size() > 110) {
    auto end = one_line.size() - 50;
    while (end < one_line.size() && (static_cast<unsigned char>(one_line[end]) & 0xC0) == 0x80)
      ++end;  // not inside a UTF-8 sequence
    one_line = text::truncate_utf8(one_line, 60) + one_line.substr(end);
  }
  return one_line;
}

std::string describe_process(const AuditedChild& child) {
  if (!child.execd) return fmt::format("forked child {}", child.pid);
  return fmt::format("child {} ({})", child.pid, short_command(child.command));
}

std::string describe(const AuditedChild& child) {
  std::string how;
  if (child.signal) {
    const char* abbrev = sigabbrev_np(*child.signal);
    how = abbrev ? fmt::format("was killed by SIG{}", abbrev)
                 : fmt::format("was killed by signal {}", *child.signal);
  } else {
    how = fmt::format("exited with code {}", child.exit_code.value_or(0));
  }
  return describe_process(child) + " " + how;
}

std::filesystem::path audit_helper_path() { return process::beside_own_binary("ranktest-audit"); }

}  // namespace ranktest::execute
