// isolation = "worker": narrowing down an order-dependent failure to the
// earlier test that causes it. The failing test runs again in a new
// worker after every test its worker ran before it (passing there, its
// failure was flaky, not theirs), then after the first half of them, or
// else the second half, down to one test; bounded by about two runs per
// halving and a time limit. Each halving step runs once, so a test that
// fails at random could steer it to an innocent test: what it found is
// named only once confirmed, the failing test failing after it again and
// passing alone (in a new worker) again; otherwise its failure was flaky.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ranktest::schedule {

// Names, the last `most` of them, "…" for the others.
std::string last_names(const std::vector<std::string>& names, std::size_t most = 5);
// "1 test", "4 tests".
std::string tests_count(std::size_t n);

class OrderBisection {
 public:
  using Clock = std::chrono::steady_clock;
  OrderBisection(std::vector<std::string> ran_before, Clock::time_point now);

  // The tests (ids) the next run puts before the failing test, in order.
  const std::vector<std::string>& trying() const { return trying_; }

  // How the run that put trying() first ended.
  struct Step {
    // flaky: it passed after the same tests (at the first replay, or the
    // confirmation); failing: it failed alone in a new worker while what
    // narrowing down found was confirmed, so no earlier test is to blame.
    enum class Kind { again, flaky, failing, found } kind = Kind::again;
    // again: why it runs again (the retry note); found: what narrowing
    // down found, confirmed, for the order-dependent reason; flaky and
    // failing: why it is not order-dependent (empty at the first replay).
    std::string text;
  };
  // `stop`: the run is ending, no more runs.
  Step after_run(bool failed, bool stop, Clock::time_point now, std::chrono::milliseconds limit);

 private:
  void narrow(std::optional<std::string>& found);
  Step confirm(bool failed, bool stop);

  // narrowing: halving the suspects; after: the confirming run after
  // them; alone: the confirming run with none before it.
  enum class Stage { narrowing, after, alone } stage_ = Stage::narrowing;
  std::string found_;  // what narrowing found, while it is confirmed
  std::vector<std::string> ran_before_;
  std::vector<std::string> suspects_;  // still suspected, in the order they ran
  std::vector<std::string> trying_;
  bool second_half_ = false;  // trying_ is suspects_' second half
  bool replayed_ = false;     // all of them made it fail again
  int runs_ = 0;
  Clock::time_point since_;
};

}  // namespace ranktest::schedule
