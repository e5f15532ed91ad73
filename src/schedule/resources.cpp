#include "schedule/resources.h"

#include <algorithm>

namespace ranktest::schedule {

PortPool::PortPool(int first, int last, Claim claim, Unclaim unclaim, int start)
    : first_(first),
      last_(last),
      next_(start >= first && start <= last ? start : first),
      claim_(std::move(claim)),
      unclaim_(std::move(unclaim)) {}

std::optional<int> PortPool::acquire() {
  const int size = last_ - first_ + 1;
  for (int i = 0; i < size; ++i) {
    const int port = first_ + (next_ - first_ + i) % size;
    if (held_.count(port) || (claim_ && !claim_(port))) continue;
    held_.insert(port);
    next_ = port == last_ ? first_ : port + 1;
    return port;
  }
  return std::nullopt;
}

void PortPool::release(int port) {
  if (held_.erase(port) && unclaim_) unclaim_(port);
}

ResourcePool::ResourcePool(int slots, config::DeviceInventory devices, PortPool ports)
    : total_slots_(std::max(1, slots)),
      free_devices_(devices),
      inventory_(std::move(devices)),
      ports_(std::move(ports)) {
  nodes_.push_back(Node{"", 0, total_slots_, {}, {}, {}});
  for (int slot = 0; slot < total_slots_; ++slot) nodes_.front().free.insert(slot);
}

ResourcePool::ResourcePool(std::vector<NodeSlots> nodes, PortPool ports)
    : placing_(true), ports_(std::move(ports)) {
  for (const auto& node : nodes) {
    Node held{node.name, total_slots_, std::max(1, node.slots), {}, node.devices, node.devices};
    for (int k = 0; k < held.slots; ++k) held.free.insert(total_slots_ + k);
    total_slots_ += held.slots;
    largest_ = std::max(largest_, held.slots);
    nodes_.push_back(std::move(held));
  }
  if (nodes_.empty()) {
    nodes_.push_back(Node{"", 0, 1, {0}, {}, {}});
    total_slots_ = 1;
  }
}

int ResourcePool::free_slots() const {
  int free = 0;
  for (const auto& node : nodes_) free += static_cast<int>(node.free.size());
  return free;
}

std::size_t ResourcePool::nodes_spanned(const select::ResolvedSettings& settings) const {
  // Its `nodes`; else one, or as few as hold its ranks (as Slurm would
  // spread a step too big for one node).
  const int wanted = std::max(settings.ranks, settings.slots);
  const int nodes = settings.nodes > 0 ? settings.nodes : (wanted + largest_ - 1) / largest_;
  return std::clamp<std::size_t>(static_cast<std::size_t>(nodes), 1, nodes_.size());
}

int ResourcePool::slots_needed(const select::ResolvedSettings& settings) const {
  const int wanted = std::max(settings.ranks, settings.slots);
  if (placing_) {
    // The same on each node it spans, at most what the largest node has.
    const auto spanned = static_cast<int>(nodes_spanned(settings));
    return std::clamp((wanted + spanned - 1) / spanned, 1, largest_) * spanned;
  }
  if (!settings.ranks_run_here()) return 1;  // srun's, while the cluster runs the ranks
  return std::clamp(wanted, 1, total_slots_);
}

std::optional<std::vector<std::size_t>> ResourcePool::pick_nodes(
    int per_node, std::map<std::string, int>& devices, std::size_t count) const {
  const auto has = [&](const std::map<std::string, int>& held) {
    return std::all_of(devices.begin(), devices.end(), [&](const auto& need) {
      const auto it = held.find(need.first);
      return it != held.end() && it->second >= need.second;
    });
  };
  std::size_t ever = 0;
  for (const auto& node : nodes_) ever += has(node.devices) ? 1 : 0;
  if (ever < count) devices.clear();  // never here: Slurm's to refuse
  std::vector<std::size_t> fitting;
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (static_cast<int>(nodes_[k].free.size()) >= per_node && has(nodes_[k].free_devices))
      fitting.push_back(k);
  if (fitting.size() < count) return std::nullopt;
  std::stable_sort(fitting.begin(), fitting.end(), [&](std::size_t a, std::size_t b) {
    return nodes_[a].free.size() < nodes_[b].free.size();
  });
  fitting.resize(count);
  std::sort(fitting.begin(), fitting.end());
  return fitting;
}

std::optional<Grant> ResourcePool::try_acquire(const select::ResolvedSettings& settings,
                                               Shortage& shortage) {
  shortage = Shortage::busy;
  const int slots = slots_needed(settings);
  const std::size_t spanned = placing_ ? nodes_spanned(settings) : 1;
  const int per_node = slots / static_cast<int>(spanned);
  // Inside an allocation, each node's share of the test's devices.
  std::map<std::string, int> node_devices;
  if (placing_)
    for (const auto& [kind, count] : settings.cluster_devices)
      node_devices[kind] = (count + static_cast<int>(spanned) - 1) / static_cast<int>(spanned);
  // One machine: its only node, whole.
  const auto picked = placing_ ? pick_nodes(per_node, node_devices, spanned)
                               : (static_cast<int>(nodes_.front().free.size()) >= slots
                                      ? std::optional(std::vector<std::size_t>{0})
                                      : std::nullopt);
  if (!picked) return std::nullopt;
  for (const auto& [kind, count] : settings.devices) {
    const auto it = free_devices_.find(kind);
    if (it == free_devices_.end() || static_cast<int>(it->second.size()) < count)
      return std::nullopt;
  }
  const auto port = ports_.acquire();
  if (!port) {
    shortage = Shortage::no_port;
    return std::nullopt;
  }
  Grant grant;
  grant.port = *port;
  for (const auto k : *picked) {
    auto& node = nodes_[k];
    if (placing_) grant.nodes.push_back(node.name);
    for (const auto& [kind, count] : node_devices) {
      node.free_devices[kind] -= count;
      grant.node_devices[node.name][kind] = count;
    }
    for (int i = 0; i < (placing_ ? per_node : slots); ++i) {
      grant.slots.push_back(*node.free.begin());
      node.free.erase(node.free.begin());
    }
  }
  for (const auto& [kind, count] : settings.devices) {
    auto& free = free_devices_[kind];
    grant.devices[kind].assign(free.begin(), free.begin() + count);
    free.erase(free.begin(), free.begin() + count);
  }
  shortage = Shortage::none;
  return grant;
}

void ResourcePool::release(const Grant& grant) {
  for (int slot : grant.slots)
    for (auto& node : nodes_)
      if (slot >= node.first && slot < node.first + node.slots) node.free.insert(slot);
  for (const auto& [name, devices] : grant.node_devices)
    for (auto& node : nodes_)
      if (node.name == name)
        for (const auto& [kind, count] : devices) node.free_devices[kind] += count;
  for (const auto& [kind, ids] : grant.devices) {
    // Back in inventory order, so grants stay predictable.
    auto& free = free_devices_[kind];
    free.insert(free.end(), ids.begin(), ids.end());
    const auto& order = inventory_[kind];
    std::sort(free.begin(), free.end(), [&](const auto& a, const auto& b) {
      return std::find(order.begin(), order.end(), a) <
             std::find(order.begin(), order.end(), b);
    });
  }
  if (grant.port) ports_.release(grant.port);
}

}  // namespace ranktest::schedule
