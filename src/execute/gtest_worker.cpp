// isolation = "worker" for gtest: one process of a binary runs a share of
// its tests (Assignment::followers) through GoogleTest's own loop, as the
// binary run alone would, with --gtest_filter naming them; GoogleTest's
// result streaming (--gtest_stream_result_to) tells the runner of each
// start and end over a TCP connection to 127.0.0.1 (gtest_stream.h).
//
// Each test holds the process as its rank from its TestStart until the
// next test's TestStart (by then GoogleTest's printer has flushed the
// test's last lines) or the process's end: its own timeout, stacks, crash,
// log slice, report (written from the stream as gtest's JSON would be) and
// leftovers. A test that fails, crashes, hangs or leaves processes behind
// ends the worker; the tests it did not start go back to the scheduler,
// which gives them to a new worker. Why not call the binary's main again
// per test: a custom main may not run twice (InitGoogleLogging aborts,
// AddGlobalTestEnvironment accumulates, --gtest_output is read once).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

#include <fmt/format.h>

#include "execute/file_range.h"
#include "execute/local_ranks.h"
#include "execute/output_limit.h"
#include "execute/process_test_runner.h"
#include "frameworks/framework_kind.h"
#include "frameworks/gtest/gtest_invocation.h"
#include "process/own_files.h"

namespace ranktest::execute {
namespace {

// The last argv entry starting with `prefix`, or end.
std::vector<std::string>::iterator last_with(std::vector<std::string>& argv, std::string_view prefix) {
  for (auto it = argv.end(); it != argv.begin();) {
    --it;
    if (std::string_view(*it).starts_with(prefix)) return it;
  }
  return argv.end();
}

}  // namespace

// A test a gtest worker runs: the worker's process is its rank from its
// TestStart to the next test's. The worker's log, cgroup and markers are
// its first test's, held by whichever test holds the process; the share's
// tests not started go back when the holder's process ends or it is judged.
class ProcessTestRunner::GtestWorkerRanks final : public LocalRanks {
 public:
  using LocalRanks::LocalRanks;

  bool limit_shared_output(std::uintmax_t max_output) override {
    const auto& worker = *running_.gtest;
    return worker.holder == &running_ && release_middle(worker.log, max_output, worker.slice_from);
  }
  // A later test may hold the process before the test before it was judged
  // and handed the cgroup on.
  const process::TestCgroup* cgroup() const override {
    return running_.cgroup ? running_.cgroup.get() : running_.gtest->cgroup;
  }
  std::vector<std::string> inherited_markers() const override { return running_.gtest->markers; }
  void rank_reaped() override {
    if (running_.gtest->holder == &running_) runner_.gtest_worker_exited(running_);
  }
  std::optional<std::string> starting() const override {
    return "in the binary's static initialisation (or the tests run before it)";
  }
  std::vector<std::string> ran_before() const override {
    const auto& ran = running_.gtest->ran;
    return {ran.begin(), ran.begin() + static_cast<std::ptrdiff_t>(running_.ran_in_worker)};
  }
  void judged() override {
    auto& worker = *running_.gtest;
    if (worker.holder == &running_) {
      runner_.hand_back_followers(running_, false);
      worker.holder = nullptr;
    } else if (worker.holder && !worker.holder->cgroup) {
      // The process (and its cgroup) went on to the next test.
      worker.holder->cgroup = std::move(running_.cgroup);
    }
    // Its cgroup, if still here, is removed after: no later test of the
    // worker may look at it (test_processes).
    if (running_.cgroup && worker.cgroup == running_.cgroup.get()) worker.cgroup = nullptr;
  }
};

std::unique_ptr<ProcessTestRunner::RankGroup> ProcessTestRunner::gtest_worker_ranks(
    RunningTest& running) {
  return std::make_unique<GtestWorkerRanks>(*this, running);
}

bool ProcessTestRunner::runs_in_gtest_worker(const RunningTest& running) const {
  const auto& source = *running.test->test->source;
  return frameworks::framework_of(source.kind).worker_style(source) ==
             frameworks::WorkerStyle::own_loop &&
         select::may_run_in_worker(*running.test) && running.ranks.size() == 1 &&
         options_.capture_output && !running.assignment.fresh_process;
}

// The lead's command becomes the worker's: the filter names the share (and,
// narrowing down an order-dependent failure, the tests to run first), the
// report is written per test from the stream, the output goes to the
// worker's own log. False: no socket; it runs alone.
bool ProcessTestRunner::prepare_gtest_worker(RunningTest& running,
                                             std::vector<schedule::Follower> followers) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  auto worker = std::make_shared<GtestWorker>();
  worker->listener.reset(fd);
  worker->markers = markers(running);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 1) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return false;
  std::vector<std::string> names = running.assignment.run_first;
  names.emplace_back(running.test->test->name());
  for (const auto& follower : followers) names.emplace_back(follower.test->test->name());
  std::string filter = "--gtest_filter=";
  for (std::size_t i = 0; i < names.size(); ++i)
    filter += (i ? ":" : "") + framework::gtest_filter_selecting(names[i]);
  auto& argv = running.commands.front().argv;
  if (const auto it = last_with(argv, "--gtest_output="); it != argv.end()) argv.erase(it);
  if (const auto it = last_with(argv, "--gtest_filter="); it != argv.end()) *it = std::move(filter);
  else argv.push_back(std::move(filter));
  const int port = ntohs(address.sin_port);
  argv.push_back(fmt::format("--gtest_stream_result_to=127.0.0.1:{}", port));
  // The gate holds each test's end until the runner looked at it
  // (frameworks/gtest/gtest_gate.cpp): a fork server's child has it already, a
  // fresh process preloads it.
  running.commands.front().set.emplace_back("RANKTEST_GTEST_GATE", std::to_string(port));
  preload_gate(running.commands.front());
  const auto folder = folder_.path() / "workers";
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  worker->log = folder / fmt::format("gtest-{}.log", ++workers_started_);
  running.commands.front().log = worker->log;
  worker->queue = std::move(followers);
  worker->holder = &running;
  running.gtest = std::move(worker);
  running.group = gtest_worker_ranks(running);
  // Until its own TestStart, the lead is bounded as a starting process.
  running.began = false;
  return true;
}

void ProcessTestRunner::preload_gate(RankPlan& command) {
  auto& env = command.set;
  if (std::any_of(env.begin(), env.end(),
                  [](const auto& entry) { return entry.first == "RANKTEST_GTEST_LINES"; }))
    return;  // preloaded already
  env.emplace_back("RANKTEST_GTEST_LINES", "1");
  std::string preload = process::beside_own_binary("libranktest-gtest-gate.so").string();
  const auto given = std::find_if(env.begin(), env.end(),
                                  [](const auto& entry) { return entry.first == "LD_PRELOAD"; });
  if (given != env.end()) {
    if (!given->second.empty()) preload += ":" + given->second;
    env.erase(given);
  } else if (const char* inherited = std::getenv("LD_PRELOAD"); inherited && *inherited) {
    preload += ":" + std::string(inherited);
  }
  env.emplace_back("LD_PRELOAD", std::move(preload));
}

std::vector<int> ProcessTestRunner::gtest_worker_descriptors() const {
  std::vector<int> descriptors;
  for (const auto& running : running_) {
    if (!running->gtest || running->gtest->holder != running.get()) continue;
    if (!running->ranks.front().child.is_ours()) continue;  // not read yet: poll_gtest_workers
    if (running->gtest->listener) descriptors.push_back(running->gtest->listener.get());
    if (running->gtest->stream) descriptors.push_back(running->gtest->stream.get());
  }
  return descriptors;
}

void ProcessTestRunner::poll_gtest_workers(Clock::time_point now) {
  std::vector<std::unique_ptr<RunningTest>> began;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    RunningTest* holder = running_[i].get();
    if (!holder->gtest || holder->gtest->holder != holder) continue;
    // Read once its process is the test's (a fork server's answer may come
    // after the worker connected): what runs beside it is then known, and
    // the worker waits at its first test's end meanwhile.
    if (!holder->ranks.front().child.is_ours()) continue;
    const auto worker = holder->gtest;  // alive while its tests change hands
    if (!worker->stream && worker->listener) {
      const int fd = ::accept4(worker->listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        const int on = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        worker->stream.reset(fd);
        worker->listener.reset();
        took_preload_.insert(holder->test->test->source->executable);
      }
    }
    char chunk[1 << 14];
    while (worker->stream) {
      const ssize_t n = ::read(worker->stream.get(), chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) worker->stream.reset();
      if (n <= 0) break;
      for (const auto& event : worker->reader.feed({chunk, static_cast<std::size_t>(n)})) {
        if (holder && holder->phase == Phase::running) gtest_event(holder, event, began, now);
        // The worker waits at each test's end for this (the gate), whoever's
        // test it was; what the test left was looked at in gtest_event.
        if (event.kind == GtestStreamEvent::Kind::test_end && worker->stream) {
          (void)!::write(worker->stream.get(), &worker->answer, 1);
          worker->answer = 'c';
        }
      }
    }
  }
  for (auto& test : began) running_.push_back(std::move(test));
}

void ProcessTestRunner::gtest_event(RunningTest*& holder, const GtestStreamEvent& event,
                                    std::vector<std::unique_ptr<RunningTest>>& began,
                                    Clock::time_point now) {
  auto& worker = *holder->gtest;
  using Kind = GtestStreamEvent::Kind;
  switch (event.kind) {
    case Kind::suite_start:
      worker.suite = event.name;
      return;
    case Kind::test_start: {
      const std::string name = worker.suite + "." + event.name;
      if (!holder->began) {
        // Tests run first (narrowing down) or matched beside it by the
        // filter belong to its start; its own start starts its clock.
        if (name != holder->test->test->name()) return;
        holder->began = true;
        holder->started = now;
        holder->start_clock(now, holder->test->settings->timeout, holder->test->settings->slow);
        worker.current = GtestStreamedTest{worker.suite, event.name, name, {}, false, false, 0};
        worker.slice_from = find_in_file(worker.log, 0, gtest_run_line(name)).value_or(0);
        return;
      }
      if (!worker.current.ended) return;  // not GoogleTest's order: the holder's still
      gtest_test_ended(*holder, name, began, now);
      holder = worker.holder;
      return;
    }
    case Kind::part_result:
      if (holder->began && !worker.current.ended)
        worker.current.parts.push_back({event.file, event.line, event.message});
      else if (worker.outside.size() < 100)
        worker.outside.push_back({event.file, event.line, event.message});
      return;
    case Kind::test_end: {
      if (!holder->began || worker.current.ended) return;
      worker.current.ended = true;
      worker.current.passed = event.passed;
      worker.current.elapsed_ms = event.elapsed_ms;
      // The worker waits at the gate: what runs beside it now is this test's.
      const auto& slot = holder->ranks.front();
      worker.left = test_processes(*holder, slot.child.process_group(), slot.child.pid());
      // A test that failed or left processes ends its worker here, before
      // the next test starts in it: the gate exits with the binary's code
      // (the process's end is then the test's, leftovers found as for any
      // test). What the printer wrote tells its parts apart (a SUCCEED()
      // is no failure) and says "Skipped" for a skip; a failure of the
      // global test environment before it fails it, as the binary alone.
      bool ok = event.passed;
      if (!ok) {
        std::error_code error;
        const auto size = std::filesystem::file_size(worker.log, error);
        const std::uintmax_t tail = std::uintmax_t(1) << 20;
        const auto slice =
            read_range(worker.log, std::max(worker.slice_from, size > tail ? size - tail : 0), size);
        classify_gtest_parts(worker.current, slice);
        using PartKind = GtestStreamedTest::Part::Kind;
        ok = !has_part(worker.current, PartKind::failure) &&
             (has_part(worker.current, PartKind::skip) || gtest_log_says_skipping(slice));
      } else {
        classify_gtest_parts(worker.current, {});
      }
      ok = ok && worker.outside.empty();
      if (!ok || !worker.left.empty() || no_more_starts_ || stopping_) {
        worker.answer = ok ? 'e' : 'f';
        worker.ending = true;
      }
      return;
    }
    case Kind::other:
      return;
  }
}

// The holder's log slice (its RUN line up to `end`) becomes its own log,
// and, once GoogleTest said it ended, its report. True: it was skipped.
bool ProcessTestRunner::gtest_slice(RunningTest& holder, std::uintmax_t end,
                                    const std::string* text) {
  auto& worker = *holder.gtest;
  auto& slot = holder.ranks.front();
  if (text && (options_.max_output == 0 || text->size() <= options_.max_output)) {
    // Whole, as copy_head_and_tail would have copied it, without reading
    // the worker's log again; where the log is new (the usual case), what
    // it holds is known: the test's end reads it from memory.
    int fd = ::open(slot.log_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    const bool fresh = fd >= 0;
    if (!fresh) fd = ::open(slot.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0 && write_all(fd, *text) && fresh) slot.written_log = *text;
    if (fd >= 0) ::close(fd);
  } else {
    std::ofstream out(slot.log_path, std::ios::binary | std::ios::app);
    copy_head_and_tail(worker.log, worker.slice_from, end, out, options_.max_output);
  }
  if (!worker.current.ended) return false;
  // The printer's verdict line is near the slice's end.
  constexpr std::uintmax_t kVerdictBytes = 64 * 1024;
  const auto verdict_from = std::max(worker.slice_from, end > kVerdictBytes ? end - kVerdictBytes : 0);
  const auto slice = text ? text->substr(static_cast<std::size_t>(verdict_from - worker.slice_from))
                          : read_range(worker.log, verdict_from, end);
  // (The printer's "[  SKIPPED ]" line comes after the stream's TestEnd,
  // which the gate may have ended the process at: a skip part tells too.)
  using PartKind = GtestStreamedTest::Part::Kind;
  const bool skipped = gtest_log_says_skipped(slice, worker.current.name) ||
                       (!worker.current.passed && has_part(worker.current, PartKind::skip) &&
                        !has_part(worker.current, PartKind::failure));
  auto report = gtest_report_for(worker.current, skipped, worker.outside);
  const int fd = ::open(slot.report_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    if (write_all(fd, report)) slot.written_report = std::move(report);
    ::close(fd);
  }
  return skipped;
}

// The holder's test ended and `next` began in its process: the holder ends
// as its own process would have; the process goes on as `next`'s if the
// holder passed (or skipped), left nothing running, and `next` is the
// share's; else it is killed and the share's rest handed back.
void ProcessTestRunner::gtest_test_ended(RunningTest& holder, const std::string& next,
                                         std::vector<std::unique_ptr<RunningTest>>& began,
                                         Clock::time_point now) {
  auto& worker = *holder.gtest;
  auto& slot = holder.ranks.front();
  std::error_code error;
  const auto size = std::filesystem::file_size(worker.log, error);
  // A test's slice ends where the next one's "[ RUN      ]" line begins. A
  // small one (most are) is read once: its end, its log and its verdict
  // come from that.
  constexpr std::uintmax_t kReadWhole = 1 << 20;
  std::uintmax_t end = error ? worker.slice_from : size;
  std::optional<std::string> text;
  if (!error && size > worker.slice_from && size - worker.slice_from <= kReadWhole) {
    text = read_range(worker.log, worker.slice_from, size);
    const auto found = text->find(gtest_run_line(next), 1);
    if (found != std::string::npos) text->resize(found);
    end = worker.slice_from + text->size();
  } else if (const auto found = find_in_file(worker.log, worker.slice_from + 1, gtest_run_line(next))) {
    end = *found;
  }
  const bool skipped = gtest_slice(holder, end, text ? &*text : nullptr);
  const bool ok = (worker.current.passed || skipped) && worker.outside.empty();
  const auto follower = std::find_if(worker.queue.begin(), worker.queue.end(), [&](const auto& f) {
    return f.test->test->name() == next;
  });
  const pid_t pid = slot.child.pid();
  const pid_t group = slot.child.process_group();
  // What it left, as seen at its end (the gate held the worker there), if
  // still running (most tests leave nothing: nothing to look at again).
  std::vector<pid_t> others;
  if (!worker.left.empty())
    for (const pid_t left : test_processes(holder, group))
      if (std::find(worker.left.begin(), worker.left.end(), left) != worker.left.end())
        others.push_back(left);
  worker.left.clear();
  process::ChildProcess process = std::move(slot.child);
  slot.child = process::ChildProcess::elsewhere();
  ProcessExit as_alone;  // as the binary would have ended, running it alone
  as_alone.code = ok ? 0 : 1;
  slot.child.mark_reaped(as_alone);
  slot.ended = now;
  std::unique_ptr<RunningTest> successor;
  if (ok && others.empty() && follower != worker.queue.end() && !stopping_ && !no_more_starts_ &&
      !worker.ending) {
    holder.assignment.ran_on = holder.assignment.grant;
    schedule::Assignment assignment{follower->test_index, 1, std::move(holder.assignment.grant)};
    holder.assignment.grant = schedule::Grant{};
    const auto* test = follower->test;
    worker.queue.erase(follower);
    successor = prepare_test(*test, assignment);
    if (!successor) {  // an error was said
      holder.assignment.grant = std::move(assignment.grant);
      holder.assignment.ran_on = schedule::Grant{};
    }
  }
  if (successor) {
    worker.ran.push_back(holder.test->test->id);
    successor->ran_in_worker = worker.ran.size();
    successor->gtest = holder.gtest;
    successor->group = gtest_worker_ranks(*successor);
    // The teardown's probe is the process's exit, whoever's test it ends.
    successor->ranks.front().exit_probe_of = std::move(slot.exit_probe_of);
    slot.exit_probe_of.clear();
    successor->forked = holder.forked;
    successor->spawned = 1;
    successor->started = now;
    successor->start_clock(now, successor->test->settings->timeout,
                           successor->test->settings->slow);
    worker.holder = successor.get();
    const auto dot = next.find('.');
    worker.current = GtestStreamedTest{worker.suite, next.substr(dot + 1), next, {}, false, false, 0};
    worker.slice_from = end;
    started_.push_back(successor->assignment);
    started_rank(*successor, successor->ranks.front(), std::move(process));
    began.push_back(std::move(successor));
  } else {
    ::kill(pid, SIGKILL);
    retired_workers_.push_back(std::move(process));
    worker.holder = nullptr;  // what it still streams is nobody's
    if (!others.empty()) {
      holder.left_behind = std::move(others);
      holder.settle_group = group;
      note_leftovers(holder);
      holder.left_processes(now, true, phase_times());
    }
    hand_back_followers(holder, false);
  }
  rank_ended(holder, slot, now);
}

// The worker's process ended while `holder` held it: its slice is the rest
// of the log (from the start, if its test never began). The share's tests not started go back; where the process
// ended by itself (not told to at the gate), the binary did not run them,
// and each runs alone.
void ProcessTestRunner::gtest_worker_exited(RunningTest& holder) {
  auto& worker = *holder.gtest;
  std::error_code error;
  const auto size = std::filesystem::file_size(worker.log, error);
  // A first test that never began gets the whole log (its static
  // initialisation's output is why).
  gtest_slice(holder, error ? worker.slice_from : size);
  const auto& exit = holder.ranks.front().child.exit();
  const bool by_itself =
      exit && !exit->signaled && !holder.timed_out && !holder.interrupted && !worker.ending;
  hand_back_followers(holder, by_itself);
  // Ended at the gate (a failure, a leftover, the run stopping), it took no
  // teardown: no probe of one; the next worker probes.
  auto& probe = holder.ranks.front().exit_probe_of;
  if (worker.ending && !probe.empty()) {
    if (const auto server = fork_servers_.find(probe); server != fork_servers_.end())
      server->second->set_exit_probe(ExitProbe::untried);
    probe.clear();
  }
}

void ProcessTestRunner::hand_back_followers(RunningTest& running, bool alone) {
  if (!running.gtest) return;
  for (const auto& follower : running.gtest->queue)
    returned_.push_back(schedule::Returned{follower.test_index, alone});
  running.gtest->queue.clear();
}

}  // namespace ranktest::execute
