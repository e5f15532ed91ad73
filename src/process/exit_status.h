#pragma once

#include <string>

#include "model/outcome.h"

namespace ranktest::process {

// Decodes a waitpid() status.
ProcessExit decode_wait_status(int status);

// "SIGSEGV", "SIGABRT"; "signal 42" for one without a name.
std::string signal_name(int signal);

// "exit code 3", "SIGSEGV (core dumped)".
std::string describe(const ProcessExit& exit);

}  // namespace ranktest::process
