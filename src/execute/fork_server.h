// A fork server: a process started once per source that forks a fresh
// process per test on request. For pytest, pytest with ranktest's plugin in
// server mode, which collects first; for a gtest binary, the binary itself
// with libranktest-forkserver.so preloaded, which serves after the
// binary's static initialisation instead of calling main. Each test process
// is cloned as this runner's own child (CLONE_PARENT, libranktest-forkserver's
// ranktest_fork_as_sibling_into), so the runner reaps it and supervises it like
// any rank. The protocol: docs/fork-server.md.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frameworks/framework_adapter.h"
#include "model/expected.h"
#include "model/test_case.h"
#include "process/child_process.h"

namespace ranktest::execute {

struct ForkRequest {
  const TestCase* test = nullptr;
  std::vector<std::string> argv;  // gtest: the test process's whole argv
  std::vector<std::string> environment;  // "NAME=value", the whole of it
  std::filesystem::path log;
  std::filesystem::path working_directory;
  pid_t process_group = 0;  // 0: a group of its own
  std::vector<std::filesystem::path> cgroup_procs;  // the test's cgroup.procs files
  // gtest: end the test with the ordinary exit (static destructors, fini
  // functions) instead of the fast one (src/forkserver/fast_exit.cpp).
  bool full_exit = false;
  // network = "isolated": NetworkNamespace's paths, which the test joins
  // (user namespace first); empty: the server's network.
  std::string network_namespace;
  std::string user_namespace;
  // isolation = "worker" (pytest): the FIFOs the forked process reads its
  // next tests from and says each passed on; empty: it runs this one test.
  std::filesystem::path worker_requests;
  std::filesystem::path worker_replies;
  // A new worker's tests to run before this one, unreported (narrowing
  // down an order-dependent failure: Assignment::run_first).
  std::vector<std::string> before = {};
};

// The request as the server (or a worker, for its next test) reads it: one
// JSON line (docs/fork-server.md).
std::string fork_message(const FrameworkAdapter& adapter, const ForkRequest& request);

// Whether a gtest server's tests may take the fast exit. Skipping the
// server's teardown must not change how any test ends, so each binary's
// teardown is tried once first: its first test exits fully (the probe); if
// that exit agrees with what gtest reported, the rest exit fast; if the
// teardown changed it (an exit code, a crash in a static destructor), every
// test of that binary exits fully, as a fresh process would.
enum class ExitProbe {
  untried,  // the next test is the probe
  probing,  // the probe runs; tests started meanwhile exit fully too
  fast,
  full,     // fork-exit = "full", or the teardown matters
};

class ForkServer {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts the server for `source`; it collects (pytest) or initialises
  // (gtest) meanwhile, which can take minutes, so nothing here waits for it:
  // the runner polls it (reply_fd, poll_ready) among everything else it
  // watches. An error: it could not even start.
  static Expected<std::unique_ptr<ForkServer>> launch(const TestSource& source,
                                                      const FrameworkAdapter& adapter,
                                                      const std::filesystem::path& log,
                                                      Clock::time_point ready_by);
  ~ForkServer();
  ForkServer(const ForkServer&) = delete;
  ForkServer& operator=(const ForkServer&) = delete;

  // While starting or busy: what to wait on (readable when it says
  // something) and until when.
  bool starting() const { return starting_; }
  int reply_fd() const { return from_server_; }
  Clock::time_point ready_by() const { return ready_by_; }

  // Reads what it said, never waiting: nullopt while it is still starting;
  // Done once it serves; an error saying why it cannot serve (it exited, it
  // did not get ready by ready_by, its guard refuses to fork), with the
  // end of what it printed.
  std::optional<Expected<Done>> poll_ready(Clock::time_point now);

  // Asks for a process running one test, without waiting for the answer
  // (poll_fork); one request at a time (busy() until answered). An error:
  // the server is gone, or does not serve yet.
  Expected<Done> send_fork(const ForkRequest& request);
  // A request is out, unanswered.
  bool busy() const { return fork_group_.has_value(); }
  // When an unanswered request counts as never answered: a fork takes
  // milliseconds, so a server silent for 30 s is stuck.
  Clock::time_point fork_deadline() const { return fork_deadline_; }
  // Reads the answer, never waiting: nullopt while none came; the forked
  // test's pid (in its process group already); an error when the server
  // refused (the guard found a device open or threads running), is gone,
  // or did not answer by fork_deadline().
  std::optional<Expected<pid_t>> poll_fork(Clock::time_point now);

  // Which server a source's tests fork from: sources that start the same
  // way share one.
  static std::string key(const TestSource& source);

  // libranktest-forkserver.so, beside the ranktest binary.
  static std::filesystem::path preload_library();

  // The server's process: reaped by the runner's one reaping loop, which
  // marks it here, so that its end never signals a group that is no
  // longer its own.
  pid_t pid() const { return child_.pid(); }
  void mark_reaped(const ProcessExit& exit) { child_.mark_reaped(exit); }

  ExitProbe exit_probe() const { return exit_probe_; }
  void set_exit_probe(ExitProbe probe) { exit_probe_ = probe; }

 private:
  ForkServer(const FrameworkAdapter& adapter, process::ChildProcess child, int to_server,
             int from_server, std::filesystem::path log, Clock::time_point ready_by)
      : adapter_(adapter), child_(std::move(child)), to_server_(to_server),
        from_server_(from_server), log_(std::move(log)), ready_by_(ready_by) {}
  // A whole line, if one has arrived by `deadline` (now: do not wait).
  Expected<std::optional<std::string>> read_line(Clock::time_point deadline);
  Error cannot_serve(const std::string& why) const;

  const FrameworkAdapter& adapter_;  // how its framework's requests read
  ExitProbe exit_probe_ = ExitProbe::untried;
  process::ChildProcess child_;
  int to_server_ = -1;
  int from_server_ = -1;
  std::filesystem::path log_;
  Clock::time_point ready_by_;
  bool starting_ = true;
  std::string buffered_;
  std::optional<pid_t> fork_group_;  // the unanswered request's process group (0: its own)
  Clock::time_point fork_deadline_ = Clock::time_point::max();
};

}  // namespace ranktest::execute
