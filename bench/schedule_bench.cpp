// Scheduling quality and scale, through a fake launcher (no process runs):
//
//   schedule_bench quality [suites]   makespan ÷ lower bound of generated
//                                     suites with known durations and mixed
//                                     device needs, without and with history
//   schedule_bench scale [tests]      list (parse gtest's JSON listing), plan and
//                                     schedule this many tests; prints the
//                                     time and the peak RSS
//
// Simulated time: the fake runner ends the running test with the earliest
// end and moves the clock there, so a suite of hours is scheduled in
// milliseconds and the makespan is exact.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "frameworks/gtest/gtest_discoverer.h"
#include "schedule/scheduler.h"
#include "select/test_plan.h"

namespace {

using namespace ranktest;
using std::chrono::milliseconds;

constexpr int kDevices = 8;

class SimulatedRunner final : public schedule::TestRunner {
 public:
  explicit SimulatedRunner(const std::vector<milliseconds>& durations) : durations_(durations) {}
  void start(const select::PlannedTest&, const schedule::Assignment& assignment) override {
    running_.push_back({now_ + durations_[assignment.test_index], assignment});
  }
  schedule::RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point>) override {
    const auto next = std::min_element(running_.begin(), running_.end(),
                                       [](const auto& a, const auto& b) { return a.end < b.end; });
    now_ = next->end;
    schedule::RunnerWakeup wakeup;
    TestResult result;
    result.outcome = Outcome::passed;
    wakeup.finished.push_back({next->assignment, result});
    running_.erase(next);
    return wakeup;
  }
  void stop_all() override {}
  TestResult no_free_port(const select::PlannedTest&, const std::string&) override {
    TestResult result;
    result.outcome = Outcome::error;
    return result;
  }
  milliseconds now() const { return now_; }

 private:
  struct Running {
    milliseconds end;
    schedule::Assignment assignment;
  };
  const std::vector<milliseconds>& durations_;
  std::vector<Running> running_;
  milliseconds now_{0};
};

class Quiet final : public schedule::ScheduleObserver {
 public:
  void test_started(const select::PlannedTest&, const schedule::Assignment&) override {}
  void test_finished(const select::PlannedTest&, const schedule::Finished&) override { ++finished; }
  void test_not_run(const select::PlannedTest&, const std::string&) override {}
  void test_slow(const select::PlannedTest&, const schedule::SlowNotice&) override {}
  std::size_t finished = 0;
};

schedule::ResourcePool pool(int slots, int devices) {
  config::DeviceInventory inventory;
  for (int i = 0; i < devices; ++i) inventory["cpu-sim"].push_back(std::to_string(i));
  return schedule::ResourcePool(slots, inventory,
                                schedule::PortPool(20000, 29999, [](int) { return true; }));
}

// The makespan of `plan` (durations by test id) in the order given.
milliseconds makespan(const std::vector<select::PlannedTest>& plan,
                      const std::map<std::string, milliseconds>& duration_of) {
  std::vector<milliseconds> durations;
  for (const auto& test : plan) durations.push_back(duration_of.at(test.test->id));
  SimulatedRunner runner(durations);
  Quiet observer;
  auto resources = pool(kDevices, kDevices);
  schedule::run_schedule(plan, {}, resources, runner, observer);
  return runner.now();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int quality(int suites) {
  std::vector<double> without, with;
  for (int seed = 0; seed < suites; ++seed) {
    std::mt19937 random(static_cast<unsigned>(seed));
    std::vector<TestCase> tests(200);
    std::vector<select::PlannedTest> plan;
    std::map<std::string, milliseconds> duration_of;
    milliseconds device_time{0}, exclusive_time{0}, longest{0};
    for (int i = 0; i < 200; ++i) {
      auto& test = tests[static_cast<std::size_t>(i)];
      test.id = "suite::T" + std::to_string(i);
      test.name = test.id;
      const int devices = 1 << (random() % 4);  // 1, 2, 4 or 8 of 8
      auto settings = std::make_shared<select::ResolvedSettings>();
      settings->devices["cpu-sim"] = devices;
      settings->exclusive = random() % 40 == 0;
      // Mostly short, a few long: durations of real suites are skewed.
      const auto duration =
          milliseconds(random() % 10 == 0 ? 20'000 + random() % 100'000 : 100 + random() % 5'000);
      duration_of[test.id] = duration;
      if (settings->exclusive) exclusive_time += duration;
      else device_time += duration * devices;
      longest = std::max(longest, duration);
      plan.push_back(select::PlannedTest{&test, std::move(settings)});
    }
    // Exclusive tests run alone: nothing else overlaps them.
    const double bound = std::max<double>(
        static_cast<double>((exclusive_time + device_time / kDevices).count()),
        static_cast<double>(longest.count()));
    without.push_back(static_cast<double>(makespan(plan, duration_of).count()) / bound);
    select::order_longest_first(plan, duration_of);
    with.push_back(static_cast<double>(makespan(plan, duration_of).count()) / bound);
  }
  std::printf("scheduling: %d generated suites of 200 tests needing 1, 2, 4 or 8 of 8 devices "
              "(1 in 40 exclusive); makespan / lower bound, median:\n", suites);
  std::printf("  without history (discovery order): %.3f\n", median(without));
  std::printf("  with history (longest first):      %.3f   (goal <= 1.05)\n", median(with));
  return 0;
}

int scale(int count) {
  const auto start = std::chrono::steady_clock::now();
  // The JSON listing gtest writes for `count` tests in suites of 100
  // (`--gtest_list_tests --gtest_output=json:FILE`), read as ranktest reads
  // a binary's.
  std::string listing = "{\n  \"tests\": " + std::to_string(count) +
                        ",\n  \"name\": \"AllTests\",\n  \"testsuites\": [";
  for (int i = 0; i < count; ++i) {
    if (i % 100 == 0)
      listing += std::string(i ? "\n      ]\n    }," : "") + "\n    {\n      \"name\": \"Suite" +
                 std::to_string(i / 100) + "\",\n      \"tests\": 100,\n      \"testsuite\": [";
    listing += std::string(i % 100 ? "," : "") +
               "\n        {\n          \"name\": \"Test" + std::to_string(i % 100) +
               "\",\n          \"file\": \"/home/ci/project/tests/big_test.cpp\",\n"
               "          \"line\": " + std::to_string(10 + i % 100 * 5) + "\n        }";
  }
  listing += "\n      ]\n    }\n  ]\n}\n";
  discover::GtestBinary binary;
  binary.label = "big_test";
  binary.executable = "/bin/true";
  std::vector<TestCase> tests;
  if (auto read = discover::read_listing_json(listing, discover::gtest_test_sink(binary, tests));
      !read) {
    std::fprintf(stderr, "schedule_bench: %s\n", read.error().message.c_str());
    return 1;
  }
  listing.clear();
  listing.shrink_to_fit();
  config::Config config;
  auto plan = select::plan_tests(std::move(tests), {}, config, {});
  select::order_longest_first(plan.to_run, {});
  std::vector<milliseconds> durations(plan.to_run.size(), milliseconds(1));
  SimulatedRunner runner(durations);
  Quiet observer;
  auto resources = pool(2, 0);
  schedule::run_schedule(plan.to_run, {}, resources, runner, observer);
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("scale: %zu tests listed, planned and scheduled through a fake launcher in %.2f s, "
              "peak RSS %.1f MiB   (goal <= 2 s, <= 64 MiB)\n",
              observer.finished, seconds, static_cast<double>(usage.ru_maxrss) / 1024.0);
  return observer.finished == static_cast<std::size_t>(count) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "quality") return quality(argc > 2 ? std::atoi(argv[2]) : 21);
  if (what == "scale") return scale(argc > 2 ? std::atoi(argv[2]) : 100'000);
  std::fprintf(stderr, "usage: schedule_bench quality [suites] | scale [tests]\n");
  return 2;
}
