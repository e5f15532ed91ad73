// Stacks of a hung test's processes, taken with gdb before it is killed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "process/child_process.h"

namespace ranktest::execute {

// The command that writes every thread's backtrace of `pid`.
std::vector<std::string> stack_dump_command(int pid);

// "__clock_nanosleep ← nanosleep ← Waits_Test::TestBody ← ...": the
// innermost frames of the main thread (gdb's "Thread 1") of a
// `thread apply all bt` output, unknown frames ("??") left out.
std::string summarize_stack(std::string_view gdb_output, std::size_t frames = 6);

// "test_barrier (test_dist.py:40) ← ...": the innermost frames of the
// thread running the test in a faulthandler dump (the thread with a test_
// frame, else the thread that took the signal, else the last).
std::string summarize_python_stack(std::string_view faulthandler_output, std::size_t frames = 4);

}  // namespace ranktest::execute
