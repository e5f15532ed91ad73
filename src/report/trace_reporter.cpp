#include "report/trace_reporter.h"

#include <fstream>

#include "model/overloaded.h"
#include "text/sanitize.h"

namespace ranktest::report {
namespace {

constexpr int kSlotsProcess = 1;
constexpr int kDevicesProcess = 2;

// In whole milliseconds, as the journal keeps times: a trace rebuilt by
// `ranktest report` is the same as the run's.
long long micros(events::TimePoint from, events::TimePoint to) {
  using std::chrono::floor;
  using std::chrono::milliseconds;
  return std::chrono::duration_cast<std::chrono::microseconds>(floor<milliseconds>(to) -
                                                               floor<milliseconds>(from))
      .count();
}

// Perfetto's reserved colour names, by how the test ended.
const char* colour(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed:
    case Outcome::xpassed: return "good";
    case Outcome::skipped:
    case Outcome::xfailed:
    case Outcome::not_run:
    case Outcome::interrupted: return "grey";
    default: return "terrible";
  }
}

}  // namespace

void TraceReporter::report(const events::Event& event) {
  std::visit(
      Overloaded{
          [this](const events::RunStarted& e) {
            run_start = e.time;
            events_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kSlotsProcess},
                               {"args", {{"name", "slots (" + std::to_string(e.jobs) + ")"}}}});
            events_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kDevicesProcess},
                               {"args", {{"name", "devices"}}}});
            for (int slot = 0; slot < e.jobs; ++slot)
              events_.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kSlotsProcess},
                                 {"tid", slot}, {"args", {{"name", "slot " + std::to_string(slot)}}}});
          },
          [this](const events::TestStarted& e) { started_[{e.test.id, e.attempt}] = e.time; },
          [](const events::TestSlow&) {}, [](const events::RunWarning&) {},
          [this](const events::TestFinished& e) {
            const auto it = started_.find({e.test.id, e.attempt});
            if (e.attempt == 0 || it == started_.end()) return;  // never ran
            const auto start = micros(run_start, it->second);
            const auto duration = std::max<long long>(1, micros(it->second, e.time));
            const auto name = text::repair_utf8(e.test.id);
            nlohmann::ordered_json devices = nlohmann::ordered_json::object();
            for (const auto& [kind, ids] : e.placement.devices) devices[kind] = ids;
            const nlohmann::ordered_json args{
                {"outcome", to_string(e.result.outcome)},
                {"reason", text::repair_utf8(e.result.reason)},
                {"attempt", e.attempt},
                {"ranks", e.result.ranks.size()},
                {"devices", devices},
                {"port", e.placement.port}};
            const auto bar = [&](int pid, int tid) {
              events_.push_back({{"ph", "X"}, {"name", name}, {"cat", to_string(e.result.outcome)},
                                 {"pid", pid}, {"tid", tid}, {"ts", start}, {"dur", duration},
                                 {"cname", colour(e.result.outcome)}, {"args", args}});
            };
            for (const int slot : e.placement.slots) bar(kSlotsProcess, slot);
            for (const auto& [kind, ids] : e.placement.devices)
              for (const auto& id : ids) {
                const auto lane_name = kind + ":" + id;
                auto [lane, added] = device_lanes_.emplace(lane_name, static_cast<int>(device_lanes_.size()));
                if (added)
                  events_.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kDevicesProcess},
                                     {"tid", lane->second}, {"args", {{"name", lane_name}}}});
                bar(kDevicesProcess, lane->second);
              }
            started_.erase(it);
          },
          [this](const events::RunFinished&) { write(); }},
      event);
}

void TraceReporter::write() const {
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out << nlohmann::ordered_json{{"displayTimeUnit", "ms"}, {"traceEvents", events_}}.dump() << '\n';
  if (!out) throw std::runtime_error(path_.string() + ": cannot write the trace");
}

}  // namespace ranktest::report
