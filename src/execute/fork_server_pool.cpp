// The runner's fork servers: one per source that starts the same way
// (ForkServer::key), started when its first test is, polled while it
// collects (its tests wait in Phase::waiting_for_server, without a clock),
// given up for good when it cannot serve (its tests then run plain, said
// once as a run warning); their answers to fork requests read as they
// come (poll_forks), one request per server at a time.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>

#include "execute/process_test_runner.h"

namespace ranktest::execute {

ForkServer* ProcessTestRunner::fork_server_for(const select::PlannedTest& test, bool& starting) {
  starting = false;
  const auto& source = *test.test->source;
  const auto key = ForkServer::key(source);
  if (no_fork_server_.count(key)) return nullptr;
  if (auto it = fork_servers_.find(key); it != fork_servers_.end()) {
    starting = it->second->starting();
    return it->second.get();
  }
  const auto log = folder_.path() / fmt::format("fork-server-{}.log", fork_servers_.size() + 1);
  // It has as long to collect as its first test has to run.
  auto server = ForkServer::launch(source, adapter_for(source.kind), log,
                                   Clock::now() + test.settings->timeout);
  if (!server) {
    give_up_fork_server(source, server.error().message);
    return nullptr;
  }
  starting = true;
  return fork_servers_.emplace(key, std::move(*server)).first->second.get();
}

namespace {

// A source's tests that fail only when forked: after this many, forking is
// no fresh process's equivalent for that source, and the rest run fresh,
// if they are at least 1 in kForkOnlyShare of its tests in the run, or one
// of them hung when forked (Lightning's DDP tests: each costs a whole
// timeout before its fresh run). psutil's 7 in test_connections.py (a
// module-level psutil.Process() is the server's) among its 736 cost three
// runs each; giving up its server cost 20x its run. Counted against the
// tests forked so far, not the run's, they gave it up whenever that module
// came first.
constexpr std::size_t kForkOnlyLimit = 2;
constexpr std::size_t kForkOnlyShare = 10;

}  // namespace

// Said once per source; its tests then start one process each.
void ProcessTestRunner::give_up_fork_server(const TestSource& source, const std::string& why) {
  const auto key = ForkServer::key(source);
  if (!no_fork_server_.insert(key).second) return;
  fork_servers_.erase(key);
  options_.warn(fmt::format("the fork server of {} cannot fork tests: {}; running its "
                            "tests in plain mode (a fresh process each)",
                            adapter_for(source.kind).fork_server_name(source), why));
}

// Once kForkOnlyLimit of a source's tests failed only when forked, forking
// is no fresh process's equivalent for it: its later tests run fresh.
void ProcessTestRunner::failed_only_forked(const select::PlannedTest& test, Outcome forked) {
  const auto& source = *test.test->source;
  const auto key = ForkServer::key(source);
  auto& ids = fork_only_[key];
  ids.push_back(test.test->id);
  if (forked == Outcome::timed_out) hung_forked_.insert(key);
  const bool many = ids.size() * kForkOnlyShare >= tests_of_source_[key];
  if (ids.size() >= kForkOnlyLimit && (many || hung_forked_.count(key)))
    give_up_fork_server(source, fmt::format("{} of its tests failed only when forked ({}{}), "
                                            "and passed as fresh processes",
                                            ids.size(), fmt::join(ids, ", "),
                                            many ? "" : "; one hung when forked"));
}

void ProcessTestRunner::remember_fork_only(const std::vector<select::PlannedTest>& tests) {
  std::map<std::string, std::vector<const select::PlannedTest*>> by_source;
  std::map<std::string, std::size_t> of_source;  // its tests in this run
  for (const auto& test : tests) {
    if (!test.test->source->fork_server) continue;
    const auto key = ForkServer::key(*test.test->source);
    ++of_source[key];
    if (test.fresh_process) by_source[key].push_back(&test);
  }
  tests_of_source_ = of_source;
  for (const auto& [key, remembered] : by_source) {
    std::vector<std::string> ids;
    for (const auto* test : remembered) ids.push_back(test->test->id);
    const auto& source = *remembered.front()->test->source;
    if (ids.size() >= kForkOnlyLimit && ids.size() * kForkOnlyShare >= of_source[key]) {
      give_up_fork_server(source, fmt::format("{} of its tests failed only when forked in recent "
                                              "runs ({}), and passed as fresh processes "
                                              "(history)",
                                              ids.size(), fmt::join(ids, ", ")));
      continue;
    }
    // Counted with this run's, toward giving the server up.
    fork_only_[key] = ids;
    // The count and what it means first; then a few names, never cut.
    const std::vector<std::string> named(ids.begin(),
                                         ids.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(ids.size(), 3)));
    const bool one = ids.size() == 1;
    options_.warn(fmt::format(
        "{} failed only when forked in a recent run and passed as {} (history), so {} from the "
        "start (a forked test sees what its server made at import, such as a pid or an object "
        "bound to it): {}{}",
        one ? "1 test" : fmt::format("{} tests", ids.size()),
        one ? "a fresh process" : "fresh processes",
        one ? "it runs as a fresh process" : "they run as fresh processes", fmt::join(named, ", "),
        ids.size() > named.size() ? fmt::format(" and {} more", ids.size() - named.size()) : ""));
  }
}

// Servers that said they are ready (or that they cannot serve) start the
// tests waiting for them: forked, or plain.
void ProcessTestRunner::poll_fork_servers(Clock::time_point now) {
  std::vector<std::pair<std::string, std::optional<std::string>>> settled;  // key, why not
  for (auto& [key, server] : fork_servers_) {
    if (!server->starting()) continue;
    auto ready = server->poll_ready(now);
    if (!ready) continue;
    settled.emplace_back(key, *ready ? std::nullopt
                                     : std::optional<std::string>(ready->error().message));
  }
  for (const auto& [key, why_not] : settled) {
    std::vector<RunningTest*> waiting;
    for (const auto& running : running_)
      if (running->phase == Phase::waiting_for_server &&
          ForkServer::key(*running->test->test->source) == key)
        waiting.push_back(running.get());
    if (!why_not)
      for (const RunningTest* running : waiting)
        took_preload_.insert(running->test->test->source->executable);
    if (why_not) {
      // Said once, naming the source of the first test that waited.
      if (!waiting.empty()) give_up_fork_server(*waiting.front()->test->test->source, *why_not);
      no_fork_server_.insert(key);
      fork_servers_.erase(key);
    }
    for (RunningTest* running : waiting)
      if (!spawn_ranks(*running))
        std::erase_if(running_, [&](const auto& r) { return r.get() == running; });
  }
}

std::vector<int> ProcessTestRunner::starting_server_descriptors() const {
  std::vector<int> descriptors;
  for (const auto& [key, server] : fork_servers_)
    if (server->starting() || server->busy()) descriptors.push_back(server->reply_fd());
  return descriptors;
}

// The answers of fork servers: each adopts its test's rank and starts the
// rest of it; a server answering no one (its test was stopped meanwhile)
// has its fork killed; a server that refused, went away or fell silent is
// given up, and its tests go on in fresh processes. Then each free server
// takes the next test waiting for it.
void ProcessTestRunner::poll_forks(Clock::time_point now) {
  const auto waiting_on = [&](const std::string& key, bool sent) -> RunningTest* {
    for (auto& running : running_)
      if (running->fork_key == key && running->fork_sent == sent) return running.get();
    return nullptr;
  };
  std::vector<RunningTest*> to_go_on;
  std::vector<std::pair<RunningTest*, std::string>> refused;
  for (auto& [key, server] : fork_servers_) {
    if (!server->busy()) continue;
    auto answer = server->poll_fork(now);
    if (!answer) continue;
    RunningTest* running = waiting_on(key, true);
    if (!running) {
      if (*answer) ::kill(**answer, SIGKILL);  // reaped as an orphan
      continue;
    }
    running->fork_key.clear();
    running->fork_sent = false;
    if (!*answer) {
      if (running->fork_probe) server->set_exit_probe(ExitProbe::untried);
      refused.emplace_back(running, answer->error().message);
      continue;
    }
    auto& slot = running->ranks[running->spawned];
    const pid_t request_group =
        running->spawned > 0 ? running->ranks.front().child.process_group() : 0;
    running->forked = true;
    if (running->fork_probe) slot.exit_probe_of = key;
    started_rank(*running, slot,
                 process::ChildProcess::adopt(**answer, request_group ? request_group : **answer));
    if (running->interrupted || running->stopping()) {
      // Stopped while its fork was on the way: it never runs.
      slot.child.signal_group(SIGKILL);
      not_started(*running, running->spawned + 1);
      continue;
    }
    ++running->spawned;
    to_go_on.push_back(running);
  }
  for (auto& [running, why] : refused) {
    give_up_fork_server(*running->test->test->source, why);
    if (running->interrupted || running->stopping()) not_started(*running, running->spawned);
    else to_go_on.push_back(running);
  }
  // Free servers take their next waiting test.
  for (auto& [key, server] : fork_servers_)
    if (!server->busy() && !server->starting())
      if (RunningTest* next = waiting_on(key, false)) to_go_on.push_back(next);
  // Tests whose server was given up meanwhile go on fresh.
  for (auto& running : running_)
    if (!running->fork_key.empty() && !running->fork_sent &&
        !fork_servers_.count(running->fork_key))
      to_go_on.push_back(running.get());
  for (RunningTest* running : to_go_on) {
    if (std::find_if(running_.begin(), running_.end(),
                     [&](const auto& r) { return r.get() == running; }) == running_.end())
      continue;
    running->fork_key.clear();
    if (!spawn_from(*running))
      std::erase_if(running_, [&](const auto& r) { return r.get() == running; });
  }
}

// The ranks of a stopped test from `first` on never start: each ends as
// not started.
void ProcessTestRunner::not_started(RunningTest& running, std::size_t first) {
  running.fork_key.clear();
  running.fork_sent = false;
  for (std::size_t rank = first; rank < running.ranks.size(); ++rank) {
    auto& slot = running.ranks[rank];
    if (slot.result) continue;
    RankResult result;
    result.rank = slot.rank;
    result.outcome = Outcome::interrupted;
    result.reason = "not started";
    slot.result = std::move(result);
  }
  running.spawned = running.ranks.size();
}

}  // namespace ranktest::execute
