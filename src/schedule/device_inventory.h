// Which devices this machine has: what [devices] says, and for the kinds it
// does not name, what the hardware shows.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "config/config.h"

namespace ranktest::schedule {

// Looks under `dev` (normally /dev): NVIDIA GPUs as nvidia0, nvidia1, ...
// (kind "cuda"); TPU chips as accel0, ... or, where the driver exposes them
// through VFIO, as vfio/0, vfio/1, ... (kind "tpu").
config::DeviceInventory detect_devices(const std::filesystem::path& dev);

// `configured` wins for every kind it names (a count of 0 hides a kind).
config::DeviceInventory merge_inventory(const config::DeviceInventory& configured,
                                        const config::DeviceInventory& detected);

std::map<std::string, int> device_counts(const config::DeviceInventory& inventory);

}  // namespace ranktest::schedule
