#include "execute/rank_identity.h"

#include <fmt/format.h>

#include <charconv>

namespace ranktest::execute {
namespace {

std::optional<int> number(std::string_view text) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

// The first of `names` that is set, as a number.
Expected<std::optional<int>> first_number(const EnvironmentLookup& lookup,
                                          std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const auto value = lookup(name)) {
      if (const auto parsed = number(*value)) return std::optional<int>(*parsed);
      return Error{fmt::format("{}={} is not a number", name, *value)};
    }
  return std::optional<int>();
}

}  // namespace

Expected<RankIdentity> rank_identity(const EnvironmentLookup& lookup) {
  RankIdentity identity;
  const auto rank = first_number(lookup, {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"});
  const auto world = first_number(lookup, {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS",
                                           "SLURM_NTASKS", "PMI_SIZE"});
  const auto local_rank =
      first_number(lookup, {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"});
  for (const auto* value : {&rank, &world, &local_rank})
    if (!*value) return value->error();
  if (!rank->has_value() || !world->has_value())
    return Error{
        "not started by a launcher: none of OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK "
        "(with OMPI_COMM_WORLD_SIZE, SLURM_NTASKS, PMI_SIZE) is set; ranktest-rank is "
        "started by mpirun or srun for ranktest, not by hand"};
  identity.rank = **rank;
  identity.world = **world;
  if (identity.rank >= identity.world)
    return Error{fmt::format("rank {} of a world of {}", identity.rank, identity.world)};
  identity.local_rank = local_rank->value_or(identity.rank);
  identity.local_world = identity.world;
  if (const auto size = lookup("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    identity.local_world = number(*size).value_or(identity.world);
  } else if (const auto per_node = lookup("SLURM_STEP_TASKS_PER_NODE")) {
    const auto node = lookup("SLURM_NODEID");
    if (auto tasks = tasks_on_node(*per_node, node ? number(*node).value_or(0) : 0))
      identity.local_world = *tasks;
  } else if (const auto size = lookup("MPI_LOCALNRANKS")) {
    identity.local_world = number(*size).value_or(identity.world);
  }
  identity.several_nodes = identity.local_world < identity.world;
  if (const auto nodes = lookup("SLURM_STEP_NODELIST")) identity.first_node = first_host_of(*nodes);
  else if (const auto nodes = lookup("SLURM_JOB_NODELIST")) identity.first_node = first_host_of(*nodes);
  return identity;
}

std::string first_host_of(std::string_view host_list) {
  const auto comma = host_list.find(',');
  const auto bracket = host_list.find('[');
  if (bracket == std::string_view::npos || (comma != std::string_view::npos && comma < bracket))
    return std::string(host_list.substr(0, comma));
  // prefix[07-09,12]suffix: the prefix, the first number of the range as
  // written (its zero padding kept), then what follows the brackets.
  const auto close = host_list.find(']', bracket);
  const auto inside = host_list.substr(bracket + 1, close == std::string_view::npos
                                                        ? std::string_view::npos
                                                        : close - bracket - 1);
  const auto first = inside.substr(0, inside.find_first_of("-,"));
  std::string host(host_list.substr(0, bracket));
  host += first;
  if (close != std::string_view::npos) {
    const auto rest = host_list.substr(close + 1);
    host += rest.substr(0, rest.find(','));
  }
  return host;
}

std::optional<int> tasks_on_node(std::string_view tasks_per_node, int node) {
  int seen = 0;
  while (!tasks_per_node.empty()) {
    const auto item = tasks_per_node.substr(0, tasks_per_node.find(','));
    tasks_per_node.remove_prefix(std::min(tasks_per_node.size(), item.size() + 1));
    const auto paren = item.find("(x");
    const auto tasks = number(item.substr(0, paren));
    if (!tasks) return std::nullopt;
    int repeat = 1;
    if (paren != std::string_view::npos) {
      const auto count = item.substr(paren + 2, item.size() - paren - 3);
      if (!item.ends_with(")") || !number(count)) return std::nullopt;
      repeat = *number(count);
    }
    if (node < seen + repeat) return *tasks;
    seen += repeat;
  }
  return std::nullopt;
}

}  // namespace ranktest::execute
