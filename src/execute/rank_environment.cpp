#include "execute/rank_environment.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace ranktest::execute {
namespace {

std::string join(const std::vector<std::string>& ids, const std::string& prefix = "") {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ",") + prefix + id;
  return out;
}

// How each framework is told which devices it may use.
void add_visibility(Environment& env, const std::string& kind,
                    const std::vector<std::string>& ids) {
  if (kind == "cuda") {
    env.emplace_back("CUDA_VISIBLE_DEVICES", join(ids));
  } else if (kind == "hip") {
    env.emplace_back("HIP_VISIBLE_DEVICES", join(ids));
    env.emplace_back("ROCR_VISIBLE_DEVICES", join(ids));
  } else if (kind == "tpu") {
    env.emplace_back("TPU_VISIBLE_CHIPS", join(ids));
  } else if (kind == "cpu-sim") {
    // XLA's host platform pretends to have this many devices; keep any
    // other flags the user set.
    const char* existing = std::getenv("XLA_FLAGS");
    std::string flags = existing ? std::string(existing) + " " : "";
    flags += "--xla_force_host_platform_device_count=" + std::to_string(ids.size());
    env.emplace_back("XLA_FLAGS", flags);
  }
}

}  // namespace

std::vector<std::string> rank_share(const std::vector<std::string>& ids, int rank,
                                    int world) {
  if (world <= 1 || ids.empty() || ids.size() % static_cast<std::size_t>(world) != 0)
    return ids;
  const std::size_t share = ids.size() / static_cast<std::size_t>(world);
  const auto first = ids.begin() + static_cast<long>(share * static_cast<std::size_t>(rank));
  return {first, first + static_cast<long>(share)};
}

Environment rank_environment(const schedule::Grant& grant, int rank, int world, bool ranked,
                             const std::vector<std::string>& inventory_kinds) {
  Environment env;
  if (ranked) {
    env = {{"RANK", std::to_string(rank)},
           {"WORLD_SIZE", std::to_string(world)},
           {"LOCAL_RANK", std::to_string(rank)},
           {"LOCAL_WORLD_SIZE", std::to_string(world)},
           {"GROUP_RANK", "0"}};
  }
  // Every test has its own rendezvous address and port, ranked or not: a
  // framework that starts its own processes (Lightning's DDP, torch's
  // spawn) meets them there, never on another running test's port.
  env.emplace_back("MASTER_ADDR", "127.0.0.1");
  if (grant.port) env.emplace_back("MASTER_PORT", std::to_string(grant.port));
  std::set<std::string> kinds(inventory_kinds.begin(), inventory_kinds.end());
  for (const auto& [kind, ids] : grant.devices) kinds.insert(kind);
  std::string all;
  for (const auto& kind : kinds) {
    const auto it = grant.devices.find(kind);
    const auto share = it == grant.devices.end() ? std::vector<std::string>{}
                                                 : rank_share(it->second, rank, world);
    add_visibility(env, kind, share);
    const auto listed = join(share, kind + ":");
    if (!listed.empty()) all += (all.empty() ? "" : ",") + listed;
  }
  env.emplace_back("RANKTEST_DEVICES", all);
  return env;
}

}  // namespace ranktest::execute
