#include "launchers/rank_identity.h"

#include <fmt/format.h>

#include <cstdlib>

#include "launchers/host_lists.h"
#include "text/word_list.h"

namespace ranktest::launchers {
namespace {

// A launcher that is none of ranktest's but speaks PMI (MPICH's hydra,
// Intel MPI): its variables come after every LauncherKind's.
const IdentityVariables& pmi_variables() {
  static const IdentityVariables variables{
      {"PMI_RANK"}, {"PMI_SIZE"}, {"MPI_LOCALRANKID"}, local_world_in("MPI_LOCALNRANKS"), {}};
  return variables;
}

std::vector<const IdentityVariables*> every_launchers_variables() {
  std::vector<const IdentityVariables*> all;
  for (const auto* kind : launcher_kinds()) all.push_back(&kind->identity_variables());
  all.push_back(&pmi_variables());
  return all;
}

// The first variable of `member` (over every launcher, in order) that is
// set, as a number.
Expected<std::optional<int>> first_number(const EnvironmentLookup& lookup,
                                          std::vector<const char*> IdentityVariables::*member) {
  for (const auto* variables : every_launchers_variables())
    for (const char* name : variables->*member)
      if (const auto value = lookup(name)) {
        if (const auto parsed = whole_number(*value)) return std::optional<int>(*parsed);
        return Error{fmt::format("{}={} is not a number", name, *value)};
      }
  return std::optional<int>();
}

// Every launcher's variables of `member`, for a message: "A, B, C".
std::string names_of(std::vector<const char*> IdentityVariables::*member) {
  std::string names;
  for (const auto* variables : every_launchers_variables())
    for (const char* name : variables->*member)
      names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  return names;
}

}  // namespace

EnvironmentLookup own_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

std::function<std::optional<std::optional<int>>(const EnvironmentLookup&)> local_world_in(
    const char* variable) {
  return [variable](const EnvironmentLookup& lookup) -> std::optional<std::optional<int>> {
    const auto count = lookup(variable);
    if (!count) return std::nullopt;
    return whole_number(*count);
  };
}

Expected<RankIdentity> rank_identity(const EnvironmentLookup& lookup) {
  RankIdentity identity;
  const auto rank = first_number(lookup, &IdentityVariables::rank);
  const auto world = first_number(lookup, &IdentityVariables::world);
  const auto local_rank = first_number(lookup, &IdentityVariables::local_rank);
  for (const auto* value : {&rank, &world, &local_rank})
    if (!*value) return value->error();
  if (!rank->has_value() || !world->has_value()) {
    std::vector<std::string> launchers;
    for (const auto* kind : launcher_kinds()) launchers.emplace_back(kind->default_command());
    return Error{fmt::format(
        "not started by a launcher: none of {} (with {}) is set; ranktest-rank is started by "
        "{} for ranktest, not by hand",
        names_of(&IdentityVariables::rank), names_of(&IdentityVariables::world),
        text::word_list(launchers))};
  }
  identity.rank = **rank;
  identity.world = **world;
  if (identity.rank >= identity.world)
    return Error{fmt::format("rank {} of a world of {}", identity.rank, identity.world)};
  identity.local_rank = local_rank->value_or(identity.rank);
  identity.local_world = identity.world;
  // The first launcher whose variable for it is set says how many ranks
  // run on this node (one set but unreadable leaves the whole world).
  for (const auto* variables : every_launchers_variables())
    if (const auto said = variables->local_world(lookup)) {
      identity.local_world = said->value_or(identity.world);
      break;
    }
  identity.several_nodes = identity.local_world < identity.world;
  // The first host list set names where rank 0 runs.
  const auto first_node = [&]() -> std::string {
    for (const auto* variables : every_launchers_variables())
      for (const char* name : variables->node_list)
        if (const auto nodes = lookup(name)) return first_host_of(*nodes);
    return {};
  };
  identity.first_node = first_node();
  const auto node_index = first_number(lookup, &IdentityVariables::node_index);
  if (!node_index) return node_index.error();
  identity.node_index = *node_index;
  for (const auto* variables : every_launchers_variables())
    if (variables->job_step)
      if (auto step = variables->job_step(lookup)) {
        identity.job_step = std::move(*step);
        break;
      }
  return identity;
}

}  // namespace ranktest::launchers
