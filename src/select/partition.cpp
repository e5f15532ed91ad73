#include "select/partition.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <optional>
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

namespace {

// What a test with no known duration is expected to take: the mean of the
// known ones.
config::Duration unknown_duration(const std::vector<std::string>& ids,
                                  const std::map<std::string, config::Duration>& expected) {
  config::Duration known_sum{0};
  std::size_t known = 0;
  for (const auto& id : ids)
    if (const auto it = expected.find(id); it != expected.end()) {
      known_sum += it->second;
      ++known;
    }
  return known ? known_sum / static_cast<long>(known) : config::Duration(1000);
}

}  // namespace

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
  const auto fallback = unknown_duration(ids, expected);
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

namespace {

// Union-find over small integers.
class Groups {
 public:
  explicit Groups(std::size_t count) : parent_(count) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  std::size_t root(std::size_t node) {
    while (parent_[node] != node) node = parent_[node] = parent_[parent_[node]];
    return node;
  }
  void join(std::size_t a, std::size_t b) { parent_[root(a)] = root(b); }

 private:
  std::vector<std::size_t> parent_;
};

// For each selected test (positions into tests), the index of the first
// selected test of its group: the tests that share a CTest fixture (its
// setup, cleanup and the tests requiring it, joined through any test that
// names two fixtures) go to one partition together, so that no fixture's
// setup runs in two jobs. A test without fixtures is a group of its own.
std::vector<std::size_t> fixture_groups(const std::vector<TestCase>& tests,
                                        const std::vector<std::size_t>& positions) {
  std::vector<std::size_t> group(positions.size());
  std::iota(group.begin(), group.end(), 0);
  std::map<std::string, std::size_t> fixture_node;  // scoped fixture -> node after the tests
  std::vector<std::size_t> selected_at(tests.size(), positions.size());
  for (std::size_t k = 0; k < positions.size(); ++k) selected_at[positions[k]] = k;
  std::vector<std::pair<std::size_t, std::size_t>> joins;  // node pairs
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const auto& details = tests[i].detail();
    std::optional<std::size_t> first;
    for (const auto* names :
         {&details.fixtures_setup, &details.fixtures_cleanup, &details.fixtures_required})
      for (const auto& name : *names) {
        const auto node =
            fixture_node
                .emplace(scoped_name(tests[i], name), positions.size() + fixture_node.size())
                .first->second;
        if (first) joins.emplace_back(*first, node);
        else first = node;
      }
    if (first && selected_at[i] < positions.size()) joins.emplace_back(selected_at[i], *first);
  }
  if (joins.empty()) return group;
  Groups groups(positions.size() + fixture_node.size());
  for (const auto& [a, b] : joins) groups.join(a, b);
  std::map<std::size_t, std::size_t> first_of_root;
  for (std::size_t k = 0; k < positions.size(); ++k)
    group[k] = first_of_root.emplace(groups.root(k), k).first->second;
  return group;
}

}  // namespace

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
  // Each group is one item of the split, named by its smallest id (the
  // same in every job, whatever order discovery gave) and as long as its
  // tests together. A test without fixtures is a group of its own, so a
  // suite without fixtures is split test by test.
  const auto group = fixture_groups(tests, positions);  // its first test, which comes first
  std::vector<std::size_t> firsts;
  std::vector<std::string> name_of(ids.size());  // by a group's first test
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (group[k] == k) firsts.push_back(k);
    if (group[k] == k || ids[k] < name_of[group[k]]) name_of[group[k]] = ids[k];
  }
  std::map<std::string, config::Duration> group_expected;
  if (partition.strategy == Partition::Strategy::time) {
    const auto fallback = unknown_duration(ids, expected);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const auto it = expected.find(ids[k]);
      group_expected[name_of[group[k]]] += it == expected.end() ? fallback : it->second;
    }
  }
  std::vector<std::string> names;
  for (const auto first : firsts) names.push_back(name_of[first]);
  const auto chosen = partition_members(names, partition, group_expected);
  std::vector<bool> group_chosen(ids.size(), false);  // by a group's first test
  for (std::size_t n = 0; n < firsts.size(); ++n) group_chosen[firsts[n]] = chosen[n];
  // Setup and cleanup tests the selection left out come with the tests
  // that require their fixture.
  std::vector<bool> runs(tests.size(), false);
  for (std::size_t k = 0; k < ids.size(); ++k) runs[positions[k]] = group_chosen[group[k]];
  add_fixture_tests(tests, runs);
  std::set<std::string> others;
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (!runs[positions[k]]) others.insert(ids[k]);
  std::erase_if(tests, [&](const TestCase& test) { return others.count(test.id) > 0; });
  return others.size();
}

}  // namespace ranktest::select
