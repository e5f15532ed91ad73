#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>

namespace ranktest::events {

// How long each test took in the previous run (<state-dir>/runs/latest),
// from its journal; empty when there is none. Until the history database
// exists, this is what "longest expected first" goes by.
std::map<std::string, std::chrono::milliseconds> previous_durations(
    const std::filesystem::path& state_dir);

}  // namespace ranktest::events
