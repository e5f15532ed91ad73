// What tests compete for: CPU slots, devices and rendezvous ports. A pool
// hands each out to one running test at a time and never more than it has.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "select/test_plan.h"

namespace ranktest::schedule {

// What one started test holds until it finishes.
struct Grant {
  std::vector<int> slots;  // never empty once granted
  // Inside an allocation: the nodes its slots are on, in the allocation's
  // order (its job step runs there); empty on one machine.
  std::vector<std::string> nodes;
  // Inside an allocation: the devices counted against each of those nodes
  // (Slurm makes the ones it grants visible): node -> kind -> count.
  std::map<std::string, std::map<std::string, int>> node_devices;
  std::map<std::string, std::vector<std::string>> devices;  // kind -> ids
  int port = 0;  // MASTER_PORT; 0 when none was needed
};

// Ports from a range, each held by at most one running test. Handed out
// round-robin from `start` so a port just released (and perhaps in
// TIME_WAIT) is the last to come again. `claim` may refuse a port (another
// runner holds it, something listens on it); `unclaim` gives it back.
class PortPool {
 public:
  using Claim = std::function<bool(int port)>;
  using Unclaim = std::function<void(int port)>;
  PortPool(int first, int last, Claim claim, Unclaim unclaim = {}, int start = 0);
  std::optional<int> acquire();
  void release(int port);
  // "FIRST-LAST", for messages.
  std::string range() const { return std::to_string(first_) + "-" + std::to_string(last_); }

 private:
  int first_, last_;
  int next_;  // where the next search starts
  Claim claim_;
  Unclaim unclaim_;
  std::set<int> held_;
};

// A node of an allocation and how many tests' slots it has.
struct NodeSlots {
  std::string name;
  int slots = 1;
  std::map<std::string, int> devices = {};  // the job's GRES there, by kind
};

class ResourcePool {
 public:
  // One machine: `slots` slots, the inventory's devices.
  ResourcePool(int slots, config::DeviceInventory devices, PortPool ports);
  // An allocation: each test takes its slots on as many nodes as it spans
  // (its `nodes`, else one), the same number on each, and its devices
  // (Slurm's GRES, which Slurm grants and makes visible) shared out over
  // them, on the nodes with the fewest free slots that fit it (a big test
  // later finds a node whole). A test whose devices no nodes of the
  // allocation have is placed by its slots alone: Slurm then says why it
  // cannot start.
  ResourcePool(std::vector<NodeSlots> nodes, PortPool ports);

  // How many slots a test takes: one per rank (or its `slots`, where more),
  // at most all of them (a test with more ranks than slots runs alone
  // rather than never).
  int slots_needed(const select::ResolvedSettings& settings) const;

  enum class Shortage { none, busy, no_port };
  // Everything the test needs, or nothing: `shortage` says why not.
  std::optional<Grant> try_acquire(const select::ResolvedSettings& settings,
                                   Shortage& shortage);
  void release(const Grant& grant);

  int total_slots() const { return total_slots_; }
  std::string port_range() const { return ports_.range(); }
  int free_slots() const;

 private:
  struct Node {
    std::string name;  // "" on one machine
    int first = 0;     // its slots are first .. first + slots - 1
    int slots = 0;
    std::set<int> free;  // slot numbers, unique across nodes
    std::map<std::string, int> devices, free_devices;  // an allocation's, by kind
  };
  // Inside an allocation: how many nodes the test's job step spans.
  std::size_t nodes_spanned(const select::ResolvedSettings& settings) const;
  // The nodes a test needing `per_node` slots and `devices` on each of
  // `count` nodes takes now (indexes, in order), or none. `devices` is
  // left out where no `count` nodes ever have them.
  std::optional<std::vector<std::size_t>> pick_nodes(int per_node,
                                                     std::map<std::string, int>& devices,
                                                     std::size_t count) const;

  int total_slots_ = 0;
  bool placing_ = false;  // an allocation's nodes
  int largest_ = 1;       // the most slots one node has
  std::vector<Node> nodes_;
  std::map<std::string, std::vector<std::string>> free_devices_;  // in order
  config::DeviceInventory inventory_;
  PortPool ports_;
};

}  // namespace ranktest::schedule
