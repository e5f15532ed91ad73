// ChildProcess::spawn's way for a child that starts in its test's cgroup or
// network namespace.
#pragma once

#include <sys/types.h>

#include <vector>

#include "model/expected.h"
#include "process/child_process.h"

namespace ranktest::process {

// Starts `request` (which names a cgroup or a namespace) with `argv` and `envp` as
// null-terminated arrays; the pid, or why the child could not start.
Expected<pid_t> spawn_in_cgroup(const SpawnRequest& request, const std::vector<char*>& argv,
                                const std::vector<char*>& envp);

}  // namespace ranktest::process
