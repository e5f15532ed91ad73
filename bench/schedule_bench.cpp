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
#include <unistd.h>

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
  // A gtest worker's share (the lead and its followers) runs as one
  // process: its tests one after another, each reported started and
  // finished, the grant coming back with the last.
  void start(const select::PlannedTest&, const schedule::Assignment& assignment) override {
    auto end = now_ + durations_[assignment.test_index];
    for (const auto& follower : assignment.followers) end += durations_[follower.test_index];
    running_.push_back({end, assignment});
  }
  schedule::RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point>) override {
    const auto next = std::min_element(running_.begin(), running_.end(),
                                       [](const auto& a, const auto& b) { return a.end < b.end; });
    now_ = next->end;
    schedule::RunnerWakeup wakeup;
    TestResult result;
    result.outcome = Outcome::passed;
    auto lead = std::move(next->assignment);
    running_.erase(next);
    auto followers = std::move(lead.followers);
    lead.followers.clear();
    auto grant = std::move(lead.grant);
    lead.grant = {};
    wakeup.finished.push_back({lead, result});
    for (const auto& follower : followers) {
      wakeup.started.push_back(schedule::Assignment{follower.test_index, 1, {}});
      wakeup.finished.push_back({schedule::Assignment{follower.test_index, 1, {}}, result});
    }
    wakeup.finished.back().assignment.grant = std::move(grant);
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
      test.set_id("", "suite::T" + std::to_string(i));
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
  // The JSON listing gtest writes for `count` tests in suites of 100
  // (`--gtest_list_tests --gtest_output=json:FILE`), written as gtest
  // writes it, then read as ranktest reads a binary's: from the file.
  char folder[] = "/tmp/schedule_bench.XXXXXX";
  if (!::mkdtemp(folder)) {
    std::perror("schedule_bench: mkdtemp");
    return 1;
  }
  const std::string listing_file = std::string(folder) + "/listing.json";
  {
    std::FILE* out = std::fopen(listing_file.c_str(), "w");
    std::fprintf(out, "{\n  \"tests\": %d,\n  \"name\": \"AllTests\",\n  \"testsuites\": [", count);
    for (int i = 0; i < count; ++i) {
      if (i % 100 == 0)
        std::fprintf(out, "%s\n    {\n      \"name\": \"Suite%d\",\n      \"tests\": 100,\n"
                          "      \"testsuite\": [", i ? "\n      ]\n    }," : "", i / 100);
      std::fprintf(out, "%s\n        {\n          \"name\": \"Test%d\",\n          \"file\": "
                        "\"/home/ci/project/tests/big_test.cpp\",\n          \"line\": %d\n        }",
                   i % 100 ? "," : "", i % 100, 10 + i % 100 * 5);
    }
    std::fprintf(out, "\n      ]\n    }\n  ]\n}\n");
    std::fclose(out);
  }
  const auto start = std::chrono::steady_clock::now();
  discover::GtestBinary binary;
  binary.label = "big_test";
  binary.executable = "/bin/true";
  std::vector<TestCase> tests;
  const auto read =
      discover::read_listing_json_file(listing_file, 0, discover::gtest_test_sink(binary, tests));
  std::remove(listing_file.c_str());
  ::rmdir(folder);
  if (!read) {
    std::fprintf(stderr, "schedule_bench: %s\n", read.error().message.c_str());
    return 1;
  }
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
              "peak RSS %.1f MiB   (goal for 1,000,000: <= 3 s, <= 256 MB)\n",
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
