#include "execute/stack_dump.h"

#include <fmt/format.h>

#include <sstream>

namespace ranktest::execute {

std::vector<std::string> stack_dump_command(int pid) {
  return {"gdb",    "-p",  std::to_string(pid), "-batch", "-nx", "-q",
          "-ex",    "set pagination off",       "-ex",    "thread apply all bt"};
}

namespace {

// The function name of a gdb frame line, e.g. from
// "#1  0x00007f in __GI___nanosleep (req=...) at nanosleep.c:25".
std::string frame_function(std::string_view line) {
  auto rest = line.substr(line.find(' ') == std::string_view::npos ? line.size()
                                                                   : line.find(' '));
  const auto in = rest.find(" in ");
  if (rest.find("0x") != std::string_view::npos && in != std::string_view::npos)
    rest = rest.substr(in + 4);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  rest = rest.substr(0, rest.find(" ("));
  // A short name: no template arguments, no parameters, no return type.
  std::string name;
  int depth = 0;
  for (const char c : rest) {
    if (c == '<') ++depth;
    else if (c == '>') depth = depth > 0 ? depth - 1 : 0;
    else if (c == '(' && depth == 0) break;
    else if (depth == 0) name += c;
  }
  const auto space = name.rfind(' ');
  return space == std::string::npos ? name : name.substr(space + 1);
}

}  // namespace

std::string summarize_stack(std::string_view gdb_output, std::size_t frames) {
  // Split into blocks, one per "Thread N (...)" header; prefer Thread 1.
  std::vector<std::pair<std::string, std::vector<std::string>>> threads;
  std::istringstream in{std::string(gdb_output)};
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("Thread ")) threads.push_back({line, {}});
    else if (line.starts_with("#") && !threads.empty()) threads.back().second.push_back(line);
    else if (line.starts_with("#")) threads.push_back({"", {line}});
  }
  const std::vector<std::string>* chosen = nullptr;
  for (const auto& [header, lines] : threads)
    if (header.starts_with("Thread 1 ")) chosen = &lines;
  if (!chosen && !threads.empty()) chosen = &threads.front().second;
  if (!chosen) return {};
  std::string summary;
  std::size_t shown = 0;
  for (const auto& line : *chosen) {
    const auto function = frame_function(line);
    if (function.empty() || function == "??") continue;
    if (summary.ends_with(function)) continue;  // an inlined frame repeats its caller
    summary += (summary.empty() ? "" : " ← ") + function;
    if (++shown == frames) break;
  }
  return summary;
}

std::string summarize_python_stack(std::string_view dump, std::size_t frames) {
  // Split into threads: a header line "Thread 0x... (most recent call first):"
  // or "Current thread 0x...", then "  File \"path\", line N in function".
  struct Thread {
    bool current = false;
    std::vector<std::string> frames;  // innermost first
    bool runs_a_test = false;
  };
  std::vector<Thread> threads;
  std::size_t start = 0;
  while (start < dump.size()) {
    auto end = dump.find('\n', start);
    if (end == std::string_view::npos) end = dump.size();
    const auto line = dump.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("Thread ") || line.starts_with("Current thread ")) {
      threads.push_back(Thread{line.starts_with("Current"), {}, false});
      continue;
    }
    const auto file_at = line.find("File \"");
    if (threads.empty() || file_at == std::string_view::npos) continue;
    const auto file_end = line.find('"', file_at + 6);
    const auto line_at = line.find(", line ", file_end);
    const auto in_at = line.find(" in ", line_at);
    if (file_end == std::string_view::npos || line_at == std::string_view::npos ||
        in_at == std::string_view::npos)
      continue;
    auto file = line.substr(file_at + 6, file_end - file_at - 6);
    if (const auto slash = file.rfind('/'); slash != std::string_view::npos)
      file.remove_prefix(slash + 1);
    const auto number = line.substr(line_at + 7, in_at - line_at - 7);
    const auto function = line.substr(in_at + 4);
    threads.back().frames.push_back(
        fmt::format("{} ({}:{})", function, file, number));
    threads.back().runs_a_test |= function.starts_with("test");
  }
  if (threads.empty()) return {};
  const Thread* chosen = &threads.back();
  for (const auto& thread : threads)
    if (thread.current) chosen = &thread;
  for (const auto& thread : threads)
    if (thread.runs_a_test) chosen = &thread;
  std::string summary;
  for (std::size_t i = 0; i < chosen->frames.size() && i < frames; ++i)
    summary += (i ? " ← " : "") + chosen->frames[i];
  if (chosen->frames.size() > frames) summary += " ← ...";
  return summary;
}

}  // namespace ranktest::execute
