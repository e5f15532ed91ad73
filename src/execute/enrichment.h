// After the judge: what helps a person read an outcome without changing it.
// In this order: the suspicious lines of a pass, then the hints (which read
// those lines too: a pass that printed "terminated with exit code 17" gets
// the hint for it), then the stacks of a hung test.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/hints.h"
#include "model/outcome.h"

namespace ranktest::execute {

// Failure signatures in the logs of a test that passed (at most three lines,
// each prefixed with its rank where there are several).
void find_suspicious_lines(TestResult& result, const std::vector<std::string>& signatures);

// The hints whose signature is in what the test said: its reason, failure
// messages, ranks' output and suspicious lines. Two at most; only for a
// failure or a suspicious pass.
void attach_hints(TestResult& result, const std::vector<config::Hint>& hints);

// The faulthandler dumps ranktest's pytest plugin wrote in a test's folder
// (python-stacks-<pid>.txt), by pid.
std::vector<std::pair<pid_t, std::filesystem::path>> python_stack_files(
    const std::filesystem::path& folder);

// A debugger's dump of one process, taken at the timeout.
struct TakenStack {
  pid_t pid = 0;
  int rank = -1;
  std::filesystem::path path;
};

// The stacks of a hung test: each debugger's dump summarised; where the
// process also wrote a Python stack, that one (it says more than the
// interpreter's C frames). `rank_of` names a pid's rank (-1: none).
void attach_stacks(TestResult& result, const std::vector<TakenStack>& taken,
                   const std::filesystem::path& folder, bool python_stacks,
                   const std::function<int(pid_t)>& rank_of);

}  // namespace ranktest::execute
