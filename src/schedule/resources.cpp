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
  for (int slot = 0; slot < total_slots_; ++slot) free_slots_.insert(slot);
}

int ResourcePool::slots_needed(const select::ResolvedSettings& settings) const {
  if (!settings.ranks_run_here()) return 1;  // srun's, while the cluster runs the ranks
  return std::clamp(std::max(settings.ranks, settings.slots), 1, total_slots_);
}

std::optional<Grant> ResourcePool::try_acquire(const select::ResolvedSettings& settings,
                                               Shortage& shortage) {
  shortage = Shortage::busy;
  const int slots = slots_needed(settings);
  if (static_cast<int>(free_slots_.size()) < slots) return std::nullopt;
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
  for (int i = 0; i < slots; ++i) {
    grant.slots.push_back(*free_slots_.begin());
    free_slots_.erase(free_slots_.begin());
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
  for (int slot : grant.slots) free_slots_.insert(slot);
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
