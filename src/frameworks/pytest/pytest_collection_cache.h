// The cache of pytest collections: what makes a cached one stale, and
// keeping one (under <state-dir>/pytest-collections/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ranktest::discover {

// FNV-1a, 64 bits: names a cache file and stamps what it holds.
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 1469598103934665603ull);

// A collection kept by an earlier run, where it still holds: collected at
// `fingerprint`, and what it read unchanged (files, folders, variables of
// `environment`).
struct CachedCollection {
  std::string collection;    // what the plugin wrote
  std::string inputs_stamp;  // what it read, stamped
};
std::optional<CachedCollection> cached_collection(const std::filesystem::path& cache_path,
                                                  const std::string& fingerprint,
                                                  const std::vector<std::string>& environment);

// The collection kept for the next run, with what it was collected at
// (written beside, then renamed: a reader never sees half of it).
void keep_collection(const std::filesystem::path& cache_path, const std::string& fingerprint,
                     const nlohmann::json& inputs, const std::string& inputs_stamp,
                     const std::string& collection);

}  // namespace ranktest::discover
