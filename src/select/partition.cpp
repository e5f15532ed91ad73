#include "select/partition.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <set>

#include "select/test_order.h"

namespace ranktest::select {

std::optional<Partition> parse_partition(std::string_view text) {
  Partition partition;
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto strategy = text.substr(0, colon);
  if (strategy == "hash") partition.strategy = Partition::Strategy::hash;
  else if (strategy == "time") partition.strategy = Partition::Strategy::time;
  else return std::nullopt;
  const auto fraction = text.substr(colon + 1);
  const auto slash = fraction.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto number = [](std::string_view digits, int& out) {
    const auto* end = digits.data() + digits.size();
    const auto [at, error] = std::from_chars(digits.data(), end, out);
    return error == std::errc() && at == end && !digits.empty();
  };
  if (!number(fraction.substr(0, slash), partition.index) ||
      !number(fraction.substr(slash + 1), partition.count))
    return std::nullopt;
  if (partition.count < 1 || partition.index < 1 || partition.index > partition.count ||
      partition.count > 100000)
    return std::nullopt;
  return partition;
}

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::vector<bool> partition_members(const std::vector<std::string>& ids,
                                    const Partition& partition,
                                    const std::map<std::string, config::Duration>& expected) {
  const auto count = static_cast<std::uint64_t>(partition.count);
  const auto mine = static_cast<std::uint64_t>(partition.index - 1);
  std::vector<bool> members(ids.size(), false);
  if (partition.strategy == Partition::Strategy::hash) {
    for (std::size_t i = 0; i < ids.size(); ++i)
      members[i] = stable_hash(ids[i]) % count == mine;
    return members;
  }
  // Tests with no known duration are expected to take the mean of the known.
  config::Duration known_sum{0};
  std::size_t known = 0;
  for (const auto& id : ids)
    if (const auto it = expected.find(id); it != expected.end()) {
      known_sum += it->second;
      ++known;
    }
  const auto fallback = known ? known_sum / static_cast<long>(known) : config::Duration(1000);
  const auto duration_of = [&](std::size_t i) {
    const auto it = expected.find(ids[i]);
    return it == expected.end() ? fallback : it->second;
  };
  // Longest first, ties by id: the same order in every job, whatever order
  // discovery gave.
  std::vector<std::size_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto da = duration_of(a), db = duration_of(b);
    return da != db ? da > db : ids[a] < ids[b];
  });
  std::vector<config::Duration> load(partition.count, config::Duration{0});
  for (const auto i : order) {
    const auto lightest = std::min_element(load.begin(), load.end()) - load.begin();
    load[static_cast<std::size_t>(lightest)] += duration_of(i);
    members[i] = static_cast<std::uint64_t>(lightest) == mine;
  }
  return members;
}

std::size_t keep_partition(std::vector<TestCase>& tests, const Selection& selection,
                           const Partition& partition,
                           const std::map<std::string, config::Duration>& expected) {
  std::vector<std::string> ids;
  std::vector<std::size_t> positions;  // of ids in tests
  for (std::size_t i = 0; i < tests.size(); ++i)
    if (selection_matches(selection, tests[i])) {
      ids.push_back(tests[i].id);
      positions.push_back(i);
    }
  const auto members = partition_members(ids, partition, expected);
  // A partition that runs a test requiring a fixture runs the fixture's
  // setup and cleanup tests too, whichever partition they hash to.
  std::vector<bool> runs(tests.size(), false);
  for (std::size_t k = 0; k < ids.size(); ++k) runs[positions[k]] = members[k];
  add_fixture_tests(tests, runs);
  std::set<std::string> others;
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (!runs[positions[k]]) others.insert(ids[k]);
  std::erase_if(tests, [&](const TestCase& test) { return others.count(test.id) > 0; });
  return others.size();
}

}  // namespace ranktest::select
