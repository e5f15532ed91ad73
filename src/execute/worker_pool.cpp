// isolation = "worker": a pytest test forked from its fork server runs in a
// process that then runs the next test of that server, and the next, as an
// xdist worker does, while each passes and leaves no process behind. What
// every test keeps: its own log, result file, environment, timeout from
// its own start, stacks, outcome and events. A test that fails, crashes,
// hangs or is stopped ends its worker the way a forked test ends (its
// process's end is its end); one that leaves processes running ends it
// too. The next test then gets a new worker.
//
// The runner and a worker talk over two FIFOs in the run folder: the
// worker writes {"done": nodeid} once a test passed and reads the next
// test's request, the same JSON line the fork server reads
// (docs/fork-server.md).
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>

#include "execute/local_ranks.h"
#include "execute/process_test_runner.h"
#include "frameworks/framework_adapter.h"
#include "frameworks/framework_kind.h"

namespace ranktest::execute {
namespace {

bool write_line(int fd, const std::string& line) {
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

ProcessTestRunner::Worker::~Worker() {
  // Its requests end: an idle worker reads EOF and exits; ~ChildProcess
  // ends what is left.
  if (requests >= 0) ::close(requests);
  if (replies >= 0) ::close(replies);
}

// Which tests run in a worker: those that may (select::may_run_in_worker),
// forked, or in a worker that collected the source itself (not a fresh
// process's attempt), their output captured.
bool ProcessTestRunner::runs_in_worker(const RunningTest& running) const {
  const auto& source = *running.test->test->source;
  const auto style = frameworks::framework_of(source.kind).worker_style(source);
  return (style == frameworks::WorkerStyle::forked_from_server ||
          style == frameworks::WorkerStyle::collecting) &&
         select::may_run_in_worker(*running.test) && running.ranks.size() == 1 &&
         options_.capture_output && !running.assignment.fresh_process;
}

// mode = "collecting-workers": a new worker is a fresh process of the
// source's whole collection; its first test's request waits in its FIFO.
// False: it runs as a fresh process of its own (no FIFO could be made).
bool ProcessTestRunner::spawn_collecting_worker(RunningTest& running, process::SpawnRequest& request) {
  const auto& test = *running.test;
  const auto& adapter = adapter_for(test.test->source->kind);
  auto& slot = running.ranks.front();
  ForkRequest first{test.test, request.argv, request.environment, slot.log_path,
                    test.test->source->working_directory, 0, {}, false, {}, {}, {}, {}};
  first.before = running.assignment.run_first;
  if (!prepare_worker(running, first) ||
      !write_line(running.worker->requests, fork_message(adapter, first))) {
    running.worker.reset();
    running.group = local_ranks(running);
    return false;
  }
  request.argv = adapter.collecting_worker_argv(*test.test, std::move(request.argv));
  request.environment.push_back("RANKTEST_WORKER_REQUESTS=" + first.worker_requests.string());
  request.environment.push_back("RANKTEST_WORKER_REPLIES=" + first.worker_replies.string());
  return true;
}

// An idle worker of the test's fork server with the test's limits, if any.
std::vector<std::unique_ptr<ProcessTestRunner::Worker>>::iterator ProcessTestRunner::idle_worker_for(
    const RunningTest& running) {
  if (running.assignment.own_worker || !runs_in_worker(running)) return idle_workers_.end();
  const auto& test = *running.test;
  const auto key = ForkServer::key(*test.test->source);
  return std::find_if(idle_workers_.begin(), idle_workers_.end(), [&](const auto& w) {
    return w->key == key && w->max_processes == test.settings->max_processes &&
           w->max_memory == test.settings->max_memory && !w->child.exit();
  });
}

// An idle worker of the test's fork server takes it: the request goes down
// its FIFO, and its process is the test's rank. False: none is idle, the
// test needs a new one.
bool ProcessTestRunner::start_in_idle_worker(RunningTest& running) {
  const auto found = idle_worker_for(running);
  if (found == idle_workers_.end()) return false;
  const auto& test = *running.test;
  std::unique_ptr<Worker> worker = std::move(*found);
  idle_workers_.erase(found);
  auto& slot = running.ranks.front();
  auto request = spawn_request(running.commands.front());
  ForkRequest fork{test.test, request.argv, request.environment, slot.log_path,
                   test.test->source->working_directory, 0, {}, true, {}, {}, {}, {}};
  if (!write_line(worker->requests, fork_message(adapter_for(running.test->test->source->kind), fork))) {
    return false;  // gone: dropped here, reaped by ~ChildProcess; a new one starts
  }
  // The worker's cgroup is the test's: its limits are the test's (equal
  // above); the one made for the test goes.
  if (running.cgroup && options_.cgroups) options_.cgroups->remove_later(std::move(running.cgroup));
  running.cgroup = std::move(worker->cgroup);
  running.forked = !running.test->test->source->collecting_workers;
  auto child = std::move(worker->child);
  worker->child = process::ChildProcess::elsewhere();
  running.worker = std::move(worker);
  running.group = worker_ranks(running);
  started_rank(running, slot, std::move(child));
  running.spawned = 1;
  return true;
}

// A test a worker runs: the worker's process is its rank; the tests it ran
// before are the worker's, and at the test's judging the worker goes on
// (idle, for the next test of its server) or ends (worker_finished).
class ProcessTestRunner::WorkerRanks final : public LocalRanks {
 public:
  using LocalRanks::LocalRanks;
  std::vector<std::string> ran_before() const override {
    return running_.worker ? running_.worker->ran : std::vector<std::string>{};
  }
  void judged() override { runner_.worker_finished(running_); }
};

std::unique_ptr<ProcessTestRunner::RankGroup> ProcessTestRunner::worker_ranks(
    RunningTest& running) {
  return std::make_unique<WorkerRanks>(*this, running);
}

// A test that needs a new worker asks its fork server for one: two FIFOs
// in the run folder, named in the fork request.
bool ProcessTestRunner::prepare_worker(RunningTest& running, ForkRequest& fork) {
  const auto folder = folder_.path() / "workers";
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  const auto number = ++workers_started_;
  fork.worker_requests = folder / fmt::format("worker-{}.requests", number);
  fork.worker_replies = folder / fmt::format("worker-{}.replies", number);
  if (::mkfifo(fork.worker_requests.c_str(), 0600) != 0 ||
      ::mkfifo(fork.worker_replies.c_str(), 0600) != 0)
    return false;
  auto worker = std::make_unique<Worker>();
  worker->key = ForkServer::key(*running.test->test->source);
  worker->max_processes = running.test->settings->max_processes;
  worker->max_memory = running.test->settings->max_memory;
  // Read and write ends the runner holds open for the worker's life, so
  // neither side's open waits and its writes never see a closed pipe.
  worker->replies = ::open(fork.worker_replies.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  worker->requests = ::open(fork.worker_requests.c_str(), O_RDWR | O_CLOEXEC);
  if (worker->replies < 0 || worker->requests < 0) return false;
  running.worker = std::move(worker);
  running.group = worker_ranks(running);
  return true;
}

std::vector<int> ProcessTestRunner::worker_descriptors() const {
  std::vector<int> descriptors;
  for (const auto& running : running_)
    if (running->worker && running->phase == Phase::running) descriptors.push_back(running->worker->replies);
  return descriptors;
}

// What the workers said: a test that passed has ended (its process goes on).
void ProcessTestRunner::poll_workers(Clock::time_point now) {
  for (auto& running : running_) {
    if (!running->worker || running->phase != Phase::running || running->ranks.empty()) continue;
    auto& worker = *running->worker;
    char chunk[512];
    for (;;) {
      const ssize_t n = ::read(worker.replies, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      worker.buffered.append(chunk, static_cast<std::size_t>(n));
      if (worker.buffered.size() > 1 << 16) worker.buffered.clear();  // not ours to read
    }
    const auto newline = worker.buffered.find('\n');
    if (newline == std::string::npos) continue;
    const auto line = nlohmann::json::parse(worker.buffered.substr(0, newline), nullptr, false);
    worker.buffered.erase(0, newline + 1);
    if (line.is_discarded() || !line.contains("done")) continue;
    if (!running->ranks.front().child.exit()) worker_passed(*running, now);
  }
}

// The test passed in its worker. Nothing else of it may run on: processes
// it left (beside the worker) end the worker too, and are left behind as
// for any test (the grace period, then a leak). Else the worker waits for
// the next test once this one is judged.
void ProcessTestRunner::worker_passed(RunningTest& running, Clock::time_point now) {
  auto& slot = running.ranks.front();
  const pid_t pid = slot.child.pid();
  const pid_t group = slot.child.process_group();
  auto others = test_processes(running, group);
  std::erase(others, pid);
  process::ChildProcess worker_process = std::move(slot.child);
  slot.child = process::ChildProcess::elsewhere();
  ProcessExit passed;  // as the process would have ended, had it been the test's own
  slot.child.mark_reaped(passed);
  slot.ended = now;
  if (others.empty()) {
    running.worker->child = std::move(worker_process);
    running.worker_goes_on = true;
  } else {
    ::kill(pid, SIGKILL);
    retired_workers_.push_back(std::move(worker_process));
    running.left_behind = std::move(others);
    running.settle_group = group;
    note_leftovers(running);
    running.left_processes(now, true, phase_times());
  }
  rank_ended(running, slot, now);
}

// The test was judged: a worker that goes on is idle again, with the
// test's cgroup, until the next test of its server takes it.
void ProcessTestRunner::worker_finished(RunningTest& running) {
  if (!running.worker) return;
  auto& worker = *running.worker;
  if (running.worker_goes_on && !stopping_) {
    worker.ran.push_back(running.test->test->id);
    worker.cgroup = std::move(running.cgroup);
    worker.buffered.clear();
    idle_workers_.push_back(std::move(running.worker));
    return;
  }
  // Not going on, though it lives (the run stops, an OOM kill): killed,
  // reaped by reap() like any child, never waited for here.
  if (worker.child.is_ours() && !worker.child.exit()) {
    ::kill(worker.child.pid(), SIGKILL);
    retired_workers_.push_back(std::move(worker.child));
    worker.child = process::ChildProcess::elsewhere();
  }
  running.worker.reset();
}

// A worker's end that reap() found: an idle or retired worker's (gone
// from the pool), else false.
bool ProcessTestRunner::worker_ended(pid_t pid, const ProcessExit& exit) {
  for (auto it = idle_workers_.begin(); it != idle_workers_.end(); ++it)
    if ((*it)->child.pid() == pid) {
      (*it)->child.mark_reaped(exit);
      idle_workers_.erase(it);
      return true;
    }
  for (auto it = retired_workers_.begin(); it != retired_workers_.end(); ++it)
    if (it->pid() == pid) {
      it->mark_reaped(exit);
      retired_workers_.erase(it);
      return true;
    }
  return false;
}

}  // namespace ranktest::execute
