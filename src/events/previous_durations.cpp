#include "events/previous_durations.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace ranktest::events {

std::map<std::string, std::chrono::milliseconds> previous_durations(
    const std::filesystem::path& state_dir) {
  std::map<std::string, std::chrono::milliseconds> durations;
  std::ifstream journal(state_dir / "runs" / "latest" / "events.jsonl");
  for (std::string line; std::getline(journal, line);) {
    // A journal cut short by a killed runner ends in a partial line: skip it.
    const auto event = nlohmann::json::parse(line, nullptr, false);
    if (event.is_discarded() || event.value("event", "") != "test-finished") continue;
    if (event.value("attempt", 0) == 0) continue;  // never started
    const auto& result = event["result"];
    if (!result.is_object() || !result["duration_ms"].is_number_integer()) continue;
    const auto& test = event["test"];
    if (!test.is_object() || !test["id"].is_string()) continue;
    durations[test["id"].get<std::string>()] =
        std::chrono::milliseconds(result["duration_ms"].get<long>());
  }
  return durations;
}

}  // namespace ranktest::events
