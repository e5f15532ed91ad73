#include "process/exit_status.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cstring>

namespace ranktest::process {

ProcessExit decode_wait_status(int status) {
  ProcessExit exit;
  if (WIFSIGNALED(status)) {
    exit.signaled = true;
    exit.signal = WTERMSIG(status);
    exit.core_dumped = WCOREDUMP(status);
  } else {
    exit.code = WEXITSTATUS(status);
  }
  return exit;
}

std::string signal_name(int signal) {
  if (const char* abbreviation = sigabbrev_np(signal))
    return fmt::format("SIG{}", abbreviation);
  return fmt::format("signal {}", signal);
}

std::string describe(const ProcessExit& exit) {
  if (!exit.signaled) return fmt::format("exit code {}", exit.code);
  return exit.core_dumped ? signal_name(exit.signal) + " (core dumped)"
                          : signal_name(exit.signal);
}

}  // namespace ranktest::process
