#include "schedule/device_inventory.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace ranktest::schedule {
namespace {

// The numbers N of the entries "<prefix>N" in `folder`, ascending.
std::vector<std::string> numbered_entries(const std::filesystem::path& folder,
                                          std::string_view prefix) {
  std::vector<int> numbers;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || name.size() == prefix.size()) continue;
    int number = 0;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    const auto [end, ec] = std::from_chars(first, last, number);
    if (ec == std::errc() && end == last) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  std::vector<std::string> ids;
  for (int number : numbers) ids.push_back(std::to_string(number));
  return ids;
}

}  // namespace

config::DeviceInventory detect_devices(const std::filesystem::path& dev) {
  config::DeviceInventory found;
  if (auto gpus = numbered_entries(dev, "nvidia"); !gpus.empty()) found["cuda"] = gpus;
  auto chips = numbered_entries(dev, "accel");
  if (chips.empty()) chips = numbered_entries(dev / "vfio", "");
  if (!chips.empty()) found["tpu"] = chips;
  return found;
}

config::DeviceInventory merge_inventory(const config::DeviceInventory& configured,
                                        const config::DeviceInventory& detected) {
  config::DeviceInventory merged = detected;
  for (const auto& [kind, ids] : configured) merged[kind] = ids;
  return merged;
}

std::map<std::string, int> device_counts(const config::DeviceInventory& inventory) {
  std::map<std::string, int> counts;
  for (const auto& [kind, ids] : inventory) counts[kind] = static_cast<int>(ids.size());
  return counts;
}

}  // namespace ranktest::schedule
