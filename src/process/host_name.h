// This machine's host name (gethostname), as reports, the history, launch
// plans and ranktest-rank's start records name it.
#pragma once

#include <string>

namespace ranktest::process {

// Empty when the kernel will not say.
std::string host_name();

}  // namespace ranktest::process
