#include "execute/stack_dump.h"

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

}  // namespace ranktest::execute
