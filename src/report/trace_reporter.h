// --trace PATH: the schedule as a Chrome/Perfetto trace (JSON, "Trace Event
// Format"): one lane per CPU slot and one per device, one bar per test
// attempt on each lane it held, coloured by outcome. Open it in
// ui.perfetto.dev or chrome://tracing.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "events/reporter.h"

namespace ranktest::report {

class TraceReporter final : public events::Reporter {
 public:
  explicit TraceReporter(std::filesystem::path path) : path_(std::move(path)) {}
  std::string_view name() const override { return "trace"; }
  void report(const events::Event& event) override;

 private:
  void write() const;
  std::filesystem::path path_;
  events::TimePoint run_start{};
  std::map<std::pair<std::string, int>, events::TimePoint> started_;  // (id, attempt)
  nlohmann::ordered_json events_ = nlohmann::ordered_json::array();
  std::map<std::string, int> device_lanes_;  // "cuda:0" -> lane
};

}  // namespace ranktest::report
