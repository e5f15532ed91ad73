#include "execute/enrichment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "execute/stack_dump.h"
#include "execute/suspicious_output.h"
#include "text/file_tail.h"

namespace ranktest::execute {

void find_suspicious_lines(TestResult& result, const std::vector<std::string>& signatures) {
  if (result.outcome != Outcome::passed && result.outcome != Outcome::xpassed) return;
  const bool many = result.ranks.size() > 1;
  for (const auto& rank : result.ranks)
    for (auto& line : find_signatures_in_log(rank.log_path, signatures))
      if (result.suspicious.size() < 3)
        result.suspicious.push_back(many ? fmt::format("[rank {}] {}", rank.rank, line)
                                         : std::move(line));
}

void attach_hints(TestResult& result, const std::vector<config::Hint>& hints) {
  if (!is_failure(result.outcome) && result.suspicious.empty()) return;
  std::string said = result.reason + "\n" + result.output_excerpt;
  for (const auto& failure : result.failures) said += "\n" + failure.text;
  for (const auto& rank : result.ranks) said += "\n" + rank.reason + "\n" + rank.output_excerpt;
  for (const auto& line : result.suspicious) said += "\n" + line;
  const bool failed = is_failure(result.outcome);
  for (const auto& hint : hints) {
    if (result.hints.size() >= 2) break;
    if ((hint.when == config::Hint::When::pass && failed) ||
        (hint.when == config::Hint::When::failure && !failed))
      continue;
    if (said.find(hint.match) != std::string::npos)
      result.hints.push_back(TestResult::Hint{hint.match, hint.explanation, hint.fix});
  }
}

std::vector<std::pair<pid_t, std::filesystem::path>> python_stack_files(
    const std::filesystem::path& folder) {
  std::vector<std::pair<pid_t, std::filesystem::path>> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    const auto name = it->path().filename().string();
    if (name.rfind("python-stacks-", 0) == 0)
      files.emplace_back(std::atoi(name.c_str() + 14), it->path());
  }
  return files;
}

void attach_stacks(TestResult& result, const std::vector<TakenStack>& taken,
                   const std::filesystem::path& folder, bool python_stacks,
                   const std::function<int(pid_t)>& rank_of) {
  for (const auto& stack : taken)
    result.stacks.push_back(StackDump{stack.pid, stack.rank, stack.path.string(),
                                      summarize_stack(text::read_file(stack.path))});
  if (python_stacks)
    for (const auto& [pid, path] : python_stack_files(folder)) {
      const auto summary = summarize_python_stack(text::read_file(path));
      if (summary.empty()) continue;
      auto it = std::find_if(result.stacks.begin(), result.stacks.end(),
                             [pid = pid](const StackDump& s) { return s.pid == pid; });
      if (it == result.stacks.end()) {
        result.stacks.push_back(StackDump{pid, rank_of(pid), path.string(), summary});
      } else {
        it->summary = summary;
        it->path = path.string();
      }
    }
  std::sort(result.stacks.begin(), result.stacks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.rank, a.pid) < std::tie(b.rank, b.pid);
  });
}

}  // namespace ranktest::execute
