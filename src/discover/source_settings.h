// What every test of a [[source]] carries from its table into its
// TestSource, whatever its framework: one place, so no discoverer can leave
// one out (a ctest source once dropped network = "isolated" and ran its
// tests on the host's network).
#pragma once

#include "config/config.h"
#include "model/test_case.h"

namespace ranktest::discover {

// From a [[source]] (config::SourceConfig) or a step between (a gtest
// discoverer's GtestBinary) to the next: each has these fields.
template <class From, class To>
void copy_source_settings(const From& from, To& to) {
  to.env = from.env;
  to.launcher = from.launcher;
  to.network = from.network;
  to.private_tmpdir = from.private_tmpdir;
  to.worker_isolation = from.worker_isolation;
  to.fork_server = from.fork_server;
  to.collecting_workers = from.collecting_workers;
  to.fork_exit_full = from.fork_exit_full;
}

}  // namespace ranktest::discover
