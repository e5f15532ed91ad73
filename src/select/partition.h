// --partition: splitting one suite over N CI jobs, each running partition K.
// Every selected test belongs to exactly one partition, whichever K asks:
//   hash:K/N  by a hash of the test id: a test keeps its partition when
//             others are added or removed, whatever the machine.
//   time:K/N  by expected duration, so the partitions take about as long:
//             longest first into the least-loaded partition. Every job must
//             see the same tests and the same durations (history) to agree.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.h"
#include "model/test_case.h"
#include "select/test_plan.h"

namespace ranktest::select {

struct Partition {
  enum class Strategy { hash, time };
  Strategy strategy = Strategy::hash;
  int index = 1;  // K, from 1
  int count = 1;  // N
};

// "hash:2/4", "time:1/3"; nullopt unless 1 <= K <= N.
std::optional<Partition> parse_partition(std::string_view text);

// Drops from `tests` the tests `selection` selects that are not in
// `partition`'s share; returns how many it dropped. Tests the selection
// leaves out stay (they are counted as filtered out later). The tests of a
// CTest fixture (setup, cleanup, those requiring it) are one item: they
// share a partition, and setup or cleanup tests the selection left out
// stay where a test requiring their fixture does.
std::size_t keep_partition(std::vector<TestCase>& tests, const Selection& selection,
                           const Partition& partition,
                           const std::map<std::string, config::Duration>& expected);

// For each of `ids` (the selected tests), whether partition K runs it.
std::vector<bool> partition_members(const std::vector<std::string>& ids,
                                    const Partition& partition,
                                    const std::map<std::string, config::Duration>& expected);

// 64-bit FNV-1a: stable across machines, compilers and releases (unlike
// std::hash), which is what a partition of a CI matrix needs.
std::uint64_t stable_hash(std::string_view text);

}  // namespace ranktest::select
